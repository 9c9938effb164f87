package interpodaffinity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// topologyPair and topologyToMatchedTermCount are kube's form of the
// counts (per topology key and value), for comparing states.
type topologyPair struct{ key, value string }

type topologyToMatchedTermCount map[topologyPair]int64

// pairsOf is d's counts by topology pair, keys of the same name summed,
// without the zero counts (kube's maps delete them).
func pairsOf(d *schedcore.DomainCounts) topologyToMatchedTermCount {
	m := topologyToMatchedTermCount{}
	for k := 0; k < d.NumKeys(); k++ {
		d.ForEach(k, func(dom schedcore.Domain, n int64) {
			if n != 0 {
				m[topologyPair{key: d.KeyName(k), value: d.Value(k, dom)}] += n
			}
		})
	}
	return m
}

// counts is the part of preFilterState that AddPod/RemovePod change.
type counts struct {
	ExistingAnti, Affinity, Anti topologyToMatchedTermCount
	HostScopedMatches            int64
}

func countsOf(s *preFilterState) counts {
	return counts{ExistingAnti: pairsOf(s.existing), Affinity: pairsOf(s.affinity), Anti: pairsOf(s.anti), HostScopedMatches: s.matchingHostScopedAffinityPods}
}

var cmpPairs = cmp.AllowUnexported(topologyPair{})

// Ported from kube's TestPreFilterStateAddRemovePod.
func TestPreFilterStateAddRemovePod(t *testing.T) {
	label1 := map[string]string{"region": "r1", "zone": "z11"}
	label2 := map[string]string{"region": "r1", "zone": "z12"}
	label3 := map[string]string{"region": "r2", "zone": "z21"}
	selector1 := map[string]string{"foo": "bar"}
	fooBar := v1.PodAffinityTerm{LabelSelector: inExpr("foo", "bar"), TopologyKey: "region"}
	antiAffinityFooBar := &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{fooBar}}
	complexTerms := []v1.PodAffinityTerm{
		{LabelSelector: inExpr("foo", "bar", "buzz"), TopologyKey: "region"},
		{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "service", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"bar", "security", "test"}},
		}}, TopologyKey: "zone"},
	}
	antiAffinityComplex := &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: complexTerms}
	affinityComplex := &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: complexTerms}
	pod := func(name, nodeName string, labels map[string]string, a *v1.Affinity) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}, Spec: v1.PodSpec{NodeName: nodeName, Affinity: a}}
	}
	threeNodes := []*v1.Node{node("nodeA", label1), node("nodeB", label2), node("nodeC", label3)}

	tests := []struct {
		name             string
		pendingPod       *v1.Pod
		addedPod         *v1.Pod
		existingPods     []*v1.Pod
		nodes            []*v1.Node
		wantAntiAffinity topologyToMatchedTermCount
		wantAffinity     topologyToMatchedTermCount
	}{
		{
			name:       "preFilterState anti-affinity terms are updated correctly after adding and removing a pod",
			pendingPod: pod("pending", "", selector1, &v1.Affinity{PodAntiAffinity: antiAffinityFooBar}),
			existingPods: []*v1.Pod{
				pod("p1", "nodeA", selector1, nil),
				pod("p2", "nodeC", nil, &v1.Affinity{PodAntiAffinity: antiAffinityFooBar}),
			},
			addedPod:         pod("addedPod", "nodeB", selector1, &v1.Affinity{PodAntiAffinity: antiAffinityFooBar}),
			nodes:            threeNodes,
			wantAntiAffinity: topologyToMatchedTermCount{{key: "region", value: "r1"}: 2},
			wantAffinity:     topologyToMatchedTermCount{},
		},
		{
			name:       "preFilterState anti-affinity terms with a complex anti-affinity are updated correctly after adding and removing a pod",
			pendingPod: pod("pending", "", selector1, &v1.Affinity{PodAntiAffinity: antiAffinityComplex}),
			existingPods: []*v1.Pod{
				pod("p1", "nodeA", selector1, nil),
				pod("p2", "nodeC", nil, &v1.Affinity{PodAntiAffinity: antiAffinityFooBar}),
			},
			addedPod: pod("addedPod", "nodeA", selector1, &v1.Affinity{PodAntiAffinity: antiAffinityComplex}),
			nodes:    threeNodes,
			wantAntiAffinity: topologyToMatchedTermCount{
				{key: "region", value: "r1"}: 2,
				{key: "zone", value: "z11"}:  2,
				{key: "zone", value: "z21"}:  1,
			},
			wantAffinity: topologyToMatchedTermCount{},
		},
		{
			name:       "preFilterState matching pod affinity and anti-affinity are updated correctly after adding and removing a pod",
			pendingPod: pod("pending", "", selector1, &v1.Affinity{PodAffinity: affinityComplex}),
			existingPods: []*v1.Pod{
				pod("p1", "nodeA", selector1, nil),
				pod("p2", "nodeC", nil, &v1.Affinity{PodAntiAffinity: antiAffinityFooBar, PodAffinity: affinityComplex}),
			},
			addedPod:         pod("addedPod", "nodeA", selector1, &v1.Affinity{PodAntiAffinity: antiAffinityComplex}),
			nodes:            threeNodes,
			wantAntiAffinity: topologyToMatchedTermCount{},
			wantAffinity: topologyToMatchedTermCount{
				{key: "region", value: "r1"}: 2,
				{key: "zone", value: "z11"}:  2,
			},
		},
		{
			name:         "preFilterState anti-affinity terms with both hostname and non-hostname are updated correctly after adding and removing a pod",
			pendingPod:   pod("pending", "", selector1, &v1.Affinity{PodAntiAffinity: antiAffinityFooBar}),
			existingPods: []*v1.Pod{pod("p1", "nodeA", selector1, nil)},
			addedPod: pod("addedPod", "nodeA", selector1, &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{fooBar, {LabelSelector: inExpr("foo", "bar"), TopologyKey: v1.LabelHostname}},
			}}),
			nodes: []*v1.Node{
				node("nodeA", map[string]string{"region": "r1", "zone": "z11", v1.LabelHostname: "nodeA"}),
				node("nodeB", map[string]string{"region": "r1", "zone": "z12", v1.LabelHostname: "nodeB"}),
			},
			wantAntiAffinity: topologyToMatchedTermCount{{key: "region", value: "r1"}: 2},
			wantAffinity:     topologyToMatchedTermCount{},
		},
	}

	for _, fp := range fastPathOpt {
		for _, tt := range tests {
			t.Run(fastPathName(tt.name, fp), func(t *testing.T) {
				ctx := context.Background()
				getState := func(pods []*v1.Pod) (*InterPodAffinity, *schedcore.CycleState, *preFilterState, *schedcore.Snapshot) {
					snap := newSnapshot(pods, tt.nodes, nil)
					p := newPlugin(t, nil, snap, fp)
					cs := schedcore.NewCycleState()
					if _, s := p.PreFilter(ctx, cs, tt.pendingPod, snap.List()); !s.IsSuccess() {
						t.Fatalf("PreFilter: %v", s.Message())
					}
					st, err := schedcore.ReadAs[*preFilterState](cs, preFilterStateKey)
					if err != nil {
						t.Fatal(err)
					}
					return p, cs, st, snap
				}
				added := schedcore.NewPodInfo(tt.addedPod)

				_, _, allPodsState, _ := getState(append(append([]*v1.Pod(nil), tt.existingPods...), tt.addedPod))
				p, cs, st, snap := getState(tt.existingPods)
				original := st.Clone().(*preFilterState)

				ni, err := snap.Get(tt.addedPod.Spec.NodeName)
				if err != nil {
					t.Fatal(err)
				}
				if s := p.AddPod(ctx, cs, tt.pendingPod, added, ni); !s.IsSuccess() {
					t.Fatalf("AddPod: %v", s.Message())
				}
				if diff := cmp.Diff(tt.wantAntiAffinity, pairsOf(st.anti), cmpPairs); diff != "" {
					t.Errorf("anti-affinity counts after AddPod (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantAffinity, pairsOf(st.affinity), cmpPairs); diff != "" {
					t.Errorf("affinity counts after AddPod (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(countsOf(allPodsState), countsOf(st), cmpPairs); diff != "" {
					t.Errorf("state after AddPod differs from PreFilter over all pods (-want +got):\n%s", diff)
				}

				if s := p.RemovePod(ctx, cs, tt.pendingPod, added, ni); !s.IsSuccess() {
					t.Fatalf("RemovePod: %v", s.Message())
				}
				if diff := cmp.Diff(countsOf(original), countsOf(st), cmpPairs); diff != "" {
					t.Errorf("state after AddPod+RemovePod differs from the original (-want +got):\n%s", diff)
				}

				// RemovePod alone, from the state over all pods.
				p2, cs2, st2, snap2 := getState(append(append([]*v1.Pod(nil), tt.existingPods...), tt.addedPod))
				ni2, err := snap2.Get(tt.addedPod.Spec.NodeName)
				if err != nil {
					t.Fatal(err)
				}
				if s := p2.RemovePod(ctx, cs2, tt.pendingPod, added, ni2); !s.IsSuccess() {
					t.Fatalf("RemovePod: %v", s.Message())
				}
				if diff := cmp.Diff(countsOf(original), countsOf(st2), cmpPairs); diff != "" {
					t.Errorf("state after RemovePod differs from PreFilter without the pod (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestPreFilterStateCloneCopiesCounts(t *testing.T) {
	snap := newSnapshot(nil, []*v1.Node{node("node1", map[string]string{"name": "node1"}), node("node2", map[string]string{"name": "node2"})}, nil)
	n1, _ := snap.Get("node1")
	n2, _ := snap.Get("node2")
	source := &preFilterState{
		existing:                       schedcore.NewDomainCounts(snap, "name"),
		affinity:                       schedcore.NewDomainCounts(snap, "name"),
		anti:                           schedcore.NewDomainCounts(snap, "name"),
		matchingHostScopedAffinityPods: 4,
		fastPath:                       true,
	}
	for _, d := range []*schedcore.DomainCounts{source.existing, source.affinity, source.anti} {
		d.AddNode(0, n1, 1)
		d.AddNode(0, n2, 2)
	}
	clone := source.Clone().(*preFilterState)
	if clone == source {
		t.Fatal("Clone returned the same object")
	}
	if diff := cmp.Diff(countsOf(source), countsOf(clone), cmpPairs); diff != "" {
		t.Errorf("clone differs (-want +got):\n%s", diff)
	}
	want := countsOf(source)
	clone.updateWithPod(schedcore.NewPodInfo(&v1.Pod{}), n1, 1)
	for _, d := range []*schedcore.DomainCounts{clone.existing, clone.affinity, clone.anti} {
		d.AddNode(0, n1, 1)
	}
	if diff := cmp.Diff(want, countsOf(source), cmpPairs); diff != "" {
		t.Errorf("changing the clone's counts changed the source (-want +got):\n%s", diff)
	}
	if got := pairsOf(clone.anti)[topologyPair{key: "name", value: "node1"}]; got != 2 {
		t.Errorf("the clone counts %d, want 2", got)
	}
	if !clone.fastPath {
		t.Error("clone lost the fast path flag")
	}
}

// Ported from kube's TestGetTPMapMatchingIncomingAffinityAntiAffinity.
func TestIncomingCounts(t *testing.T) {
	newPod := func(labels ...string) *v1.Pod {
		p := makePod().Name("normal").Node("nodeA")
		for _, l := range labels {
			p.Label(l, "")
		}
		return p.Obj()
	}
	normalPodA := newPod("aaa")
	normalPodB := newPod("bbb")
	normalPodAB := newPod("aaa", "bbb")
	nodeA := node("nodeA", map[string]string{v1.LabelHostname: "nodeA"})
	hostA := topologyPair{key: v1.LabelHostname, value: "nodeA"}

	tests := []struct {
		name             string
		existingPods     []*v1.Pod
		pod              *v1.Pod
		wantAffinity     topologyToMatchedTermCount
		wantAntiAffinity topologyToMatchedTermCount
	}{
		{
			name:             "nil test",
			pod:              makePod().Name("aaa-normal").Obj(),
			wantAffinity:     topologyToMatchedTermCount{},
			wantAntiAffinity: topologyToMatchedTermCount{},
		},
		{
			name:             "incoming pod without affinity/anti-affinity causes a no-op",
			existingPods:     []*v1.Pod{normalPodA},
			pod:              makePod().Name("aaa-normal").Obj(),
			wantAffinity:     topologyToMatchedTermCount{},
			wantAntiAffinity: topologyToMatchedTermCount{},
		},
		{
			name:             "no pod has label that violates incoming pod's affinity and anti-affinity",
			existingPods:     []*v1.Pod{normalPodB},
			pod:              makePod().Name("aaa-anti").PodAffinityExists("aaa", v1.LabelHostname).PodAntiAffinityExists("aaa", v1.LabelHostname).Obj(),
			wantAffinity:     topologyToMatchedTermCount{},
			wantAntiAffinity: topologyToMatchedTermCount{},
		},
		{
			name:             "existing pod matches incoming pod's affinity and anti-affinity - single term case",
			existingPods:     []*v1.Pod{normalPodA},
			pod:              makePod().Name("affi-antiaffi").PodAffinityExists("aaa", v1.LabelHostname).PodAntiAffinityExists("aaa", v1.LabelHostname).Obj(),
			wantAffinity:     topologyToMatchedTermCount{hostA: 1},
			wantAntiAffinity: topologyToMatchedTermCount{hostA: 1},
		},
		{
			name:         "existing pod matches incoming pod's affinity and anti-affinity - multiple terms case",
			existingPods: []*v1.Pod{normalPodAB},
			pod: makePod().Name("affi-antiaffi").PodAffinityExists("aaa", v1.LabelHostname).
				PodAffinityExists("bbb", v1.LabelHostname).PodAntiAffinityExists("aaa", v1.LabelHostname).Obj(),
			wantAffinity:     topologyToMatchedTermCount{hostA: 2}, // one for each term
			wantAntiAffinity: topologyToMatchedTermCount{hostA: 1},
		},
		{
			name:         "existing pod not match incoming pod's affinity but matches anti-affinity",
			existingPods: []*v1.Pod{normalPodA},
			pod: makePod().Name("affi-antiaffi").PodAffinityExists("aaa", v1.LabelHostname).PodAffinityExists("bbb", v1.LabelHostname).
				PodAntiAffinityExists("aaa", v1.LabelHostname).PodAntiAffinityExists("bbb", v1.LabelHostname).Obj(),
			wantAffinity:     topologyToMatchedTermCount{},
			wantAntiAffinity: topologyToMatchedTermCount{hostA: 1},
		},
		{
			name:         "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 1",
			existingPods: []*v1.Pod{normalPodAB},
			pod: makePod().Name("anaffi-antiaffiti").PodAffinityExists("aaa", v1.LabelHostname).PodAffinityExists("ccc", v1.LabelHostname).
				PodAntiAffinityExists("aaa", v1.LabelHostname).PodAntiAffinityExists("ccc", v1.LabelHostname).Obj(),
			wantAffinity:     topologyToMatchedTermCount{},
			wantAntiAffinity: topologyToMatchedTermCount{hostA: 1},
		},
		{
			name:         "incoming pod's anti-affinity has more than one term - existing pod violates partial term - case 2",
			existingPods: []*v1.Pod{normalPodB},
			pod: makePod().Name("affi-antiaffi").PodAffinityExists("aaa", v1.LabelHostname).PodAffinityExists("bbb", v1.LabelHostname).
				PodAntiAffinityExists("aaa", v1.LabelHostname).PodAntiAffinityExists("bbb", v1.LabelHostname).Obj(),
			wantAffinity:     topologyToMatchedTermCount{},
			wantAntiAffinity: topologyToMatchedTermCount{hostA: 1},
		},
	}
	for _, fp := range fastPathOpt {
		for _, tt := range tests {
			t.Run(fastPathName(tt.name, fp), func(t *testing.T) {
				snap := newSnapshot(tt.existingPods, []*v1.Node{nodeA}, nil)
				p := newPlugin(t, nil, snap, fp)
				pi := schedcore.NewPodInfo(tt.pod)
				aff, anti := p.incomingCounts(pi.RequiredAffinityTerms, pi.RequiredAntiAffinityTerms)
				if diff := cmp.Diff(tt.wantAffinity, pairsOf(aff), cmpPairs); diff != "" {
					t.Errorf("affinity counts (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.wantAntiAffinity, pairsOf(anti), cmpPairs); diff != "" {
					t.Errorf("anti-affinity counts (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// Ported from kube's TestRemovePodHostScopedAffinityCount.
func TestRemovingTheOnlyMatchingPodLetsAHostnameSelfAffinityPodGoAnywhere(t *testing.T) {
	for _, fp := range fastPathOpt {
		t.Run(fastPathName("", fp), func(t *testing.T) {
			ctx := context.Background()
			pending := makePod().Name("pending").Labels(map[string]string{"foo": "bar"}).PodAffinityIn("foo", v1.LabelHostname, []string{"bar"}).Obj()
			existing := makePod().Name("existing").Node("nodeA").Labels(map[string]string{"foo": "bar"}).Obj()
			nodes := []*v1.Node{node("nodeA", map[string]string{v1.LabelHostname: "nodeA"}), node("nodeB", map[string]string{v1.LabelHostname: "nodeB"})}
			snap := newSnapshot([]*v1.Pod{existing}, nodes, nil)
			p := newPlugin(t, nil, snap, fp)
			cs := schedcore.NewCycleState()
			if _, s := p.PreFilter(ctx, cs, pending, snap.List()); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s.Message())
			}
			a, _ := snap.Get("nodeA")
			b, _ := snap.Get("nodeB")
			if diff := cmp.Diff(ok, res(p.Filter(ctx, cs, pending, a))); diff != "" {
				t.Errorf("nodeA with the matching pod (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(affFail, res(p.Filter(ctx, cs, pending, b))); diff != "" {
				t.Errorf("nodeB while a matching pod exists (-want +got):\n%s", diff)
			}
			if s := p.RemovePod(ctx, cs, pending, schedcore.NewPodInfo(existing), a); !s.IsSuccess() {
				t.Fatalf("RemovePod: %v", s.Message())
			}
			for _, ni := range []*schedcore.NodeInfo{a, b} {
				if diff := cmp.Diff(ok, res(p.Filter(ctx, cs, pending, ni))); diff != "" {
					t.Errorf("%s after removing the only matching pod (-want +got):\n%s", ni.Name(), diff)
				}
			}
		})
	}
}

// Ported from kube's TestMultipleAffinityTermsRequireSingleMatchingPod.
func TestAllAffinityTermsMustBeMatchedByOnePod(t *testing.T) {
	incoming := makePod().Name("pod-1").Namespace("default").
		PodAffinityIn("foo", v1.LabelHostname, []string{"bar"}).PodAffinityIn("baz", v1.LabelHostname, []string{"qux"}).Obj()
	podA := makePod().Name("podA").Namespace("default").Label("foo", "bar").Node("node-1").Obj()
	podB := makePod().Name("podB").Namespace("default").Label("baz", "qux").Node("node-1").Obj()
	podC := makePod().Name("podC").Namespace("default").Label("foo", "bar").Label("baz", "qux").Node("node-3").Obj()
	nodes := []*v1.Node{
		node("node-1", map[string]string{v1.LabelHostname: "node-1"}),
		node("node-2", map[string]string{v1.LabelHostname: "node-2"}),
		node("node-3", map[string]string{v1.LabelHostname: "node-3"}),
	}
	nss := []*v1.Namespace{namespace("default", map[string]string{})}
	for _, fp := range fastPathOpt {
		t.Run(fastPathName("", fp), func(t *testing.T) {
			ctx := context.Background()
			snap := newSnapshot([]*v1.Pod{podA, podB, podC}, nodes, nss)
			p := newPlugin(t, nil, snap, fp)
			cs := schedcore.NewCycleState()
			if _, s := p.PreFilter(ctx, cs, incoming, snap.List()); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s.Message())
			}
			for name, w := range map[string]result{"node-1": affFail, "node-2": affFail, "node-3": ok} {
				ni, _ := snap.Get(name)
				if diff := cmp.Diff(w, res(p.Filter(ctx, cs, incoming, ni))); diff != "" {
					t.Errorf("%s (-want +got):\n%s", name, diff)
				}
			}

			// The incoming pod matches its own terms and no other pod does.
			self := incoming.DeepCopy()
			self.Labels = map[string]string{"foo": "bar", "baz": "qux"}
			snapSelf := newSnapshot([]*v1.Pod{podA, podB}, nodes, nss)
			pSelf := newPlugin(t, nil, snapSelf, fp)
			csSelf := schedcore.NewCycleState()
			if _, s := pSelf.PreFilter(ctx, csSelf, self, snapSelf.List()); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s.Message())
			}
			ni, _ := snapSelf.Get("node-1")
			if diff := cmp.Diff(ok, res(pSelf.Filter(ctx, csSelf, self, ni))); diff != "" {
				t.Errorf("self-affinity on node-1 (-want +got):\n%s", diff)
			}
		})
	}
}

// Ported from kube's TestFastTrackInterPodAffinity.
func TestZoneHostnameAndNamespaceSelectorAntiAffinity(t *testing.T) {
	const zone = "topology.kubernetes.io/zone"
	zoneAnti := makePod().Name("pod-1").Namespace("default").Label("app", "foo").PodAntiAffinityIn("app", zone, []string{"foo"}).Obj()
	hostAnti := makePod().Name("pod-2").Namespace("default").Label("app", "bar").PodAntiAffinityIn("app", v1.LabelHostname, []string{"bar"}).Obj()
	nsAnti := makePod().Name("pod-3").Namespace("other").Label("app", "baz").PodAntiAffinityIn("app", zone, []string{"blocked"}).Obj()
	nsAnti.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].NamespaceSelector = &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpDoesNotExist}},
	}
	pods := []*v1.Pod{
		makePod().Name("pod-no-rules-foo").Namespace("default").Label("app", "foo").Node("node-1").Obj(),
		makePod().Name("pod-no-rules-bar").Namespace("default").Label("app", "bar").Node("node-2").Obj(),
		makePod().Name("pod-in-ns-with-team-label").Namespace("blue-ns").Label("app", "blocked").Label("team", "blue").Node("node-1").Obj(),
	}
	nodes := []*v1.Node{
		node("node-1", map[string]string{v1.LabelHostname: "node-1", zone: "zone-a"}),
		node("node-2", map[string]string{v1.LabelHostname: "node-2", zone: "zone-b"}),
	}
	nss := []*v1.Namespace{namespace("default", map[string]string{}), namespace("other", map[string]string{}), namespace("blue-ns", map[string]string{"team": "blue"})}
	tests := []struct {
		name string
		pod  *v1.Pod
		want map[string]result
	}{
		{name: "zone anti-affinity rejects the whole zone of a matching pod", pod: zoneAnti, want: map[string]result{"node-1": antiFail, "node-2": ok}},
		{name: "hostname anti-affinity rejects only the node of a matching pod", pod: hostAnti, want: map[string]result{"node-1": ok, "node-2": antiFail}},
		{name: "a namespace selector excludes pods of namespaces it does not select", pod: nsAnti, want: map[string]result{"node-1": ok, "node-2": ok}},
	}
	for _, fp := range fastPathOpt {
		for _, tt := range tests {
			t.Run(fastPathName(tt.name, fp), func(t *testing.T) {
				ctx := context.Background()
				snap := newSnapshot(pods, nodes, nss)
				p := newPlugin(t, nil, snap, fp)
				cs := schedcore.NewCycleState()
				if _, s := p.PreFilter(ctx, cs, tt.pod, snap.List()); !s.IsSuccess() {
					t.Fatalf("PreFilter: %v", s.Message())
				}
				for name, w := range tt.want {
					ni, _ := snap.Get(name)
					if diff := cmp.Diff(w, res(p.Filter(ctx, cs, tt.pod, ni))); diff != "" {
						t.Errorf("%s (-want +got):\n%s", name, diff)
					}
				}
			})
		}
	}
}

// Skip needs no matching existing anti-affinity and no required terms; under
// the fast path, an existing hostname-scoped anti-affinity term anywhere
// (matching or not) also prevents it, since Filter checks those per node.
func TestPreFilterSkip(t *testing.T) {
	hostA := map[string]string{v1.LabelHostname: "nodeA", "zone": "z1"}
	nodes := []*v1.Node{node("nodeA", hostA)}
	tests := []struct {
		name     string
		pod      *v1.Pod
		pods     []*v1.Pod
		fastPath bool
		want     result
	}{
		{name: "a pod without affinity in an empty cluster is skipped", pod: makePod().Name("p").Obj(), want: skip},
		{
			name: "a pod with only preferred terms is skipped",
			pod: makePod().Name("p").Affinity(&v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
				{Weight: 1, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: inExpr("a", "b"), TopologyKey: "zone"}},
			}}}).Obj(),
			want: skip,
		},
		{
			name: "a pod with required affinity is not skipped even when nothing matches",
			pod:  makePod().Name("p").PodAffinityExists("a", "zone").Obj(),
			want: ok,
		},
		{
			name: "an existing zone anti-affinity that does not match the pod is skipped",
			pod:  makePod().Name("p").Obj(),
			pods: []*v1.Pod{makePod().Name("e").Node("nodeA").PodAntiAffinityExists("a", "zone").Obj()},
			want: skip,
		},
		{
			name: "an existing zone anti-affinity that matches the pod is not skipped",
			pod:  makePod().Name("p").Label("a", "").Obj(),
			pods: []*v1.Pod{makePod().Name("e").Node("nodeA").PodAntiAffinityExists("a", "zone").Obj()},
			want: ok,
		},
		{
			name: "without the fast path an existing hostname anti-affinity that does not match the pod is skipped",
			pod:  makePod().Name("p").Obj(),
			pods: []*v1.Pod{makePod().Name("e").Node("nodeA").PodAntiAffinityExists("a", v1.LabelHostname).Obj()},
			want: skip,
		},
		{
			name:     "with the fast path an existing hostname anti-affinity is never skipped",
			pod:      makePod().Name("p").Obj(),
			pods:     []*v1.Pod{makePod().Name("e").Node("nodeA").PodAntiAffinityExists("a", v1.LabelHostname).Obj()},
			fastPath: true,
			want:     ok,
		},
		{
			name:     "with the fast path a hostname term next to a zone term on another pod of the node is never skipped",
			pod:      makePod().Name("p").Obj(),
			pods:     []*v1.Pod{makePod().Name("e").Node("nodeA").PodAntiAffinityExists("a", v1.LabelHostname).Obj(), makePod().Name("f").Node("nodeA").PodAntiAffinityExists("a", "zone").Obj()},
			fastPath: true,
			want:     ok,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := newSnapshot(tt.pods, nodes, nil)
			p := newPlugin(t, nil, snap, tt.fastPath)
			_, s := p.PreFilter(context.Background(), schedcore.NewCycleState(), tt.pod, snap.List())
			if diff := cmp.Diff(tt.want, res(s)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
