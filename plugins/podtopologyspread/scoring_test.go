package podtopologyspread

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func replicaSet(ns, name string, sel *metav1.LabelSelector) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.ReplicaSetSpec{Selector: sel}}
}

func nodeInfos(t *testing.T, snap *schedcore.Snapshot, nodes []*v1.Node) []*schedcore.NodeInfo {
	t.Helper()
	out := make([]*schedcore.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		ni, err := snap.Get(n.Name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ni)
	}
	return out
}

func TestPreScoreSkip(t *testing.T) {
	tests := []struct {
		name  string
		pod   *v1.Pod
		nodes []*v1.Node
		sel   *schedcore.SelectorSources
		args  *configv1.PodTopologySpreadArgs
	}{
		{
			name:  "a pod without soft constraints is skipped",
			pod:   mkPod("p").obj(),
			args:  listArgs(),
			nodes: []*v1.Node{hn("node-a"), hn("node-b")},
		},
		{
			name:  "a pod with only hard constraints is skipped",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			args:  listArgs(),
			nodes: []*v1.Node{hn("node-a")},
		},
		{
			name:  "default constraints are skipped when the pod's owner is not found",
			pod:   mkPod("p", "foo", "bar", "baz", "sup").ownedBy("rs2", rsKind).obj(),
			args:  listArgs(tsc(2, "planet", sa, nil)),
			nodes: []*v1.Node{mkNode("node-a", "planet", "mars")},
			sel:   &schedcore.SelectorSources{ReplicaSets: []*appsv1.ReplicaSet{replicaSet("default", "rs1", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tar", Operator: metav1.LabelSelectorOpExists}}})}},
		},
		{
			name:  "system default constraints are skipped for a pod nothing selects",
			pod:   mkPod("p", "foo", "").obj(),
			nodes: []*v1.Node{hn("node-a")},
			sel:   &schedcore.SelectorSources{Services: []*v1.Service{service("default", "app", "other")}},
		},
		{
			name: "a cluster without nodes is skipped",
			pod:  mkPod("p", "foo", "").spread(1, "zone", sa, fooSelector).obj(),
			args: listArgs(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, snap := newPlugin(t, tt.args, nil, tt.nodes, tt.sel)
			cs := schedcore.NewCycleState()
			if s := p.PreScore(context.Background(), cs, tt.pod, snap.List()); !s.IsSkip() {
				t.Fatalf("PreScore = %v, want Skip", s)
			}
			if _, err := cs.Read(preScoreStateKey); err == nil {
				t.Error("PreScore wrote state although it skipped")
			}
		})
	}
}

func TestPreScoreState(t *testing.T) {
	foo, bar := mustSel(t, fooSelector), mustSel(t, barSelector)
	threeNodes := func() []*v1.Node {
		return []*v1.Node{
			mkNode("node-a", "zone", "zone1", v1.LabelHostname, "node-a"), mkNode("node-b", "zone", "zone1", v1.LabelHostname, "node-b"),
			mkNode("node-x", "zone", "zone2", v1.LabelHostname, "node-x"),
		}
	}
	// node-x is outside a nodeSelector foo="".
	policyNodes := func() []*v1.Node {
		return []*v1.Node{
			mkNode("node-a", "zone", "zone1", "foo", "", v1.LabelHostname, "node-a"), mkNode("node-b", "zone", "zone1", "foo", "", v1.LabelHostname, "node-b"),
			mkNode("node-x", "zone", "zone2", v1.LabelHostname, "node-x"),
		}
	}
	taintNodes := func() []*v1.Node {
		return []*v1.Node{
			mkNode("node-a", "zone", "zone1", v1.LabelHostname, "node-a"), mkNode("node-b", "zone", "zone1", v1.LabelHostname, "node-b"),
			tainted(mkNode("node-x", "zone", "zone2", v1.LabelHostname, "node-x"), unschedulableTaint),
		}
	}
	policyPods := func() []*v1.Pod {
		return []*v1.Pod{ep("p-a", "node-a", "bar", ""), ep("p-b", "node-b", "bar", ""), ep("p-x", "node-x", "bar", "")}
	}
	i64 := func(v int64) *int64 { return &v }
	tests := []struct {
		name  string
		pod   *v1.Pod
		nodes []*v1.Node
		pods  []*v1.Pod
		sel   *schedcore.SelectorSources
		args  *configv1.PodTopologySpreadArgs
		want  *scoreView
	}{
		{
			name:  "zone domains are listed and hostname ones left to Score",
			pod:   mkPod("p", "foo", "").spread(1, "zone", sa, fooSelector).spread(1, v1.LabelHostname, sa, fooSelector).obj(),
			nodes: threeNodes(),
			args:  listArgs(),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(1, "zone", foo), want(1, v1.LabelHostname, foo)},
				IgnoredNodes:              sets.New[string](),
				TopologyValueToPodCounts:  []map[string]*int64{{"zone1": i64(0), "zone2": i64(0)}, {}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2), topologyNormalizingWeight(3)},
			},
		},
		{
			name:  "a null selector counts nothing",
			pod:   mkPod("p", "foo", "").spread(1, "zone", sa, nil).obj(),
			nodes: threeNodes(),
			pods:  []*v1.Pod{ep("p-a", "node-a", "foo", "")},
			args:  listArgs(),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(1, "zone", labels.Nothing())},
				IgnoredNodes:              sets.New[string](),
				TopologyValueToPodCounts:  []map[string]*int64{{"zone1": i64(0), "zone2": i64(0)}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2)},
			},
		},
		{
			name: "a feasible node without the zone label is ignored",
			pod:  mkPod("p", "foo", "").spread(1, "zone", sa, fooSelector).spread(1, v1.LabelHostname, sa, barSelector).obj(),
			nodes: []*v1.Node{
				mkNode("node-a", "zone", "zone1", v1.LabelHostname, "node-a"), mkNode("node-b", "zone", "zone1", v1.LabelHostname, "node-b"),
				hn("node-x"),
			},
			args: listArgs(),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(1, "zone", foo), want(1, v1.LabelHostname, bar)},
				IgnoredNodes:              sets.New("node-x"),
				TopologyValueToPodCounts:  []map[string]*int64{{"zone1": i64(0)}, {}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(1), topologyNormalizingWeight(2)},
			},
		},
		{
			name: "system default constraints use the replicaset's selector, and nodes without a zone form the empty zone",
			pod:  mkPod("p", "foo", "tar", "baz", "sup").ownedBy("rs1", rsKind).obj(),
			nodes: []*v1.Node{
				mkNode("node-a", v1.LabelHostname, "node-a", v1.LabelTopologyZone, "mars"), mkNode("node-b", v1.LabelHostname, "node-b", v1.LabelTopologyZone, "mars"),
				hn("node-c"), hn("node-d"),
			},
			sel: &schedcore.SelectorSources{ReplicaSets: []*appsv1.ReplicaSet{replicaSet("default", "rs1", fooSelector)}},
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(3, v1.LabelHostname, foo), want(5, v1.LabelTopologyZone, foo)},
				IgnoredNodes:              sets.New[string](),
				TopologyValueToPodCounts:  []map[string]*int64{{}, {"mars": i64(0), "": i64(0)}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(4), topologyNormalizingWeight(2)},
			},
		},
		{
			name:  "listed default constraints keep the soft ones with the replicaset's selector",
			pod:   mkPod("p", "foo", "tar", "baz", "sup").ownedBy("rs1", rsKind).obj(),
			nodes: []*v1.Node{mkNode("node-a", "rack", "rack1", v1.LabelHostname, "node-a", "planet", "mars")},
			sel:   &schedcore.SelectorSources{ReplicaSets: []*appsv1.ReplicaSet{replicaSet("default", "rs1", fooSelector)}},
			args:  listArgs(tsc(1, v1.LabelHostname, sa, nil), tsc(2, "rack", dns, nil), tsc(2, "planet", sa, nil)),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(1, v1.LabelHostname, foo), want(2, "planet", foo)},
				IgnoredNodes:              sets.New[string](),
				TopologyValueToPodCounts:  []map[string]*int64{{}, {"mars": i64(0)}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(1), topologyNormalizingWeight(1)},
			},
		},
		{
			name: "listed default constraints require every topology key",
			pod:  mkPod("p", "foo", "tar").ownedBy("rs1", rsKind).obj(),
			nodes: []*v1.Node{
				mkNode("node-a", v1.LabelHostname, "node-a", "planet", "mars"), hn("node-b"),
			},
			sel:  &schedcore.SelectorSources{ReplicaSets: []*appsv1.ReplicaSet{replicaSet("default", "rs1", fooSelector)}},
			args: listArgs(tsc(1, v1.LabelHostname, sa, nil), tsc(2, "planet", sa, nil)),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(1, v1.LabelHostname, foo), want(2, "planet", foo)},
				IgnoredNodes:              sets.New("node-b"),
				TopologyValueToPodCounts:  []map[string]*int64{{}, {"mars": i64(0)}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(1), topologyNormalizingWeight(1)},
			},
		},
		{
			name: "the pod's own soft constraints replace the default ones",
			pod: mkPod("p", "foo", "bar", "baz", "sup").ownedBy("rs1", rsKind).
				spread(1, "zone", dns, barSelector).spread(2, "planet", sa, matchLabels("baz", "sup")).obj(),
			nodes: []*v1.Node{mkNode("node-a", "planet", "mars", "galaxy", "andromeda")},
			sel:   &schedcore.SelectorSources{ReplicaSets: []*appsv1.ReplicaSet{replicaSet("default", "rs1", fooSelector)}},
			args:  listArgs(tsc(2, "galaxy", sa, nil)),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(2, "planet", mustSel(t, matchLabels("baz", "sup")))},
				IgnoredNodes:              sets.New[string](),
				TopologyValueToPodCounts:  []map[string]*int64{{"mars": i64(0)}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(1)},
			},
		},
		{
			name:  "nodeAffinityPolicy Honor does not count pods on nodes outside the nodeSelector",
			pod:   mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "zone", sa, barSelector).obj(),
			nodes: policyNodes(),
			pods:  policyPods(),
			args:  listArgs(),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(1, "zone", bar)},
				IgnoredNodes:              sets.New[string](),
				TopologyValueToPodCounts:  []map[string]*int64{{"zone1": i64(2), "zone2": i64(0)}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2)},
			},
		},
		{
			name:  "nodeAffinityPolicy Ignore counts pods on nodes outside the nodeSelector",
			pod:   mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "zone", sa, barSelector, affinityPolicy(ignore)).obj(),
			nodes: policyNodes(),
			pods:  policyPods(),
			args:  listArgs(),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(1, "zone", bar).policies(ignore, ignore)},
				IgnoredNodes:              sets.New[string](),
				TopologyValueToPodCounts:  []map[string]*int64{{"zone1": i64(2), "zone2": i64(1)}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2)},
			},
		},
		{
			name:  "nodeAffinityPolicy Honor does not count pods on nodes outside the node affinity",
			pod:   mkPod("p", "foo", "").affinityIn("foo", "").spread(1, "zone", sa, barSelector).obj(),
			nodes: policyNodes(),
			pods:  policyPods(),
			args:  listArgs(),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(1, "zone", bar)},
				IgnoredNodes:              sets.New[string](),
				TopologyValueToPodCounts:  []map[string]*int64{{"zone1": i64(2), "zone2": i64(0)}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2)},
			},
		},
		{
			name:  "nodeTaintsPolicy Honor does not count pods on nodes with untolerated taints",
			pod:   mkPod("p", "foo", "").spread(1, "zone", sa, barSelector, taintsPolicy(honor)).obj(),
			nodes: taintNodes(),
			pods:  policyPods(),
			args:  listArgs(),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(1, "zone", bar).policies(honor, honor)},
				IgnoredNodes:              sets.New[string](),
				TopologyValueToPodCounts:  []map[string]*int64{{"zone1": i64(2), "zone2": i64(0)}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2)},
			},
		},
		{
			name:  "nodeTaintsPolicy Ignore counts pods on tainted nodes",
			pod:   mkPod("p", "foo", "").spread(1, "zone", sa, barSelector).obj(),
			nodes: taintNodes(),
			pods:  policyPods(),
			args:  listArgs(),
			want: &scoreView{
				Constraints:               []topologySpreadConstraint{want(1, "zone", bar)},
				IgnoredNodes:              sets.New[string](),
				TopologyValueToPodCounts:  []map[string]*int64{{"zone1": i64(2), "zone2": i64(1)}},
				TopologyNormalizingWeight: []float64{topologyNormalizingWeight(2)},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, snap := newPlugin(t, tt.args, tt.pods, tt.nodes, tt.sel)
			cs := schedcore.NewCycleState()
			if s := p.PreScore(context.Background(), cs, tt.pod, snap.List()); !s.IsSuccess() {
				t.Fatal(s.AsError())
			}
			got := preScoreView(t, cs)
			if diff := cmp.Diff(tt.want, got, stateCmpOpts...); diff != "" {
				t.Errorf("PreScore state (-want +got):\n%s", diff)
			}
		})
	}
}
