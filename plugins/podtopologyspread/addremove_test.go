package podtopologyspread

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestPreFilterStateAddPod(t *testing.T) {
	foo, bar := mustSel(t, fooSelector), mustSel(t, barSelector)
	nodeConstraint, zoneConstraint := want(1, "node", foo), want(1, "zone", foo)
	twoNodes := func() []*v1.Node {
		return []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.ZoneNode("node-b", "zone1").Obj()}
	}
	// node-a has foo=bar (outside an affinity "foo NotIn bar"), node-b has foo="".
	affinityNodes := func() []*v1.Node {
		return []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node-a", "foo", "bar").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone2", "node", "node-b", "foo", "").Obj()}
	}
	tests := []struct {
		name         string
		preemptor    *v1.Pod
		addedPod     *v1.Pod
		existingPods []*v1.Pod
		nodeIdx      int // the node addedPod goes to
		nodes        []*v1.Node
		want         *filterView
	}{
		{
			name:      "adding to an empty cluster moves the minimum to the other node",
			preemptor: mkPod("p", "foo", "").spread(1, "node", dns, fooSelector).obj(),
			addedPod:  schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(),
			nodes:     twoNodes(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{nodeConstraint},
				CriticalPaths:     []*pathsView{paths("node-b", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 0}},
			},
		},
		{
			name:         "adding to the minimum node evens the counts",
			preemptor:    mkPod("p", "foo", "").spread(1, "node", dns, fooSelector).obj(),
			addedPod:     schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj()},
			nodes:        twoNodes(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{nodeConstraint},
				CriticalPaths:     []*pathsView{paths("node-a", 1, "node-b", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 1}},
			},
		},
		{
			name:         "a pod of another namespace changes nothing",
			preemptor:    mkPod("p", "foo", "").spread(1, "node", dns, fooSelector).obj(),
			addedPod:     schedtest.MakePod("p-a1").Namespace("ns1").Node("node-a").Label("foo", "").Obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj()},
			nodes:        twoNodes(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{nodeConstraint},
				CriticalPaths:     []*pathsView{paths("node-a", 0, "node-b", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 0, "node-b": 1}},
			},
		},
		{
			name:         "adding to a non-critical node keeps the minimum",
			preemptor:    mkPod("p", "foo", "").spread(1, "node", dns, fooSelector).obj(),
			addedPod:     schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj()},
			nodeIdx:      1,
			nodes:        twoNodes(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{nodeConstraint},
				CriticalPaths:     []*pathsView{paths("node-a", 0, "node-b", 2)},
				TpValueToMatchNum: []map[string]int{{"node-a": 0, "node-b": 2}},
			},
		},
		{
			name:      "adding updates both the zone and the node constraint",
			preemptor: mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector).obj(),
			addedPod:  schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(),
			nodes:     []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.ZoneNode("node-x", "zone2").Obj()},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{zoneConstraint, nodeConstraint},
				CriticalPaths: []*pathsView{paths("zone2", 0, "zone1", 1), paths("node-x", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 1, "zone2": 0},
					{"node-a": 1, "node-x": 0},
				},
			},
		},
		{
			name:         "a pod matching only the zone constraint's selector updates only it",
			preemptor:    mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, barSelector).obj(),
			addedPod:     schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-b1").Node("node-b").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-x2").Node("node-x").Label("bar", "").Obj()},
			nodes:        []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.ZoneNode("node-b", "zone1").Obj(), schedtest.ZoneNode("node-x", "zone2").Obj()},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{zoneConstraint, want(1, "node", bar)},
				CriticalPaths: []*pathsView{paths("zone2", 1, "zone1", 2), paths("node-a", 0, "node-b", 1)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 2, "zone2": 1},
					{"node-a": 0, "node-b": 1, "node-x": 2},
				},
			},
		},
		{
			name:         "a pod added to a node outside the preemptor's node affinity is not counted",
			preemptor:    mkPod("p", "foo", "").affinityNotIn("foo", "bar").spread(1, "zone", dns, fooSelector).obj(),
			addedPod:     schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj()},
			nodes:        affinityNodes(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint},
				CriticalPaths:     []*pathsView{paths("zone2", 1, "", math.MaxInt32)},
				TpValueToMatchNum: []map[string]int{{"zone2": 1}},
			},
		},
		{
			name:         "a pod added to a node inside the preemptor's node affinity is counted",
			preemptor:    mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			addedPod:     schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj()},
			nodeIdx:      1,
			nodes:        affinityNodes(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint},
				CriticalPaths:     []*pathsView{paths("zone1", 1, "zone2", 2)},
				TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 2}},
			},
		},
		{
			name:         "a pod the selector does not match is not counted",
			preemptor:    mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			addedPod:     schedtest.MakePod("p-b1").Node("node-b").Obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj()},
			nodeIdx:      1,
			nodes:        affinityNodes(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint},
				CriticalPaths:     []*pathsView{paths("zone1", 1, "zone2", 1)},
				TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 1}},
			},
		},
		{
			name:         "a pod added to a tainted node counts with nodeTaintsPolicy Ignore",
			preemptor:    mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			addedPod:     schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj()},
			nodes:        []*v1.Node{tainted(schedtest.ZoneNode("node-a", "zone1").Obj(), unschedulableTaint), schedtest.ZoneNode("node-b", "zone2").Obj()},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint},
				CriticalPaths:     []*pathsView{paths("zone2", 1, "zone1", 2)},
				TpValueToMatchNum: []map[string]int{{"zone1": 2, "zone2": 1}},
			},
		},
		{
			name:         "a pod added to a node with untolerated taints is not counted with nodeTaintsPolicy Honor",
			preemptor:    mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector, taintsPolicy(honor)).obj(),
			addedPod:     schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj()},
			nodes:        []*v1.Node{tainted(schedtest.ZoneNode("node-a", "zone1").Obj(), unschedulableTaint), schedtest.ZoneNode("node-b", "zone2").Obj()},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint.policies(honor, honor)},
				CriticalPaths:     []*pathsView{paths("zone2", 1, "", math.MaxInt32)},
				TpValueToMatchNum: []map[string]int{{"zone2": 1}},
			},
		},
		{
			name:         "a pod added to a node lacking a topology key is not counted",
			preemptor:    mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector).obj(),
			addedPod:     schedtest.MakePod("p-c1").Node("node-c").Label("foo", "").Obj(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj()},
			nodeIdx:      1,
			nodes:        []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.MakeNode("node-c").OnlyLabels("zone", "zone1").Obj()},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint, nodeConstraint},
				CriticalPaths:     []*pathsView{paths("zone1", 1, "", math.MaxInt32), paths("node-a", 1, "", math.MaxInt32)},
				TpValueToMatchNum: []map[string]int{{"zone1": 1}, {"node-a": 1}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, snap := newPlugin(t, listArgs(), tt.existingPods, tt.nodes, nil)
			cs := schedcore.NewCycleState()
			if _, s := p.PreFilter(context.Background(), cs, tt.preemptor, snap.List()); !s.IsSuccess() {
				t.Fatal(s.AsError())
			}
			before := preFilterView(t, cs)
			cloned := cs.Clone()
			nodeInfo, err := snap.Get(tt.nodes[tt.nodeIdx].Name)
			if err != nil {
				t.Fatal(err)
			}
			if s := p.AddPod(context.Background(), cloned, tt.preemptor, schedcore.NewPodInfo(tt.addedPod), nodeInfo); !s.IsSuccess() {
				t.Fatal(s.AsError())
			}
			got := preFilterView(t, cloned)
			if diff := cmp.Diff(tt.want, got, stateCmpOpts...); diff != "" {
				t.Errorf("AddPod state (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, preFilterView(t, cs), stateCmpOpts...); diff != "" {
				t.Errorf("AddPod on a clone changed the original state (-before +after):\n%s", diff)
			}
		})
	}
}

func TestPreFilterStateRemovePod(t *testing.T) {
	foo := mustSel(t, fooSelector)
	nodeConstraint, zoneConstraint := want(1, "node", foo), want(1, "zone", foo)
	threeNodes := func() []*v1.Node {
		return []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.ZoneNode("node-b", "zone1").Obj(), schedtest.ZoneNode("node-x", "zone2").Obj()}
	}
	tests := []struct {
		name          string
		preemptor     *v1.Pod
		nodes         []*v1.Node
		existingPods  []*v1.Pod
		deletedPodIdx int     // index into existingPods
		deletedPod    *v1.Pod // used when deletedPodIdx is -1
		nodeIdx       int     // the node deletedPod is on
		want          *filterView
	}{
		{
			name:         "removing from the larger zone evens the zones",
			preemptor:    mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes:        threeNodes(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj()},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint},
				CriticalPaths:     []*pathsView{paths("zone1", 1, "zone2", 1)},
				TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 1}},
			},
		},
		{
			name:         "removing makes the zone the new minimum",
			preemptor:    mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj()},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint},
				CriticalPaths:     []*pathsView{paths("zone1", 1, "zone2", 2)},
				TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 2}},
			},
		},
		{
			name:      "removing a pod the selector does not match changes nothing",
			preemptor: mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes:     fourNodes(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a0").Node("node-a").Label("bar", "").Obj(), schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
				schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj()},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint},
				CriticalPaths:     []*pathsView{paths("zone1", 2, "zone2", 2)},
				TpValueToMatchNum: []map[string]int{{"zone1": 2, "zone2": 2}},
			},
		},
		{
			name:          "removing a pod that is not there and does not match changes nothing",
			preemptor:     mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes:         fourNodes(),
			existingPods:  []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj()},
			deletedPodIdx: -1,
			deletedPod:    schedtest.MakePod("p-a0").Node("node-a").Label("bar", "").Obj(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint},
				CriticalPaths:     []*pathsView{paths("zone1", 2, "zone2", 2)},
				TpValueToMatchNum: []map[string]int{{"zone1": 2, "zone2": 2}},
			},
		},
		{
			name:      "removing updates both constraints",
			preemptor: mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector).obj(),
			nodes:     threeNodes(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
				schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj(), schedtest.MakePod("p-x2").Node("node-x").Label("foo", "").Obj()},
			deletedPodIdx: 3,
			nodeIdx:       2,
			want: &filterView{
				Constraints:   []topologySpreadConstraint{zoneConstraint, nodeConstraint},
				CriticalPaths: []*pathsView{paths("zone2", 1, "zone1", 3), paths("node-b", 1, "node-x", 1)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 3, "zone2": 1},
					{"node-a": 2, "node-b": 1, "node-x": 1},
				},
			},
		},
		{
			name:          "removing a pod of another namespace changes nothing",
			preemptor:     mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes:         threeNodes(),
			existingPods:  []*v1.Pod{schedtest.MakePod("p-a1").Namespace("other").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj()},
			deletedPodIdx: 0,
			want: &filterView{
				Constraints:       []topologySpreadConstraint{zoneConstraint},
				CriticalPaths:     []*pathsView{paths("zone1", 1, "zone2", 1)},
				TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 1}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, snap := newPlugin(t, listArgs(), tt.existingPods, tt.nodes, nil)
			cs := schedcore.NewCycleState()
			if _, s := p.PreFilter(context.Background(), cs, tt.preemptor, snap.List()); !s.IsSuccess() {
				t.Fatal(s.AsError())
			}
			deleted := tt.deletedPod
			if tt.deletedPodIdx >= 0 && tt.deletedPodIdx < len(tt.existingPods) {
				deleted = tt.existingPods[tt.deletedPodIdx]
			}
			nodeInfo, err := snap.Get(tt.nodes[tt.nodeIdx].Name)
			if err != nil {
				t.Fatal(err)
			}
			if s := p.RemovePod(context.Background(), cs, tt.preemptor, schedcore.NewPodInfo(deleted), nodeInfo); !s.IsSuccess() {
				t.Fatal(s.AsError())
			}
			got := preFilterView(t, cs)
			if diff := cmp.Diff(tt.want, got, stateCmpOpts...); diff != "" {
				t.Errorf("RemovePod state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddRemovePodWithoutPreFilterState(t *testing.T) {
	p, snap := newPlugin(t, listArgs(), nil, []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj()}, nil)
	ni, _ := snap.Get("node-a")
	pod := mkPod("p", "foo", "").obj()
	wantMsg := `reading "PreFilterPodTopologySpread" from cycleState: not found`
	for name, s := range map[string]*schedcore.Status{
		"AddPod":    p.AddPod(context.Background(), schedcore.NewCycleState(), pod, schedcore.NewPodInfo(schedtest.MakePod("q").Node("node-a").Obj()), ni),
		"RemovePod": p.RemovePod(context.Background(), schedcore.NewCycleState(), pod, schedcore.NewPodInfo(schedtest.MakePod("q").Node("node-a").Obj()), ni),
		"Filter":    p.Filter(context.Background(), schedcore.NewCycleState(), pod, ni),
	} {
		if s.Code() != schedcore.Error || s.Message() != wantMsg {
			t.Errorf("%s without PreFilter state = %v, want Error %q", name, s, wantMsg)
		}
	}
}
