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
	"github.com/kubectl-sched/kubectl-sched/schedcore/plugintest"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
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
			nodes: []*v1.Node{schedtest.MakeNode("node-a").Obj(), schedtest.MakeNode("node-b").Obj()},
		},
		{
			name:  "a pod with only hard constraints is skipped",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			args:  listArgs(),
			nodes: []*v1.Node{schedtest.MakeNode("node-a").Obj()},
		},
		{
			name:  "default constraints are skipped when the pod's owner is not found",
			pod:   mkPod("p", "foo", "bar", "baz", "sup").ownedBy("rs2", rsKind).obj(),
			args:  listArgs(tsc(2, "planet", sa, nil)),
			nodes: []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("planet", "mars").Obj()},
			sel:   &schedcore.SelectorSources{ReplicaSets: []*appsv1.ReplicaSet{replicaSet("default", "rs1", &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tar", Operator: metav1.LabelSelectorOpExists}}})}},
		},
		{
			name:  "system default constraints are skipped for a pod nothing selects",
			pod:   mkPod("p", "foo", "").obj(),
			nodes: []*v1.Node{schedtest.MakeNode("node-a").Obj()},
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
			schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", v1.LabelHostname, "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1", v1.LabelHostname, "node-b").Obj(),
			schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2", v1.LabelHostname, "node-x").Obj(),
		}
	}
	// node-x is outside a nodeSelector foo="".
	policyNodes := func() []*v1.Node {
		return []*v1.Node{
			schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "foo", "", v1.LabelHostname, "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1", "foo", "", v1.LabelHostname, "node-b").Obj(),
			schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2", v1.LabelHostname, "node-x").Obj(),
		}
	}
	taintNodes := func() []*v1.Node {
		return []*v1.Node{
			schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", v1.LabelHostname, "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1", v1.LabelHostname, "node-b").Obj(),
			tainted(schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2", v1.LabelHostname, "node-x").Obj(), unschedulableTaint),
		}
	}
	policyPods := func() []*v1.Pod {
		return []*v1.Pod{schedtest.MakePod("p-a").Node("node-a").Label("bar", "").Obj(), schedtest.MakePod("p-b").Node("node-b").Label("bar", "").Obj(), schedtest.MakePod("p-x").Node("node-x").Label("bar", "").Obj()}
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
			pods:  []*v1.Pod{schedtest.MakePod("p-a").Node("node-a").Label("foo", "").Obj()},
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
				schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", v1.LabelHostname, "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1", v1.LabelHostname, "node-b").Obj(),
				schedtest.MakeNode("node-x").Obj(),
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
				schedtest.MakeNode("node-a").OnlyLabels(v1.LabelHostname, "node-a", v1.LabelTopologyZone, "mars").Obj(), schedtest.MakeNode("node-b").OnlyLabels(v1.LabelHostname, "node-b", v1.LabelTopologyZone, "mars").Obj(),
				schedtest.MakeNode("node-c").Obj(), schedtest.MakeNode("node-d").Obj(),
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
			nodes: []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("rack", "rack1", v1.LabelHostname, "node-a", "planet", "mars").Obj()},
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
				schedtest.MakeNode("node-a").OnlyLabels(v1.LabelHostname, "node-a", "planet", "mars").Obj(), schedtest.MakeNode("node-b").Obj(),
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
			nodes: []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("planet", "mars", "galaxy", "andromeda").Obj()},
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
			got := preScoreView(t, cs, snap.List())
			if diff := cmp.Diff(tt.want, got, stateCmpOpts...); diff != "" {
				t.Errorf("PreScore state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPodTopologySpreadScore(t *testing.T) {
	// Legend, as in kube's test: X/Y are matching pods on candidate nodes,
	// ~Y~ a node that is not a candidate, ?Y? a candidate missing a topology key.
	hosts := func(names ...string) []*v1.Node {
		out := make([]*v1.Node, 0, len(names))
		for _, n := range names {
			out = append(out, schedtest.MakeNode(n).Obj())
		}
		return out
	}
	zh := func(name, zone string) *v1.Node {
		return schedtest.MakeNode(name).OnlyLabels("zone", zone, v1.LabelHostname, name).Obj()
	}
	pods2103 := func() []*v1.Pod {
		return []*v1.Pod{
			schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
			schedtest.MakePod("p-d1").Node("node-d").Label("foo", "").Obj(), schedtest.MakePod("p-d2").Node("node-d").Label("foo", "").Obj(), schedtest.MakePod("p-d3").Node("node-d").Label("foo", "").Obj(),
		}
	}
	pods4321 := func() []*v1.Pod {
		return []*v1.Pod{
			schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a3").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a4").Node("node-a").Label("foo", "").Obj(),
			schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-b3").Node("node-b").Label("foo", "").Obj(),
			schedtest.MakePod("p-c1").Node("node-c").Label("foo", "").Obj(), schedtest.MakePod("p-c2").Node("node-c").Label("foo", "").Obj(), schedtest.MakePod("p-d1").Node("node-d").Label("foo", "").Obj(),
		}
	}
	pods4213 := func() []*v1.Pod {
		return []*v1.Pod{
			schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a3").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a4").Node("node-a").Label("foo", "").Obj(),
			schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj(),
			schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(),
		}
	}
	policyNodes := func() []*v1.Node {
		return []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b", "foo", "").Obj(), schedtest.MakeNode("node-c").OnlyLabels("node", "node-c").Obj()}
	}
	policyPods := func() []*v1.Pod {
		return []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-c1").Node("node-c").Label("foo", "").Obj()}
	}
	taintNodes := func() []*v1.Node {
		return []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b").Obj(), tainted(schedtest.MakeNode("node-c").OnlyLabels("node", "node-c").Obj(), unschedulableTaint)}
	}
	matchKeyNodes := func() []*v1.Node {
		return []*v1.Node{zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-c", "zone2"), zh("node-d", "zone2")}
	}
	tests := []struct {
		name               string
		pod                *v1.Pod
		existingPods       []*v1.Pod
		nodes              []*v1.Node
		failedNodes        []*v1.Node // nodes + failedNodes = all nodes
		sel                *schedcore.SelectorSources
		disableMatchLabels bool
		want               schedcore.NodeScoreList
	}{
		{
			name:  "one hostname constraint without existing pods scores every node 100",
			pod:   mkPod("p", "foo", "").spread(1, v1.LabelHostname, sa, fooSelector).obj(),
			nodes: hosts("node-a", "node-b"),
			want:  schedcore.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 100}},
		},
		{
			name:         "the only candidate node scores 100",
			pod:          mkPod("p", "foo", "").spread(1, v1.LabelHostname, sa, fooSelector).obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj()},
			nodes:        hosts("node-a"),
			failedNodes:  hosts("node-b"),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 100}},
		},
		{
			name:         "nodes with the same number of matching pods score the same",
			pod:          mkPod("p", "foo", "").spread(1, v1.LabelHostname, sa, fooSelector).obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj()},
			nodes:        hosts("node-a", "node-b"),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 100}},
		},
		{
			name:         "hostname spread 2/1/0/3 over 4 candidates",
			pod:          mkPod("p", "foo", "").spread(1, v1.LabelHostname, sa, fooSelector).obj(),
			existingPods: pods2103(),
			nodes:        hosts("node-a", "node-b", "node-c", "node-d"),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 20}, {Name: "node-b", Score: 60}, {Name: "node-c", Score: 100}, {Name: "node-d", Score: 0}},
		},
		{
			name:         "a null selector scores every node 100",
			pod:          mkPod("p", "foo", "").spread(1, v1.LabelHostname, sa, nil).obj(),
			existingPods: pods2103(),
			nodes:        hosts("node-a", "node-b", "node-c", "node-d"),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 100}, {Name: "node-c", Score: 100}, {Name: "node-d", Score: 100}},
		},
		{
			name:         "hostname spread 2/1/0/3 with maxSkew 2 tolerates more skew",
			pod:          mkPod("p", "foo", "").spread(2, v1.LabelHostname, sa, fooSelector).obj(),
			existingPods: pods2103(),
			nodes:        hosts("node-a", "node-b", "node-c", "node-d"),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 33}, {Name: "node-b", Score: 66}, {Name: "node-c", Score: 100}, {Name: "node-d", Score: 16}},
		},
		{
			name:         "hostname spread 4/3/2/1 with maxSkew 3",
			pod:          mkPod("p", "foo", "").spread(3, v1.LabelHostname, sa, fooSelector).obj(),
			existingPods: pods4321(),
			nodes:        hosts("node-a", "node-b", "node-c", "node-d"),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 44}, {Name: "node-b", Score: 66}, {Name: "node-c", Score: 77}, {Name: "node-d", Score: 100}},
		},
		{
			name:         "system defaulting spreads a service's pods by hostname when nodes have no zone",
			pod:          mkPod("p", "foo", "").obj(),
			existingPods: pods4321(),
			nodes:        hosts("node-a", "node-b", "node-c", "node-d"),
			sel:          &schedcore.SelectorSources{Services: []*v1.Service{service("default", "foo", "")}},
			// The same scores as one hostname constraint with maxSkew 3.
			want: schedcore.NodeScoreList{{Name: "node-a", Score: 44}, {Name: "node-b", Score: 66}, {Name: "node-c", Score: 77}, {Name: "node-d", Score: 100}},
		},
		{
			// Nodes without the zone label read as zone "" when not every key
			// is required, the same domain as nodes labelled with "".
			name: "system defaulting counts nodes without a zone in the domain of an empty zone",
			pod:  mkPod("p", "foo", "").obj(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-c1").Node("node-c").Label("foo", "").Obj(),
			},
			nodes: []*v1.Node{
				schedtest.MakeNode("node-a").OnlyLabels(v1.LabelHostname, "node-a", v1.LabelTopologyZone, "z1").Obj(), schedtest.MakeNode("node-b").OnlyLabels(v1.LabelHostname, "node-b", v1.LabelTopologyZone, "").Obj(),
				schedtest.MakeNode("node-c").OnlyLabels(v1.LabelHostname, "node-c").Obj(), schedtest.MakeNode("node-d").OnlyLabels(v1.LabelHostname, "node-d", v1.LabelTopologyZone, "z1").Obj(),
			},
			sel: &schedcore.SelectorSources{Services: []*v1.Service{service("default", "foo", "")}},
			// hostname: cnt×log(6)+2; zone: cnt×log(4)+4 with z1 = 1 and "" = 3
			// (node-c has no zone: hostname only): 9, 14, 4, 7.
			want: schedcore.NodeScoreList{{Name: "node-a", Score: 64}, {Name: "node-b", Score: 28}, {Name: "node-c", Score: 100}, {Name: "node-d", Score: 78}},
		},
		{
			name:         "system defaulting spreads by hostname and zone",
			pod:          mkPod("p", "foo", "").obj(),
			existingPods: pods4213(),
			nodes: []*v1.Node{
				schedtest.MakeNode("node-a").OnlyLabels(v1.LabelHostname, "node-a", v1.LabelTopologyZone, "z1").Obj(), schedtest.MakeNode("node-b").OnlyLabels(v1.LabelHostname, "node-b", v1.LabelTopologyZone, "z1").Obj(),
				schedtest.MakeNode("node-x").OnlyLabels(v1.LabelHostname, "node-x", v1.LabelTopologyZone, "z2").Obj(), schedtest.MakeNode("node-y").OnlyLabels(v1.LabelHostname, "node-y", v1.LabelTopologyZone, "z2").Obj(),
			},
			sel: &schedcore.SelectorSources{Services: []*v1.Service{service("default", "foo", "")}},
			// hostname: cnt×log(6)+2; zone: cnt×log(4)+4 (z1 has 6, z2 has 4).
			// a: 4×1.792+2 + 6×1.386+4 = 21.48 → 21; b: 17.90 → 18; x: 13.34 → 13;
			// y: 16.92 → 17. Normalized: 100×(21+13−s)/21.
			want: schedcore.NodeScoreList{{Name: "node-a", Score: 61}, {Name: "node-b", Score: 76}, {Name: "node-x", Score: 100}, {Name: "node-y", Score: 80}},
		},
		{
			name:         "system defaulting skips a pod no service selects",
			pod:          mkPod("p", "foo", "").obj(),
			existingPods: pods4321(),
			nodes:        hosts("node-a", "node-b"),
			sel:          &schedcore.SelectorSources{Services: []*v1.Service{service("default", "app", "x")}},
			// PreScore skips; Score then errors, so this case only checks PreScore.
			want: nil,
		},
		{
			name:         "hostname spread 4/2/1/~3~ over 3 candidates",
			pod:          mkPod("p", "foo", "").spread(1, v1.LabelHostname, sa, fooSelector).obj(),
			existingPods: pods4213(),
			nodes:        hosts("node-a", "node-b", "node-x"),
			failedNodes:  hosts("node-y"),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 33}, {Name: "node-b", Score: 83}, {Name: "node-x", Score: 100}},
		},
		{
			name:         "hostname spread 4/?2?/1/~3~: the candidate without the key scores 0",
			pod:          mkPod("p", "foo", "").spread(1, v1.LabelHostname, sa, fooSelector).obj(),
			existingPods: pods4213(),
			nodes:        []*v1.Node{schedtest.MakeNode("node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("n", "node-b").Obj(), schedtest.MakeNode("node-x").Obj()},
			failedNodes:  hosts("node-y"),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 16}, {Name: "node-b", Score: 0}, {Name: "node-x", Score: 100}},
		},
		{
			name:         "zone spread 4/2/1/~3~ counts the non-candidate's pods in its zone",
			pod:          mkPod("p", "foo", "").spread(1, "zone", sa, fooSelector).obj(),
			existingPods: pods4213(),
			nodes:        []*v1.Node{zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")},
			failedNodes:  []*v1.Node{zh("node-y", "zone2")},
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 75}, {Name: "node-b", Score: 75}, {Name: "node-x", Score: 100}},
		},
		{
			name: "zone and hostname constraints, 2/~1~/2/~4~",
			pod:  mkPod("p", "foo", "").spread(1, "zone", sa, fooSelector).spread(1, v1.LabelHostname, sa, fooSelector).obj(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
				schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj(), schedtest.MakePod("p-x2").Node("node-x").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(),
				schedtest.MakePod("p-y2").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y4").Node("node-y").Label("foo", "").Obj(),
			},
			nodes:       []*v1.Node{zh("node-a", "zone1"), zh("node-x", "zone2")},
			failedNodes: []*v1.Node{zh("node-b", "zone1"), zh("node-y", "zone2")},
			want:        schedcore.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-x", Score: 63}},
		},
		{
			name: "two zone constraints, 2 out of 4 nodes are candidates",
			pod:  mkPod("p", "foo", "", "bar", "").spread(1, "zone", sa, fooSelector).spread(1, "zone", sa, barSelector).obj(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "", "bar", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(),
			},
			nodes:       []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1").Obj(), schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2").Obj()},
			failedNodes: []*v1.Node{schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1").Obj(), schedtest.MakeNode("node-y").OnlyLabels("zone", "zone2").Obj()},
			want:        schedcore.NodeScoreList{{Name: "node-a", Score: 85}, {Name: "node-x", Score: 100}},
		},
		{
			// zone: foo pods spread 2/2/1/1; hostname: bar pods spread 0/1/0/1.
			name: "zone and hostname constraints with different selectors",
			pod:  mkPod("p", "foo", "", "bar", "").spread(1, "zone", sa, fooSelector).spread(1, v1.LabelHostname, sa, barSelector).obj(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "", "bar", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("bar", "").Obj(),
			},
			nodes: []*v1.Node{zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")},
			want:  schedcore.NodeScoreList{{Name: "node-a", Score: 60}, {Name: "node-b", Score: 20}, {Name: "node-x", Score: 100}, {Name: "node-y", Score: 60}},
		},
		{
			// zone: 0/0/2/2; hostname: 0/1/0/1.
			name:         "zone and hostname constraints with different selectors, some nodes have 0 pods",
			pod:          mkPod("p", "foo", "", "bar", "").spread(1, "zone", sa, fooSelector).spread(1, v1.LabelHostname, sa, barSelector).obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-b1").Node("node-b").Label("bar", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "", "bar", "").Obj()},
			nodes:        []*v1.Node{zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2"), zh("node-y", "zone2")},
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 60}, {Name: "node-x", Score: 40}, {Name: "node-y", Score: 0}},
		},
		{
			// zone: 2/2/1/~1~; hostname: 0/1/0/~1~.
			name: "zone and hostname constraints with different selectors, 3 out of 4 nodes are candidates",
			pod:  mkPod("p", "foo", "", "bar", "").spread(1, "zone", sa, fooSelector).spread(1, v1.LabelHostname, sa, barSelector).obj(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "", "bar", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("bar", "").Obj(),
			},
			nodes:       []*v1.Node{zh("node-a", "zone1"), zh("node-b", "zone1"), zh("node-x", "zone2")},
			failedNodes: []*v1.Node{zh("node-y", "zone2")},
			want:        schedcore.NodeScoreList{{Name: "node-a", Score: 50}, {Name: "node-b", Score: 25}, {Name: "node-x", Score: 100}},
		},
		{
			name: "pods of other namespaces do not count",
			pod:  mkPod("p", "foo", "").spread(1, v1.LabelHostname, sa, fooSelector).obj(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Namespace("ns1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(),
				schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(),
			},
			nodes: hosts("node-a", "node-b"),
			want:  schedcore.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 33}},
		},
		{
			name:         "terminating pods do not count",
			pod:          mkPod("p", "foo", "").spread(1, v1.LabelHostname, sa, fooSelector).obj(),
			existingPods: []*v1.Pod{terminating(schedtest.MakePod("p-a").Node("node-a").Label("foo", "").Obj()), schedtest.MakePod("p-b").Node("node-b").Label("foo", "").Obj()},
			nodes:        hosts("node-a", "node-b"),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 100}, {Name: "node-b", Score: 0}},
		},
		{
			name: "minDomains has no effect on soft constraints",
			pod:  mkPod("p", "foo", "").spread(2, "node", sa, fooSelector, minDomains(10)).obj(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
				schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-c1").Node("node-c").Label("foo", "").Obj(),
			},
			nodes: []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b").Obj(), schedtest.MakeNode("node-c").OnlyLabels("node", "node-c").Obj()},
			want:  schedcore.NodeScoreList{{Name: "node-a", Score: 75}, {Name: "node-b", Score: 75}, {Name: "node-c", Score: 100}},
		},
		{
			name:         "nodeAffinityPolicy Honor leaves pods on nodes outside the nodeSelector uncounted",
			pod:          mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "node", sa, fooSelector).obj(),
			existingPods: policyPods(),
			nodes:        policyNodes(),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 0}, {Name: "node-b", Score: 33}, {Name: "node-c", Score: 100}},
		},
		{
			name:         "nodeAffinityPolicy Ignore counts pods on nodes outside the nodeSelector",
			pod:          mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "node", sa, fooSelector, affinityPolicy(ignore)).obj(),
			existingPods: policyPods(),
			nodes:        policyNodes(),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 66}, {Name: "node-b", Score: 100}, {Name: "node-c", Score: 100}},
		},
		{
			name:         "nodeAffinityPolicy Honor leaves pods on nodes outside the node affinity uncounted",
			pod:          mkPod("p", "foo", "").affinityIn("foo", "").spread(1, "node", sa, fooSelector).obj(),
			existingPods: policyPods(),
			nodes:        policyNodes(),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 0}, {Name: "node-b", Score: 33}, {Name: "node-c", Score: 100}},
		},
		{
			name:         "nodeAffinityPolicy Ignore counts pods on nodes outside the node affinity",
			pod:          mkPod("p", "foo", "").affinityIn("foo", "").spread(1, "node", sa, fooSelector, affinityPolicy(ignore)).obj(),
			existingPods: policyPods(),
			nodes:        policyNodes(),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 66}, {Name: "node-b", Score: 100}, {Name: "node-c", Score: 100}},
		},
		{
			name:         "nodeTaintsPolicy Honor leaves pods on tainted nodes uncounted",
			pod:          mkPod("p", "foo", "").spread(1, "node", sa, fooSelector, taintsPolicy(honor)).obj(),
			existingPods: policyPods(),
			nodes:        taintNodes(),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 0}, {Name: "node-b", Score: 33}, {Name: "node-c", Score: 100}},
		},
		{
			name:         "nodeTaintsPolicy Ignore counts pods on tainted nodes",
			pod:          mkPod("p", "foo", "").spread(1, "node", sa, fooSelector).obj(),
			existingPods: policyPods(),
			nodes:        taintNodes(),
			want:         schedcore.NodeScoreList{{Name: "node-a", Score: 66}, {Name: "node-b", Score: 100}, {Name: "node-c", Score: 100}},
		},
		{
			name: "matchLabelKeys are ignored with MatchLabelKeysInPodTopologySpread off",
			pod: mkPod("p", "foo", "", "bar", "", "baz", "").spread(1, "zone", sa, fooSelector, matchLabelKeys("baz")).
				spread(1, v1.LabelHostname, sa, barSelector, matchLabelKeys("baz")).obj(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "", "bar", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-c").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-c").Label("bar", "").Obj(),
			},
			nodes:              matchKeyNodes(),
			disableMatchLabels: true,
			want:               schedcore.NodeScoreList{{Name: "node-a", Score: 60}, {Name: "node-b", Score: 20}, {Name: "node-c", Score: 60}, {Name: "node-d", Score: 100}},
		},
		{
			name: "matchLabelKeys are ANDed with an empty label selector",
			pod: mkPod("p", "foo", "", "bar", "").spread(1, "zone", sa, &metav1.LabelSelector{}, matchLabelKeys("foo")).
				spread(1, v1.LabelHostname, sa, &metav1.LabelSelector{}, matchLabelKeys("bar")).obj(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "", "bar", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-c").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-c").Label("bar", "").Obj(),
			},
			nodes: matchKeyNodes(),
			want:  schedcore.NodeScoreList{{Name: "node-a", Score: 60}, {Name: "node-b", Score: 20}, {Name: "node-c", Score: 60}, {Name: "node-d", Score: 100}},
		},
		{
			name: "matchLabelKeys are ANDed with a non-empty label selector",
			pod: mkPod("p", "foo", "", "bar", "", "baz", "").spread(1, "zone", sa, fooSelector).
				spread(1, v1.LabelHostname, sa, barSelector, matchLabelKeys("baz")).obj(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "", "bar", "", "baz", "").Obj(),
				schedtest.MakePod("p-c1").Node("node-c").Label("foo", "").Obj(), schedtest.MakePod("p-c2").Node("node-c").Label("bar", "").Obj(), schedtest.MakePod("p-d3").Node("node-c").Label("bar", "", "baz", "").Obj(),
			},
			nodes: matchKeyNodes(),
			want:  schedcore.NodeScoreList{{Name: "node-a", Score: 60}, {Name: "node-b", Score: 20}, {Name: "node-c", Score: 60}, {Name: "node-d", Score: 100}},
		},
	}
	// Each case runs twice: with the snapshot's nodes (PreScore and Score
	// read the label columns) and with copies of them (the label maps).
	for _, tt := range tests {
		for _, copies := range []bool{false, true} {
			name := tt.name
			if copies {
				name += " (label maps)"
			}
			t.Run(name, func(t *testing.T) {
				all := append(append([]*v1.Node{}, tt.nodes...), tt.failedNodes...)
				// kube's test runs with defaultingType System.
				p, snap := newPlugin(t, &configv1.PodTopologySpreadArgs{DefaultingType: configv1.SystemDefaulting}, tt.existingPods, all, tt.sel)
				p.enableMatchLabelKeys = !tt.disableMatchLabels
				state := schedcore.NewCycleState()
				filtered := nodeInfos(t, snap, tt.nodes)
				if copies {
					for i := range filtered {
						filtered[i] = filtered[i].Clone()
					}
				}
				s := p.PreScore(context.Background(), state, tt.pod, filtered)
				if tt.want == nil {
					if !s.IsSkip() {
						t.Fatalf("PreScore = %v, want Skip", s)
					}
					return
				}
				if !s.IsSuccess() {
					t.Fatalf("PreScore: %v", s)
				}
				var got schedcore.NodeScoreList
				for _, ni := range filtered {
					score, s := p.Score(context.Background(), state, tt.pod, ni)
					if !s.IsSuccess() {
						t.Fatalf("Score(%s): %v", ni.Name(), s)
					}
					got = append(got, schedcore.NodeScore{Name: ni.Name(), Score: score})
				}
				if s := plugintest.Normalize(context.Background(), p, state, tt.pod, got); !s.IsSuccess() {
					t.Fatalf("NormalizeScore: %v", s)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("scores (-want +got):\n%s", diff)
				}
			})
		}
	}
}
