package interpodaffinity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const badValueErr = `values[0][service]: Invalid value: "{{.bad-value.}}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`

func inExpr(key string, vals ...string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: key, Operator: metav1.LabelSelectorOpIn, Values: vals}}}
}

// Ported from kube's TestRequiredAffinitySingleNode.
func TestRequiredAffinitySingleNode(t *testing.T) {
	podLabel := map[string]string{"service": "securityscan"}
	pod := makePod().Labels(podLabel).Node("node1").Obj()
	labels1 := map[string]string{"region": "r1", "zone": "z11"}
	podLabel2 := map[string]string{"security": "S1"}
	node1 := node("node1", labels1)
	team1 := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn, Values: []string{"team1"}}}}

	tests := []struct {
		name          string
		pod           *v1.Pod
		pods          []*v1.Pod
		wantPreFilter result
		wantFilter    result
	}{
		{
			name:          "A pod that has no required pod affinity scheduling rules can schedule onto a node with no existing pods",
			pod:           new(v1.Pod),
			wantPreFilter: skip,
		},
		{
			name: "satisfies with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using In operator that matches the existing pod",
			pod:  makePod().Labels(podLabel2).PodAffinityIn("service", "region", []string{"securityscan", "value2"}).Obj(),
			pods: []*v1.Pod{pod},
		},
		{
			name: "satisfies the pod with requiredDuringSchedulingIgnoredDuringExecution in PodAffinity using not in operator in labelSelector that matches the existing pod",
			pod:  makePod().Labels(podLabel2).PodAffinityNotIn("service", "region", []string{"securityscan3", "value3"}).Obj(),
			pods: []*v1.Pod{pod},
		},
		{
			name: "Does not satisfy the PodAffinity with labelSelector because of diff Namespace",
			pod: podWithTerms("", "", podLabel2, []v1.PodAffinityTerm{
				{LabelSelector: inExpr("service", "securityscan", "value2"), Namespaces: []string{"DiffNameSpace"}},
			}, nil),
			pods:       []*v1.Pod{makePod().Namespace("ns").Label("service", "securityscan").Node("node1").Obj()},
			wantFilter: affFail,
		},
		{
			name:       "Doesn't satisfy the PodAffinity because of unmatching labelSelector with the existing pod",
			pod:        makePod().Labels(podLabel).PodAffinityIn("service", "", []string{"antivirusscan", "value2"}).Obj(),
			pods:       []*v1.Pod{pod},
			wantFilter: affFail,
		},
		{
			name: "satisfies the PodAffinity with different label Operators in multiple RequiredDuringSchedulingIgnoredDuringExecution ",
			pod: podWithTerms("", "", podLabel2, []v1.PodAffinityTerm{
				{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "service", Operator: metav1.LabelSelectorOpExists},
					{Key: "wrongkey", Operator: metav1.LabelSelectorOpDoesNotExist},
				}}, TopologyKey: "region"},
				{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "service", Operator: metav1.LabelSelectorOpIn, Values: []string{"securityscan"}},
					{Key: "service", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"WrongValue"}},
				}}, TopologyKey: "region"},
			}, nil),
			pods: []*v1.Pod{pod},
		},
		{
			name: "The labelSelector requirements(items of matchExpressions) are ANDed, the pod cannot schedule onto the node because one of the matchExpression item don't match.",
			pod: podWithTerms("", "", podLabel2, []v1.PodAffinityTerm{
				{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "service", Operator: metav1.LabelSelectorOpExists},
					{Key: "wrongkey", Operator: metav1.LabelSelectorOpDoesNotExist},
				}}, TopologyKey: "region"},
				{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "service", Operator: metav1.LabelSelectorOpIn, Values: []string{"securityscan2"}},
					{Key: "service", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"WrongValue"}},
				}}, TopologyKey: "region"},
			}, nil),
			pods:       []*v1.Pod{pod},
			wantFilter: affFail,
		},
		{
			name: "satisfies the PodAffinity and PodAntiAffinity with the existing pod",
			pod: makePod().Labels(podLabel2).PodAffinityIn("service", "region", []string{"securityscan", "value2"}).
				PodAntiAffinityIn("service", "node", []string{"antivirusscan", "value2"}).Obj(),
			pods: []*v1.Pod{pod},
		},
		{
			name: "satisfies the PodAffinity and PodAntiAffinity and PodAntiAffinity symmetry with the existing pod",
			pod: makePod().Labels(podLabel2).PodAffinityIn("service", "region", []string{"securityscan", "value2"}).
				PodAntiAffinityIn("service", "node", []string{"antivirusscan", "value2"}).Obj(),
			pods: []*v1.Pod{makePod().Node("node1").Labels(podLabel).PodAntiAffinityIn("service", "node", []string{"antivirusscan", "value2"}).Obj()},
		},
		{
			name: "satisfies the PodAffinity but doesn't satisfy the PodAntiAffinity with the existing pod",
			pod: makePod().Labels(podLabel2).PodAffinityIn("service", "region", []string{"securityscan", "value2"}).
				PodAntiAffinityIn("service", "zone", []string{"securityscan", "value2"}).Obj(),
			pods:       []*v1.Pod{pod},
			wantFilter: antiFail,
		},
		{
			name: "satisfies the PodAffinity and PodAntiAffinity but doesn't satisfy PodAntiAffinity symmetry with the existing pod",
			pod: makePod().Labels(podLabel).PodAffinityIn("service", "region", []string{"securityscan", "value2"}).
				PodAntiAffinityIn("service", "node", []string{"antivirusscan", "value2"}).Obj(),
			pods:       []*v1.Pod{makePod().Labels(podLabel).Node("node1").PodAntiAffinityIn("service", "zone", []string{"securityscan", "value2"}).Obj()},
			wantFilter: existFail,
		},
		{
			name:       "pod matches its own Label in PodAffinity and that matches the existing pod Labels",
			pod:        makePod().Labels(podLabel).PodAffinityNotIn("service", "region", []string{"securityscan", "value2"}).Obj(),
			pods:       []*v1.Pod{makePod().Label("service", "securityscan").Node("node2").Obj()},
			wantFilter: affFail,
		},
		{
			name:       "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. doesn't satisfy PodAntiAffinity symmetry with the existing pod",
			pod:        makePod().Labels(podLabel).Obj(),
			pods:       []*v1.Pod{makePod().Node("node1").Labels(podLabel).PodAntiAffinityIn("service", "zone", []string{"securityscan", "value2"}).Obj()},
			wantFilter: existFail,
		},
		{
			name:          "verify that PodAntiAffinity from existing pod is respected when pod has no AntiAffinity constraints. satisfy PodAntiAffinity symmetry with the existing pod",
			pod:           makePod().Labels(podLabel).Obj(),
			pods:          []*v1.Pod{makePod().Node("node1").Labels(podLabel).PodAntiAffinityNotIn("service", "zone", []string{"securityscan", "value2"}).Obj()},
			wantPreFilter: skip,
		},
		{
			name: "satisfies the PodAntiAffinity with existing pod but doesn't satisfy PodAntiAffinity symmetry with incoming pod",
			pod: makePod().Labels(podLabel).PodAntiAffinityExists("service", "region").
				PodAntiAffinityExists("security", "region").Obj(),
			pods:       []*v1.Pod{makePod().Node("node1").Labels(podLabel2).PodAntiAffinityExists("security", "zone").Obj()},
			wantFilter: antiFail,
		},
		{
			name: "PodAntiAffinity symmetry check a1: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: makePod().Labels(podLabel).PodAntiAffinityExists("service", "zone").
				PodAntiAffinityExists("security", "zone").Obj(),
			pods:       []*v1.Pod{makePod().Node("node1").Labels(podLabel2).PodAntiAffinityExists("security", "zone").Obj()},
			wantFilter: antiFail,
		},
		{
			name: "PodAntiAffinity symmetry check a2: incoming pod and existing pod partially match each other on AffinityTerms",
			pod:  makePod().Labels(podLabel2).PodAntiAffinityExists("security", "zone").Obj(),
			pods: []*v1.Pod{makePod().Node("node1").Labels(podLabel).PodAntiAffinityExists("service", "zone").
				PodAntiAffinityExists("security", "zone").Obj()},
			wantFilter: existFail,
		},
		{
			name: "PodAntiAffinity symmetry check b1: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: makePod().Labels(map[string]string{"abc": "", "xyz": ""}).PodAntiAffinityExists("abc", "zone").
				PodAntiAffinityExists("def", "zone").Obj(),
			pods: []*v1.Pod{makePod().Node("node1").Labels(map[string]string{"def": "", "xyz": ""}).PodAntiAffinityExists("abc", "zone").
				PodAntiAffinityExists("def", "zone").Obj()},
			wantFilter: antiFail,
		},
		{
			name: "PodAntiAffinity symmetry check b2: incoming pod and existing pod partially match each other on AffinityTerms",
			pod: makePod().Labels(map[string]string{"def": "", "xyz": ""}).PodAntiAffinityExists("abc", "zone").
				PodAntiAffinityExists("def", "zone").Obj(),
			pods: []*v1.Pod{makePod().Node("node1").Labels(map[string]string{"abc": "", "xyz": ""}).PodAntiAffinityExists("abc", "zone").
				PodAntiAffinityExists("def", "zone").Obj()},
			wantFilter: antiFail,
		},
		{
			name: "PodAffinity fails PreFilter with an invalid affinity label syntax",
			pod: makePod().Labels(podLabel).PodAffinityIn("service", "region", []string{"{{.bad-value.}}"}).
				PodAffinityIn("service", "node", []string{"antivirusscan", "value2"}).Obj(),
			wantPreFilter: want(schedcore.UnschedulableAndUnresolvable, "parsing pod: requiredAffinityTerms: "+badValueErr),
		},
		{
			name: "PodAntiAffinity fails PreFilter with an invalid antiaffinity label syntax",
			pod: makePod().Labels(podLabel).PodAffinityIn("service", "region", []string{"foo"}).
				PodAffinityIn("service", "node", []string{"{{.bad-value.}}"}).Obj(),
			wantPreFilter: want(schedcore.UnschedulableAndUnresolvable, "parsing pod: requiredAffinityTerms: "+badValueErr),
		},
		{
			name: "affinity with NamespaceSelector",
			pod: podWithTerms("", "", podLabel2, []v1.PodAffinityTerm{
				{LabelSelector: inExpr("service", "securityscan", "value2"), NamespaceSelector: team1, TopologyKey: "region"},
			}, nil),
			pods: []*v1.Pod{{Spec: v1.PodSpec{NodeName: "node1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "subteam1.team1", Labels: podLabel}}},
		},
		{
			name: "affinity with non-matching NamespaceSelector",
			pod: podWithTerms("", "", podLabel2, []v1.PodAffinityTerm{
				{LabelSelector: inExpr("service", "securityscan", "value2"), NamespaceSelector: team1, TopologyKey: "region"},
			}, nil),
			pods:       []*v1.Pod{{Spec: v1.PodSpec{NodeName: "node1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "subteam1.team2", Labels: podLabel}}},
			wantFilter: affFail,
		},
		{
			name: "anti-affinity with matching NamespaceSelector",
			pod: podWithTerms("subteam1.team1", "", podLabel2, nil, []v1.PodAffinityTerm{
				{LabelSelector: inExpr("service", "securityscan", "value2"), NamespaceSelector: team1, TopologyKey: "zone"},
			}),
			pods:       []*v1.Pod{{Spec: v1.PodSpec{NodeName: "node1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "subteam2.team1", Labels: podLabel}}},
			wantFilter: antiFail,
		},
		{
			name: "anti-affinity with matching all NamespaceSelector",
			pod: podWithTerms("subteam1.team1", "", podLabel2, nil, []v1.PodAffinityTerm{
				{LabelSelector: inExpr("service", "securityscan", "value2"), NamespaceSelector: &metav1.LabelSelector{}, TopologyKey: "zone"},
			}),
			pods:       []*v1.Pod{{Spec: v1.PodSpec{NodeName: "node1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "subteam2.team1", Labels: podLabel}}},
			wantFilter: antiFail,
		},
		{
			name: "anti-affinity with non-matching NamespaceSelector",
			pod: podWithTerms("subteam1.team1", "", podLabel2, nil, []v1.PodAffinityTerm{
				{LabelSelector: inExpr("service", "securityscan", "value2"), NamespaceSelector: team1, TopologyKey: "zone"},
			}),
			pods: []*v1.Pod{{Spec: v1.PodSpec{NodeName: "node1"}, ObjectMeta: metav1.ObjectMeta{Namespace: "subteam1.team2", Labels: podLabel}}},
		},
		// Not in kube's table: kube's NewPodInfo aggregates one error per
		// term list, in this order, and preferred terms fail PreFilter too.
		{
			name: "a pod whose preferred affinity and required anti-affinity both fail to parse gets both errors, required first",
			pod: makePod().Affinity(&v1.Affinity{
				PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
					{Weight: 1, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: inExpr("service", "{{.bad-value.}}"), TopologyKey: "zone"}},
				}},
				PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
					{LabelSelector: inExpr("service", "{{.bad-value.}}"), TopologyKey: "zone"},
				}},
			}).Obj(),
			wantPreFilter: want(schedcore.UnschedulableAndUnresolvable,
				"parsing pod: [requiredAntiAffinityTerms: "+badValueErr+", preferredAffinityTerms: "+badValueErr+"]"),
		},
	}

	for _, fp := range fastPathOpt {
		for _, tt := range tests {
			for _, maps := range []bool{false, true} {
				t.Run(fastPathName(tt.name, fp)+mapsName(maps), func(t *testing.T) {
					snap := newSnapshot(tt.pods, []*v1.Node{node1}, testNamespaces)
					p := newPlugin(t, nil, snap, fp)
					state := schedcore.NewCycleState()
					_, s := p.PreFilter(context.Background(), state, tt.pod, nodeList(snap, maps))
					if diff := cmp.Diff(tt.wantPreFilter, res(s)); diff != "" {
						t.Fatalf("PreFilter status (-want +got):\n%s", diff)
					}
					if !s.IsSuccess() {
						return
					}
					ni, err := snap.Get("node1")
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(tt.wantFilter, res(p.Filter(context.Background(), state, tt.pod, ni))); diff != "" {
						t.Errorf("Filter status (-want +got):\n%s", diff)
					}
				})
			}
		}
	}
}

// Ported from kube's TestRequiredAffinityMultipleNodes.
func TestRequiredAffinityMultipleNodes(t *testing.T) {
	podLabelA := map[string]string{"foo": "bar"}
	labelRgChina := map[string]string{"region": "China"}
	labelRgChinaAzAz1 := map[string]string{"region": "China", "az": "az1"}
	labelRgIndia := map[string]string{"region": "India"}
	hostA := map[string]string{v1.LabelHostname: "nodeA"}
	hostB := map[string]string{v1.LabelHostname: "nodeB"}

	tests := []struct {
		name          string
		pod           *v1.Pod
		pods          []*v1.Pod
		nodes         []*v1.Node
		wantPreFilter result
		wantFilter    []result
	}{
		{
			name:       "A pod can be scheduled onto all the nodes that have the same topology key & label value with one of them has an existing pod that matches the affinity rules",
			pod:        makePod().PodAffinityIn("foo", "region", []string{"bar"}).Obj(),
			pods:       []*v1.Pod{makePod().Name("p1").Node("node1").Labels(podLabelA).Obj()},
			nodes:      []*v1.Node{node("node1", labelRgChina), node("node2", labelRgChinaAzAz1), node("node3", labelRgIndia)},
			wantFilter: []result{ok, ok, affFail},
		},
		{
			name: "The affinity rule is to schedule all of the pods of this collection to the same zone. The first pod of the collection " +
				"should not be blocked from being scheduled onto any node, even there's no existing pod that matches the rule anywhere.",
			pod: makePod().Labels(map[string]string{"foo": "bar", "service": "securityscan"}).
				PodAffinityIn("foo", "zone", []string{"bar"}).PodAffinityIn("service", "zone", []string{"securityscan"}).Obj(),
			pods:       []*v1.Pod{makePod().Name("p1").Node("nodeA").Labels(map[string]string{"foo": "bar"}).Obj()},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"zone": "az1", "hostname": "h1"}), node("nodeB", map[string]string{"zone": "az2", "hostname": "h2"})},
			wantFilter: []result{ok, ok},
		},
		{
			name: "The first pod of the collection can only be scheduled on nodes labelled with the requested topology keys",
			pod: makePod().Labels(map[string]string{"foo": "bar", "service": "securityscan"}).
				PodAffinityIn("foo", "zone", []string{"bar"}).PodAffinityIn("service", "zone", []string{"securityscan"}).Obj(),
			pods:       []*v1.Pod{makePod().Name("p1").Node("nodeA").Labels(map[string]string{"foo": "bar"}).Obj()},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"zoneLabel": "az1", "hostname": "h1"}), node("nodeB", map[string]string{"zoneLabel": "az2", "hostname": "h2"})},
			wantFilter: []result{affFail, affFail},
		},
		{
			name:       "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB.",
			pod:        makePod().PodAntiAffinityIn("foo", "region", []string{"abc"}).Obj(),
			pods:       []*v1.Pod{makePod().Node("nodeA").Labels(map[string]string{"foo": "abc"}).Obj()},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "hostname": "nodeB"})},
			wantFilter: []result{antiFail, antiFail},
		},
		{
			name: "This test ensures that anti-affinity matches a pod when any term of the anti-affinity rule matches a pod.",
			pod: makePod().PodAntiAffinityIn("foo", "region", []string{"abc"}).
				PodAntiAffinityIn("service", "zone", []string{"securityscan"}).Obj(),
			pods:       []*v1.Pod{makePod().Node("nodeA").Labels(map[string]string{"foo": "abc", "service": "securityscan"}).Obj()},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z2", "hostname": "nodeB"})},
			wantFilter: []result{antiFail, antiFail},
		},
		{
			name:       "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA and nodeB but can be scheduled onto nodeC",
			pod:        makePod().PodAntiAffinityIn("foo", "region", []string{"abc"}).Obj(),
			pods:       []*v1.Pod{makePod().Node("nodeA").Labels(map[string]string{"foo": "abc"}).Obj()},
			nodes:      []*v1.Node{node("nodeA", labelRgChina), node("nodeB", labelRgChinaAzAz1), node("nodeC", labelRgIndia)},
			wantFilter: []result{antiFail, antiFail, ok},
		},
		{
			name: "NodeA and nodeB have same topologyKey and label value. NodeA has an existing pod that matches the inter pod affinity rule. The pod can not be scheduled onto nodeA, nodeB, but can be scheduled onto nodeC (NodeC has an existing pod that match the inter pod affinity rule but in different namespace)",
			pod:  makePod().Namespace("NS1").Labels(map[string]string{"foo": "123"}).PodAntiAffinityIn("foo", "region", []string{"bar"}).Obj(),
			pods: []*v1.Pod{
				makePod().Node("nodeA").Namespace("NS1").Labels(map[string]string{"foo": "bar"}).Obj(),
				makePod().Node("nodeC").Namespace("NS2").PodAntiAffinityIn("foo", "region", []string{"123"}).Obj(),
			},
			nodes:      []*v1.Node{node("nodeA", labelRgChina), node("nodeB", labelRgChinaAzAz1), node("nodeC", labelRgIndia)},
			wantFilter: []result{antiFail, antiFail, ok},
		},
		{
			name:          "Test existing pod's anti-affinity: if an existing pod has a term with invalid topologyKey, labelSelector of the term is firstly checked, and then topologyKey of the term is also checked",
			pod:           makePod().Label("foo", "").Obj(),
			pods:          []*v1.Pod{makePod().Node("nodeA").PodAntiAffinityExists("foo", "invalid-node-label").Obj()},
			nodes:         []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeB"})},
			wantPreFilter: skip,
		},
		{
			name:       "Test incoming pod's anti-affinity: even if labelSelector matches, we still check if topologyKey matches",
			pod:        makePod().Node("nodeA").PodAntiAffinityExists("foo", "invalid-node-label").Obj(),
			pods:       []*v1.Pod{makePod().Node("nodeA").Labels(map[string]string{"foo": ""}).Obj()},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeB"})},
			wantFilter: []result{ok, ok},
		},
		{
			name: "Test existing pod's anti-affinity: incoming pod wouldn't considered as a fit as it violates each existingPod's terms on all nodes",
			pod:  makePod().Label("foo", "").Label("bar", "").Obj(),
			pods: []*v1.Pod{
				makePod().Node("nodeA").PodAntiAffinityExists("foo", "zone").Obj(),
				makePod().Node("nodeA").PodAntiAffinityExists("bar", "region").Obj(),
			},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z2", "hostname": "nodeB"})},
			wantFilter: []result{existFail, existFail},
		},
		{
			name: "Test incoming pod's anti-affinity: incoming pod wouldn't considered as a fit as it at least violates one anti-affinity rule of existingPod",
			pod:  makePod().PodAntiAffinityExists("foo", "zone").PodAntiAffinityExists("bar", "region").Obj(),
			pods: []*v1.Pod{
				makePod().Node("nodeA").Labels(map[string]string{"foo": ""}).Obj(),
				makePod().Node("nodeB").Labels(map[string]string{"bar": ""}).Obj(),
			},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z2", "hostname": "nodeB"})},
			wantFilter: []result{antiFail, antiFail},
		},
		{
			name:       "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
			pod:        makePod().Label("foo", "").Label("bar", "").Obj(),
			pods:       []*v1.Pod{makePod().Node("nodeA").PodAntiAffinityExists("foo", "invalid-node-label").PodAntiAffinityExists("bar", "zone").Obj()},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z2", "hostname": "nodeB"})},
			wantFilter: []result{existFail, ok},
		},
		{
			name:       "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when one term has invalid topologyKey",
			pod:        makePod().PodAntiAffinityExists("foo", "invalid-node-label").PodAntiAffinityExists("bar", "zone").Obj(),
			pods:       []*v1.Pod{makePod().Name("podA").Node("nodeA").Labels(map[string]string{"foo": "", "bar": ""}).Obj()},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z2", "hostname": "nodeB"})},
			wantFilter: []result{antiFail, ok},
		},
		{
			name:       "Test existing pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
			pod:        makePod().Label("foo", "").Label("bar", "").Obj(),
			pods:       []*v1.Pod{makePod().Node("nodeA").PodAntiAffinityExists("foo", "region").PodAntiAffinityExists("bar", "zone").Obj()},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z2", "hostname": "nodeB"})},
			wantFilter: []result{existFail, existFail},
		},
		{
			name:       "Test incoming pod's anti-affinity: only when labelSelector and topologyKey both match, it's counted as a single term match - case when all terms have valid topologyKey",
			pod:        makePod().PodAntiAffinityExists("foo", "region").PodAntiAffinityExists("bar", "zone").Obj(),
			pods:       []*v1.Pod{makePod().Node("nodeA").Labels(map[string]string{"foo": "", "bar": ""}).Obj()},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z2", "hostname": "nodeB"})},
			wantFilter: []result{antiFail, antiFail},
		},
		{
			name: "Test existing pod's anti-affinity: existingPod on nodeA and nodeB has at least one anti-affinity term matches incoming pod, so incoming pod can only be scheduled to nodeC",
			pod:  makePod().Label("foo", "").Label("bar", "").Obj(),
			pods: []*v1.Pod{
				makePod().Node("nodeA").PodAntiAffinityExists("foo", "zone").PodAntiAffinityExists("labelA", "zone").Obj(),
				makePod().Node("nodeB").PodAntiAffinityExists("bar", "zone").PodAntiAffinityExists("labelB", "zone").Obj(),
			},
			nodes: []*v1.Node{
				node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}),
				node("nodeB", map[string]string{"region": "r1", "zone": "z2", "hostname": "nodeB"}),
				node("nodeC", map[string]string{"region": "r1", "zone": "z3", "hostname": "nodeC"}),
			},
			wantFilter: []result{existFail, existFail, ok},
		},
		{
			name:       "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match",
			pod:        makePod().PodAffinityExists("foo", "region").PodAffinityExists("bar", "zone").Obj(),
			pods:       []*v1.Pod{makePod().Name("pod1").Labels(map[string]string{"foo": "", "bar": ""}).Node("nodeA").Obj()},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeB"})},
			wantFilter: []result{ok, ok},
		},
		{
			name: "Test incoming pod's affinity: firstly check if all affinityTerms match, and then check if all topologyKeys match, and the match logic should be satisfied on the same pod",
			pod:  makePod().PodAffinityExists("foo", "region").PodAffinityExists("bar", "zone").Obj(),
			pods: []*v1.Pod{
				makePod().Node("nodeA").Name("pod1").Labels(map[string]string{"foo": ""}).Obj(),
				makePod().Node("nodeB").Name("pod2").Labels(map[string]string{"bar": ""}).Obj(),
			},
			nodes:      []*v1.Node{node("nodeA", map[string]string{"region": "r1", "zone": "z1", "hostname": "nodeA"}), node("nodeB", map[string]string{"region": "r1", "zone": "z2", "hostname": "nodeB"})},
			wantFilter: []result{affFail, affFail},
		},
		{
			name:       "Test incoming pod's host-scoped affinity (fast path)",
			pod:        makePod().PodAffinityExists("foo", v1.LabelHostname).Obj(),
			pods:       []*v1.Pod{makePod().Name("pod1").Labels(map[string]string{"foo": ""}).Node("nodeA").Obj()},
			nodes:      []*v1.Node{node("nodeA", hostA), node("nodeB", hostB)},
			wantFilter: []result{ok, affFail},
		},
		{
			name:       "Test incoming pod's host-scoped anti-affinity (fast path)",
			pod:        makePod().PodAntiAffinityExists("foo", v1.LabelHostname).Obj(),
			pods:       []*v1.Pod{makePod().Name("pod1").Labels(map[string]string{"foo": ""}).Node("nodeA").Obj()},
			nodes:      []*v1.Node{node("nodeA", hostA), node("nodeB", hostB)},
			wantFilter: []result{antiFail, ok},
		},
		// Not in kube's table.
		{
			name:       "An existing pod's hostname-scoped anti-affinity rejects only its own node",
			pod:        makePod().Label("foo", "").Obj(),
			pods:       []*v1.Pod{makePod().Name("pod1").Node("nodeA").PodAntiAffinityExists("foo", v1.LabelHostname).Obj()},
			nodes:      []*v1.Node{node("nodeA", hostA), node("nodeB", hostB)},
			wantFilter: []result{existFail, ok},
		},
	}

	for _, fp := range fastPathOpt {
		for _, tt := range tests {
			for _, maps := range []bool{false, true} {
				t.Run(fastPathName(tt.name, fp)+mapsName(maps), func(t *testing.T) {
					snap := newSnapshot(tt.pods, tt.nodes, []*v1.Namespace{namespace("NS1", nil)})
					p := newPlugin(t, nil, snap, fp)
					state := schedcore.NewCycleState()
					_, s := p.PreFilter(context.Background(), state, tt.pod, nodeList(snap, maps))
					if diff := cmp.Diff(tt.wantPreFilter, res(s)); diff != "" {
						t.Fatalf("PreFilter status (-want +got):\n%s", diff)
					}
					if s.IsSkip() {
						return
					}
					for i, n := range tt.nodes {
						ni, err := snap.Get(n.Name)
						if err != nil {
							t.Fatal(err)
						}
						if diff := cmp.Diff(tt.wantFilter[i], res(p.Filter(context.Background(), state, tt.pod, ni))); diff != "" {
							t.Errorf("Filter on %s (-want +got):\n%s", n.Name, diff)
						}
					}
				})
			}
		}
	}
}

func TestFilterWithoutPreFilterIsAnError(t *testing.T) {
	p := newPlugin(t, nil, schedcore.NewEmptySnapshot(), false)
	ni := schedcore.NewNodeInfo()
	ni.SetNode(&v1.Node{})
	got := res(p.Filter(context.Background(), schedcore.NewCycleState(), &v1.Pod{}, ni))
	if diff := cmp.Diff(want(schedcore.Error, `reading "PreFilterInterPodAffinity" from cycleState: not found`), got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFilterAndScoreDoNotAllocate(t *testing.T) {
	pod := makePod().Name("p").Label("app", "web").PodAffinityExists("app", "zone").PodAntiAffinityIn("app", v1.LabelHostname, []string{"db"}).Obj()
	pod.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = []v1.WeightedPodAffinityTerm{
		{Weight: 3, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: inExpr("app", "web"), TopologyKey: "zone"}},
	}
	pods := []*v1.Pod{
		makePod().Name("a").Node("nodeA").Label("app", "web").Obj(),
		makePod().Name("b").Node("nodeB").Label("app", "db").PodAntiAffinityExists("app", "zone").Obj(),
	}
	nodes := []*v1.Node{
		node("nodeA", map[string]string{v1.LabelHostname: "nodeA", "zone": "z1"}),
		node("nodeB", map[string]string{v1.LabelHostname: "nodeB", "zone": "z2"}),
	}
	for _, fp := range fastPathOpt {
		t.Run(fastPathName("", fp), func(t *testing.T) {
			ctx := context.Background()
			snap := newSnapshot(pods, nodes, nil)
			p := newPlugin(t, nil, snap, fp)
			cs := schedcore.NewCycleState()
			if _, s := p.PreFilter(ctx, cs, pod, snap.List()); !s.IsSuccess() {
				t.Fatal(s.Message())
			}
			if s := p.PreScore(ctx, cs, pod, snap.List()); !s.IsSuccess() {
				t.Fatal(s.Message())
			}
			ni, _ := snap.Get("nodeA")
			if s := p.Filter(ctx, cs, pod, ni); !s.IsSuccess() {
				t.Fatalf("Filter on nodeA: %v", s.Message())
			}
			if n := testing.AllocsPerRun(100, func() { p.Filter(ctx, cs, pod, ni) }); n != 0 {
				t.Errorf("Filter allocates %v times per call", n)
			}
			if n := testing.AllocsPerRun(100, func() { _, _ = p.Score(ctx, cs, pod, ni) }); n != 0 {
				t.Errorf("Score allocates %v times per call", n)
			}
		})
	}
}

// nodeList is the snapshot's list, or with maps a copy of it: PreFilter
// then counts nodes that are not the list, and Filter reads the count maps
// instead of the label columns (both must decide alike).
func nodeList(snap *schedcore.Snapshot, maps bool) []*schedcore.NodeInfo {
	if maps {
		return append([]*schedcore.NodeInfo(nil), snap.List()...)
	}
	return snap.List()
}

func mapsName(maps bool) string {
	if maps {
		return " (count maps)"
	}
	return ""
}
