package podtopologyspread

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// fourNodes are node-a, node-b in zone1 and node-x, node-y in zone2.
func fourNodes() []*v1.Node {
	return []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.ZoneNode("node-b", "zone1").Obj(), schedtest.ZoneNode("node-x", "zone2").Obj(), schedtest.ZoneNode("node-y", "zone2").Obj()}
}

func TestPreFilterState(t *testing.T) {
	// 2 on node-a, 1 on node-b, 2 on node-y.
	fivePods := func() []*v1.Pod {
		return []*v1.Pod{
			schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
			schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "").Obj(),
		}
	}
	// 2 on node-a, 1 on node-b, 4 on node-y.
	sevenPods := func() []*v1.Pod {
		return append(fivePods(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y4").Node("node-y").Label("foo", "").Obj())
	}
	// bar: 1 on node-a, 2 on node-b; node-c has a pod without bar.
	policyPods := func() []*v1.Pod {
		return []*v1.Pod{schedtest.MakePod("p-a").Node("node-a").Label("bar", "").Obj(), schedtest.MakePod("p-b").Node("node-b").Label("bar", "").Obj(), schedtest.MakePod("p-c").Node("node-b").Label("bar", "").Obj(), schedtest.MakePod("p-d").Node("node-c").Obj()}
	}
	foo, bar := mustSel(t, fooSelector), mustSel(t, barSelector)

	tests := []struct {
		name                string
		pod                 *v1.Pod
		nodes               []*v1.Node
		existingPods        []*v1.Pod
		sel                 *schedcore.SelectorSources
		defaultConstraints  []v1.TopologySpreadConstraint
		disableMatchLabels  bool
		systemDefaulting    bool
		want                *filterView
		wantPreFilterStatus *schedcore.Status
	}{
		{
			name:  "a clean cluster with one constraint has zero counts in every zone",
			pod:   mkPod("p", "foo", "").spread(5, "zone", dns, matchLabels("foo", "bar")).obj(),
			nodes: fourNodes(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(5, "zone", mustSel(t, matchLabels("foo", "bar")))},
				CriticalPaths:     []*pathsView{paths("zone1", 0, "zone2", 0)},
				TpValueToMatchNum: []map[string]int{{"zone1": 0, "zone2": 0}},
			},
		},
		{
			name:         "one constraint counts matching pods per zone",
			pod:          mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: fivePods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", foo)},
				CriticalPaths:     []*pathsView{paths("zone2", 2, "zone1", 3)},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2}},
			},
		},
		{
			name:         "a null label selector matches no pod",
			pod:          mkPod("p", "foo", "").spread(1, "zone", dns, nil).obj(),
			nodes:        fourNodes(),
			existingPods: fivePods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", labels.Nothing())},
				CriticalPaths:     []*pathsView{paths("zone2", 0, "zone1", 0)},
				TpValueToMatchNum: []map[string]int{{"zone1": 0, "zone2": 0}},
			},
		},
		{
			name:         "an empty zone is the critical path on a 3-zone cluster",
			pod:          mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes:        append(fourNodes(), schedtest.ZoneNode("node-o", "zone3").Obj(), schedtest.ZoneNode("node-p", "zone3").Obj()),
			existingPods: fivePods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", foo)},
				CriticalPaths:     []*pathsView{paths("zone3", 0, "zone2", 2)},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2, "zone3": 0}},
			},
		},
		{
			name:  "pods in other namespaces do not count",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Namespace("ns1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
				schedtest.MakePod("p-y1").Namespace("ns2").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "").Obj(),
			},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", foo)},
				CriticalPaths:     []*pathsView{paths("zone2", 1, "zone1", 2)},
				TpValueToMatchNum: []map[string]int{{"zone1": 2, "zone2": 1}},
			},
		},
		{
			name:         "two constraints count per zone and per node",
			pod:          mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: sevenPods(),
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", foo)},
				CriticalPaths: []*pathsView{paths("zone1", 3, "zone2", 4), paths("node-x", 0, "node-b", 1)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 3, "zone2": 4},
					{"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
				},
			},
		},
		{
			name: "soft constraints are left out of the filter state",
			pod: mkPod("p", "foo", "").spread(1, "zone", sa, fooSelector).spread(1, "zone", dns, fooSelector).
				spread(1, "node", sa, fooSelector).spread(1, "node", dns, fooSelector).obj(),
			nodes:        []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.ZoneNode("node-b", "zone1").Obj(), schedtest.ZoneNode("node-y", "zone2").Obj()},
			existingPods: sevenPods(),
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", foo)},
				CriticalPaths: []*pathsView{paths("zone1", 3, "zone2", 4), paths("node-b", 1, "node-a", 2)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 3, "zone2": 4},
					{"node-a": 2, "node-b": 1, "node-y": 4},
				},
			},
		},
		{
			name:         "constraints with different selectors count different pods",
			pod:          mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, barSelector).obj(),
			nodes:        []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.ZoneNode("node-b", "zone1").Obj(), schedtest.ZoneNode("node-y", "zone2").Obj()},
			existingPods: []*v1.Pod{schedtest.MakePod("p-a").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b").Node("node-b").Label("bar", "").Obj()},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", bar)},
				CriticalPaths: []*pathsView{paths("zone2", 0, "zone1", 1), paths("node-a", 0, "node-y", 0)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 1, "zone2": 0},
					{"node-a": 0, "node-b": 1, "node-y": 0},
				},
			},
		},
		{
			name:  "pods with several labels count for each constraint they match",
			pod:   mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, barSelector).obj(),
			nodes: []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.ZoneNode("node-b", "zone1").Obj(), schedtest.ZoneNode("node-y", "zone2").Obj()},
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(),
				schedtest.MakePod("p-y4").Node("node-y").Label("foo", "", "bar", "").Obj(),
			},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", bar)},
				CriticalPaths: []*pathsView{paths("zone1", 3, "zone2", 4), paths("node-b", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 3, "zone2": 4},
					{"node-a": 1, "node-b": 0, "node-y": 2},
				},
			},
		},
		{
			name: "nodes outside the pod's node affinity do not count",
			pod: mkPod("p", "foo", "").affinityNotIn("node", "node-x").
				spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: sevenPods(),
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", foo)},
				CriticalPaths: []*pathsView{paths("zone1", 3, "zone2", 4), paths("node-b", 1, "node-a", 2)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 3, "zone2": 4},
					{"node-a": 2, "node-b": 1, "node-y": 4},
				},
			},
		},
		{
			name: "hard default constraints take the selector of the pod's service",
			pod:  mkPod("p", "foo", "bar", "baz", "kar").obj(),
			defaultConstraints: []v1.TopologySpreadConstraint{
				tsc(3, "node", dns, nil), tsc(2, "node", sa, nil), tsc(5, "rack", dns, nil),
			},
			sel: &schedcore.SelectorSources{Services: []*v1.Service{service("default", "foo", "bar")}},
			want: &filterView{
				Constraints: []topologySpreadConstraint{
					want(3, "node", mustSel(t, matchLabels("foo", "bar"))),
					want(5, "rack", mustSel(t, matchLabels("foo", "bar"))),
				},
				CriticalPaths:     []*pathsView{paths("", math.MaxInt32, "", math.MaxInt32), paths("", math.MaxInt32, "", math.MaxInt32)},
				TpValueToMatchNum: []map[string]int{{}, {}},
			},
		},
		{
			name:                "default constraints are skipped when no service selects the pod",
			pod:                 mkPod("p", "foo", "bar").obj(),
			defaultConstraints:  []v1.TopologySpreadConstraint{tsc(3, "node", dns, nil)},
			sel:                 &schedcore.SelectorSources{Services: []*v1.Service{service("default", "baz", "kep")}},
			wantPreFilterStatus: schedcore.NewStatus(schedcore.Skip),
		},
		{
			name:                "default constraints are skipped when the selecting service is in another namespace",
			pod:                 mkPod("p", "foo", "bar").obj(),
			defaultConstraints:  []v1.TopologySpreadConstraint{tsc(3, "node", dns, nil)},
			sel:                 &schedcore.SelectorSources{Services: []*v1.Service{service("other", "foo", "bar")}},
			wantPreFilterStatus: schedcore.NewStatus(schedcore.Skip),
		},
		{
			name: "the pod's own constraints replace the default ones",
			pod: mkPod("p", "foo", "bar", "baz", "tar").spread(1, "zone", dns, matchLabels("baz", "tar")).
				spread(2, "planet", sa, matchLabels("fot", "rok")).obj(),
			defaultConstraints: []v1.TopologySpreadConstraint{tsc(2, "node", dns, nil)},
			sel:                &schedcore.SelectorSources{Services: []*v1.Service{service("default", "foo", "bar")}},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", mustSel(t, matchLabels("baz", "tar")))},
				CriticalPaths:     []*pathsView{paths("", math.MaxInt32, "", math.MaxInt32)},
				TpValueToMatchNum: []map[string]int{{}},
			},
		},
		{
			name:                "soft default constraints leave nothing to filter",
			pod:                 mkPod("p", "foo", "bar").obj(),
			defaultConstraints:  []v1.TopologySpreadConstraint{tsc(2, "node", sa, nil)},
			sel:                 &schedcore.SelectorSources{Services: []*v1.Service{service("default", "foo", "bar")}},
			wantPreFilterStatus: schedcore.NewStatus(schedcore.Skip),
		},
		{
			name:                "the system default constraints are soft only",
			pod:                 mkPod("p", "foo", "bar").obj(),
			sel:                 &schedcore.SelectorSources{Services: []*v1.Service{service("default", "foo", "bar")}},
			nodes:               []*v1.Node{schedtest.MakeNode("node-a").Obj()},
			systemDefaulting:    true,
			wantPreFilterStatus: schedcore.NewStatus(schedcore.Skip),
		},
		{
			name:         "minDomains keeps the counts per domain",
			pod:          mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector, minDomains(3)).spread(1, "node", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: sevenPods(),
			want: &filterView{
				Constraints: []topologySpreadConstraint{
					func() topologySpreadConstraint { c := want(1, "zone", foo); c.MinDomains = 3; return c }(),
					want(1, "node", foo),
				},
				CriticalPaths: []*pathsView{paths("zone1", 3, "zone2", 4), paths("node-x", 0, "node-b", 1)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 3, "zone2": 4},
					{"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
				},
			},
		},
		{
			name:         "nodeAffinityPolicy Honor (the default) leaves out nodes outside the nodeSelector",
			pod:          mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "node", dns, barSelector).obj(),
			nodes:        []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b", "foo", "").Obj(), schedtest.MakeNode("node-c").OnlyLabels("node", "node-c", "bar", "").Obj()},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar)},
				CriticalPaths:     []*pathsView{paths("node-a", 1, "node-b", 2)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2}},
			},
		},
		{
			name:         "nodeAffinityPolicy Ignore counts nodes outside the nodeSelector",
			pod:          mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "node", dns, barSelector, affinityPolicy(ignore)).obj(),
			nodes:        []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b", "foo", "").Obj(), schedtest.MakeNode("node-c").OnlyLabels("node", "node-c", "bar", "").Obj()},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar).policies(ignore, ignore)},
				CriticalPaths:     []*pathsView{paths("node-c", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
			},
		},
		{
			name:         "nodeAffinityPolicy Honor leaves out nodes outside the required node affinity",
			pod:          mkPod("p", "foo", "").affinityIn("foo", "").spread(1, "node", dns, barSelector).obj(),
			nodes:        []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b", "foo", "").Obj(), schedtest.MakeNode("node-c").OnlyLabels("node", "node-c", "bar", "").Obj()},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar)},
				CriticalPaths:     []*pathsView{paths("node-a", 1, "node-b", 2)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2}},
			},
		},
		{
			name:         "nodeAffinityPolicy Ignore counts nodes outside the required node affinity",
			pod:          mkPod("p", "foo", "").affinityIn("foo", "").spread(1, "node", dns, barSelector, affinityPolicy(ignore)).obj(),
			nodes:        []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b", "foo", "").Obj(), schedtest.MakeNode("node-c").OnlyLabels("node", "node-c", "bar", "").Obj()},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar).policies(ignore, ignore)},
				CriticalPaths:     []*pathsView{paths("node-c", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
			},
		},
		{
			name:         "nodeTaintsPolicy Ignore (the default) counts tainted nodes",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, barSelector).obj(),
			nodes:        []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b").Obj(), tainted(schedtest.MakeNode("node-c").OnlyLabels("node", "node-c", "bar", "").Obj(), unschedulableTaint)},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar)},
				CriticalPaths:     []*pathsView{paths("node-c", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
			},
		},
		{
			name:         "nodeTaintsPolicy Honor leaves out nodes with untolerated taints",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, barSelector, taintsPolicy(honor)).obj(),
			nodes:        []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b").Obj(), tainted(schedtest.MakeNode("node-c").OnlyLabels("node", "node-c", "bar", "").Obj(), unschedulableTaint)},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar).policies(honor, honor)},
				CriticalPaths:     []*pathsView{paths("node-a", 1, "node-b", 2)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2}},
			},
		},
		{
			name:         "nodeTaintsPolicy Honor counts nodes whose taints the pod tolerates",
			pod:          mkPod("p", "foo", "").tolerate(v1.TaintNodeUnschedulable).spread(1, "node", dns, barSelector, taintsPolicy(honor)).obj(),
			nodes:        []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b").Obj(), tainted(schedtest.MakeNode("node-c").OnlyLabels("node", "node-c", "bar", "").Obj(), unschedulableTaint)},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar).policies(honor, honor)},
				CriticalPaths:     []*pathsView{paths("node-c", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
			},
		},
		{
			name: "nodeTaintsPolicy Honor ignores PreferNoSchedule taints",
			pod:  mkPod("p", "foo", "").spread(1, "node", dns, barSelector, taintsPolicy(honor)).obj(),
			nodes: []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b").Obj(),
				tainted(schedtest.MakeNode("node-c").OnlyLabels("node", "node-c").Obj(), v1.Taint{Key: "soft", Effect: v1.TaintEffectPreferNoSchedule})},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar).policies(honor, honor)},
				CriticalPaths:     []*pathsView{paths("node-c", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
			},
		},
		{
			name: "policies apply per constraint: zone honors the nodeSelector, node ignores it",
			pod: mkPod("p", "foo", "").nodeSelector("foo", "").
				spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector, affinityPolicy(ignore)).obj(),
			nodes: []*v1.Node{
				schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1", "node", "node-b").Obj(),
				schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2", "node", "node-x", "foo", "").Obj(),
			},
			existingPods: []*v1.Pod{schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj()},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", foo).policies(ignore, ignore)},
				CriticalPaths: []*pathsView{paths("zone1", 0, "zone2", 1), paths("node-a", 0, "node-x", 1)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 0, "zone2": 1},
					{"node-a": 0, "node-b": 2, "node-x": 1},
				},
			},
		},
		{
			name: "policies apply per constraint: zone honors taints, node ignores them",
			pod:  mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector, taintsPolicy(honor)).spread(1, "node", dns, fooSelector).obj(),
			nodes: []*v1.Node{
				schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node-a", "foo", "").Obj(), tainted(schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1", "node", "node-b").Obj(), unschedulableTaint),
				schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2", "node", "node-x", "foo", "").Obj(),
			},
			existingPods: []*v1.Pod{schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj()},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo).policies(honor, honor), want(1, "node", foo)},
				CriticalPaths: []*pathsView{paths("zone1", 0, "zone2", 1), paths("node-a", 0, "node-x", 1)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 0, "zone2": 1},
					{"node-a": 0, "node-b": 2, "node-x": 1},
				},
			},
		},
		{
			name:               "matchLabelKeys are ignored with MatchLabelKeysInPodTopologySpread off",
			pod:                mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, fooSelector, matchLabelKeys("bar")).obj(),
			nodes:              fourNodes(),
			existingPods:       fivePods(),
			disableMatchLabels: true,
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", foo)},
				CriticalPaths:     []*pathsView{paths("zone2", 2, "zone1", 3)},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2}},
			},
		},
		{
			name:  "matchLabelKeys are ANDed with a non-empty label selector",
			pod:   mkPod("p", "foo", "", "bar", "a").spread(1, "zone", dns, fooSelector, matchLabelKeys("bar")).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "", "bar", "a").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "", "bar", "a").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("bar", "").Obj(),
			},
			want: &filterView{
				Constraints: []topologySpreadConstraint{want(1, "zone", mustSel(t, &metav1.LabelSelector{
					MatchLabels:      map[string]string{"bar": "a"},
					MatchExpressions: fooSelector.MatchExpressions,
				}))},
				CriticalPaths:     []*pathsView{paths("zone2", 1, "zone1", 1)},
				TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 1}},
			},
		},
		{
			name:  "matchLabelKeys are ANDed with an empty label selector",
			pod:   mkPod("p", "foo", "a").spread(1, "zone", dns, &metav1.LabelSelector{}, matchLabelKeys("foo")).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "a").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "a").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "a").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "a").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "a").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "b").Obj(),
			},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", mustSel(t, matchLabels("foo", "a")))},
				CriticalPaths:     []*pathsView{paths("zone2", 2, "zone1", 3)},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2}},
			},
		},
		{
			name:         "matchLabelKeys do not turn a nil label selector into one that matches",
			pod:          mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, nil, matchLabelKeys("bar")).obj(),
			nodes:        fourNodes(),
			existingPods: fivePods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", labels.Nothing())},
				CriticalPaths:     []*pathsView{paths("zone2", 0, "zone1", 0)},
				TpValueToMatchNum: []map[string]int{{"zone1": 0, "zone2": 0}},
			},
		},
		{
			name:         "a matchLabelKey the pod does not carry is ignored",
			pod:          mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector, matchLabelKeys("bar")).obj(),
			nodes:        fourNodes(),
			existingPods: fivePods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", foo)},
				CriticalPaths:     []*pathsView{paths("zone2", 2, "zone1", 3)},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2}},
			},
		},
		{
			name:  "two constraints on the same topology key are counted apart",
			pod:   mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, fooSelector).spread(1, "zone", dns, barSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("bar", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("bar", "").Obj(),
			},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "zone", bar)},
				CriticalPaths: []*pathsView{paths("zone2", 1, "zone1", 2), paths("zone1", 1, "zone2", 3)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 2, "zone2": 1},
					{"zone1": 1, "zone2": 3},
				},
			},
		},
		{
			name: "nodes missing any topology key count for no constraint",
			pod:  mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector).obj(),
			nodes: []*v1.Node{
				schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1").Obj(), schedtest.MakeNode("node-x").OnlyLabels("node", "node-x").Obj(),
			},
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj()},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", foo)},
				CriticalPaths:     []*pathsView{paths("zone1", 1, "", math.MaxInt32), paths("node-a", 1, "", math.MaxInt32)},
				TpValueToMatchNum: []map[string]int{{"zone1": 1}, {"node-a": 1}},
			},
		},
		{
			name:         "terminating pods do not count",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, fooSelector).obj(),
			nodes:        []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b").Obj()},
			existingPods: []*v1.Pod{terminating(schedtest.MakePod("p-a").Node("node-a").Label("foo", "").Obj()), schedtest.MakePod("p-b").Node("node-b").Label("foo", "").Obj()},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", foo)},
				CriticalPaths:     []*pathsView{paths("node-a", 0, "node-b", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 0, "node-b": 1}},
			},
		},
		{
			name:                "a pod without constraints is skipped",
			pod:                 mkPod("p", "foo", "").obj(),
			nodes:               []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj()},
			wantPreFilterStatus: schedcore.NewStatus(schedcore.Skip),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := listArgs(tt.defaultConstraints...)
			if tt.systemDefaulting {
				args = nil
			}
			p, snap := newPlugin(t, args, tt.existingPods, tt.nodes, tt.sel)
			p.enableMatchLabelKeys = !tt.disableMatchLabels
			cs := schedcore.NewCycleState()
			_, s := p.PreFilter(context.Background(), cs, tt.pod, snap.List())
			if !tt.wantPreFilterStatus.Equal(s) {
				t.Fatalf("PreFilter status = %v, want %v", s, tt.wantPreFilterStatus)
			}
			if !s.IsSuccess() {
				if _, err := cs.Read(preFilterStateKey); err == nil {
					t.Errorf("PreFilter wrote state although it returned %v", s)
				}
				return
			}
			got := preFilterView(t, cs)
			if diff := cmp.Diff(tt.want, got, stateCmpOpts...); diff != "" {
				t.Errorf("PreFilter state (-want +got):\n%s", diff)
			}
		})
	}
}

// Shorthands for the wanted Filter outcome per node.
const (
	ok    = schedcore.Success
	unsch = schedcore.Unschedulable
	unres = schedcore.UnschedulableAndUnresolvable
)

// wantStatus is the status Filter must return for a code: the skew reason
// for Unschedulable, the missing-label reason for Unresolvable.
func wantStatus(c schedcore.Code) *schedcore.Status {
	switch c {
	case unsch:
		return schedcore.NewStatus(unsch, ErrReasonConstraintsNotMatch)
	case unres:
		return schedcore.NewStatus(unres, ErrReasonNodeLabelNotMatch)
	}
	return nil
}

// runFilter runs PreFilter over all nodes then Filter on each node, and
// returns the statuses by node name. It runs twice, over the snapshot's
// list (PreFilter and Filter read the label columns) and over a copy of
// the list (the label maps), and fails if the two differ.
func runFilter(t *testing.T, pod *v1.Pod, nodes []*v1.Node, pods []*v1.Pod) map[string]string {
	t.Helper()
	p, snap := newPlugin(t, listArgs(), pods, nodes, nil)
	run := func(all []*schedcore.NodeInfo) map[string]string {
		state := schedcore.NewCycleState()
		if _, s := p.PreFilter(context.Background(), state, pod, all); !s.IsSuccess() {
			t.Fatalf("PreFilter: %v", s)
		}
		got := map[string]string{}
		for _, n := range nodes {
			ni, err := snap.Get(n.Name)
			if err != nil {
				t.Fatal(err)
			}
			got[n.Name] = p.Filter(context.Background(), state, pod, ni).String()
		}
		return got
	}
	got := run(snap.List())
	if diff := cmp.Diff(got, run(append([]*schedcore.NodeInfo(nil), snap.List()...))); diff != "" {
		t.Errorf("Filter over the label maps differs from the columns (-columns +maps):\n%s", diff)
	}
	return got
}

func wantStatuses(codes map[string]schedcore.Code) map[string]string {
	out := map[string]string{}
	for n, c := range codes {
		out[n] = wantStatus(c).String()
	}
	return out
}

func TestSingleConstraint(t *testing.T) {
	policyNodes := func() []*v1.Node {
		return []*v1.Node{
			schedtest.MakeNode("node-a").OnlyLabels("node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b", "foo", "").Obj(),
			schedtest.MakeNode("node-x").OnlyLabels("node", "node-x", "foo", "").Obj(), schedtest.MakeNode("node-y").OnlyLabels("node", "node-y").Obj(),
		}
	}
	policyPods := func() []*v1.Pod {
		return []*v1.Pod{schedtest.MakePod("p-b1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj()}
	}
	// 2/1/0/3 over node-a, node-b, node-x, node-y.
	pods2103 := func() []*v1.Pod {
		return []*v1.Pod{
			schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
			schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(),
		}
	}
	threeHosts := func() []*v1.Node {
		return []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b").Obj(), schedtest.MakeNode("node-c").OnlyLabels("node", "node-c").Obj()}
	}
	pods221 := func() []*v1.Pod {
		return []*v1.Pod{
			schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
			schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-c1").Node("node-c").Label("foo", "").Obj(),
		}
	}
	zonePods21 := func() []*v1.Pod {
		return []*v1.Pod{schedtest.MakePod("p-b1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj()}
	}
	tests := []struct {
		name         string
		pod          *v1.Pod
		nodes        []*v1.Node
		existingPods []*v1.Pod
		want         map[string]schedcore.Code
	}{
		{
			name:  "every node fits without existing pods",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes: fourNodes(),
			want:  map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name:  "every node fits without existing pods when the pod does not match itself",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, barSelector).obj(),
			nodes: fourNodes(),
			want:  map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name:  "pods of other namespaces do not count",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Namespace("ns1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Namespace("ns2").Node("node-a").Label("foo", "").Obj(),
				schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(),
			},
			want: map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": unsch, "node-y": unsch},
		},
		{
			name:         "a null selector matches no existing pod",
			pod:          mkPod("p", "foo", "").spread(1, "zone", dns, nil).obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj()},
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name:  "zones spread 3/3 let every node fit",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(),
			},
			want: map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name:  "a node without the zone label is unresolvable and its pods do not count",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes: []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zon", "zone1", "node", "node-b").Obj(), schedtest.ZoneNode("node-x", "zone2").Obj(), schedtest.ZoneNode("node-y", "zone2").Obj()},
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(),
			},
			want: map[string]schedcore.Code{"node-a": ok, "node-b": unres, "node-x": unsch, "node-y": unsch},
		},
		{
			name:  "no node has the rack label",
			pod:   mkPod("p", "foo", "").spread(1, "rack", dns, fooSelector).obj(),
			nodes: []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.ZoneNode("node-x", "zone2").Obj()},
			want:  map[string]schedcore.Code{"node-a": unres, "node-x": unres},
		},
		{
			name:         "nodes spread 2/1/0/3 let only the empty node fit",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: pods2103(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:         "nodes spread 2/1/0/3 with maxSkew 2 let node-b and node-x fit",
			pod:          mkPod("p", "foo", "").spread(2, "node", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: pods2103(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": ok, "node-x": ok, "node-y": unsch},
		},
		{
			name:         "a pod not matching itself adds no skew",
			pod:          mkPod("p", "bar", "").spread(1, "node", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: pods2103(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": ok, "node-x": ok, "node-y": unsch},
		},
		{
			// Only node-a and node-y count (2/~1~/~0~/3): the minimum is 2. The
			// nodes outside the affinity are NodeAffinity's to reject.
			name:         "nodes outside the pod's node affinity do not set the minimum",
			pod:          mkPod("p", "foo", "").affinityIn("node", "node-a", "node-y").spread(1, "node", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: pods2103(),
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": unsch},
		},
		{
			name:         "terminating pods do not count",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, fooSelector).obj(),
			nodes:        []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b").Obj()},
			existingPods: []*v1.Pod{terminating(schedtest.MakePod("p-a").Node("node-a").Label("foo", "").Obj()), schedtest.MakePod("p-b").Node("node-b").Label("foo", "").Obj()},
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": unsch},
		},
		{
			// 0/~2~/0/1: node-b does not count, so zone1 has 0 pods.
			name:         "pods on nodes outside the node affinity do not count for their zone",
			pod:          mkPod("p", "foo", "").affinityNotIn("node", "node-b").spread(1, "zone", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj()},
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": unsch, "node-y": unsch},
		},
		{
			name:         "fewer domains than minDomains make the global minimum 0",
			pod:          mkPod("p", "foo", "").spread(2, "node", dns, fooSelector, minDomains(4)).obj(),
			nodes:        threeHosts(),
			existingPods: pods221(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-c": ok},
		},
		{
			name:         "more domains than minDomains keep the real global minimum",
			pod:          mkPod("p", "foo", "").spread(2, "node", dns, fooSelector, minDomains(2)).obj(),
			nodes:        threeHosts(),
			existingPods: pods221(),
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-c": ok},
		},
		{
			name:         "as many domains as minDomains keep the real global minimum",
			pod:          mkPod("p", "foo", "").spread(2, "node", dns, fooSelector, minDomains(3)).obj(),
			nodes:        threeHosts(),
			existingPods: pods221(),
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-c": ok},
		},
		{
			name:         "fewer zones than minDomains make the global minimum 0",
			pod:          mkPod("p", "foo", "").spread(2, "zone", dns, fooSelector, minDomains(3)).obj(),
			nodes:        fourNodes(),
			existingPods: zonePods21(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": ok},
		},
		{
			name:         "more zones than minDomains keep the real global minimum",
			pod:          mkPod("p", "foo", "").spread(2, "zone", dns, fooSelector, minDomains(1)).obj(),
			nodes:        fourNodes(),
			existingPods: zonePods21(),
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			// 1/1/0/~0~: node-y is outside the nodeSelector.
			name:         "nodeAffinityPolicy Honor leaves nodes outside the nodeSelector out of the minimum",
			pod:          mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "node", dns, fooSelector).obj(),
			nodes:        policyNodes(),
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": ok},
		},
		{
			name:         "nodeAffinityPolicy Ignore counts nodes outside the nodeSelector",
			pod:          mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "node", dns, fooSelector, affinityPolicy(ignore)).obj(),
			nodes:        policyNodes(),
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:         "nodeAffinityPolicy Honor leaves nodes outside the node affinity out of the minimum",
			pod:          mkPod("p", "foo", "").affinityIn("foo", "").spread(1, "node", dns, fooSelector).obj(),
			nodes:        policyNodes(),
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": ok},
		},
		{
			name:         "nodeAffinityPolicy Ignore counts nodes outside the node affinity",
			pod:          mkPod("p", "foo", "").affinityIn("foo", "").spread(1, "node", dns, fooSelector, affinityPolicy(ignore)).obj(),
			nodes:        policyNodes(),
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:         "nodeTaintsPolicy Honor leaves tainted nodes out of the minimum",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, fooSelector, taintsPolicy(honor)).obj(),
			nodes:        append(policyNodes()[:3], tainted(schedtest.MakeNode("node-y").OnlyLabels("node", "node-y").Obj(), unschedulableTaint)),
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": ok},
		},
		{
			name:         "nodeTaintsPolicy Ignore counts tainted nodes",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, fooSelector).obj(),
			nodes:        append(policyNodes()[:3], tainted(schedtest.MakeNode("node-y").OnlyLabels("node", "node-y").Obj(), unschedulableTaint)),
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:  "matchLabelKeys restrict the counted pods to the pod's own group",
			pod:   mkPod("p", "app", "web", "rev", "2").spread(1, "node", dns, matchLabels("app", "web"), matchLabelKeys("rev")).obj(),
			nodes: []*v1.Node{schedtest.MakeNode("node-a").OnlyLabels("node", "node-a").Obj(), schedtest.MakeNode("node-b").OnlyLabels("node", "node-b").Obj()},
			// rev=1 pods are not counted: node-a has 1 rev=2 pod, node-b none.
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("app", "web", "rev", "2").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("app", "web", "rev", "1").Obj(), schedtest.MakePod("p-b2").Node("node-b").Label("app", "web", "rev", "1").Obj(),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": ok},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runFilter(t, tt.pod, tt.nodes, tt.existingPods)
			if diff := cmp.Diff(wantStatuses(tt.want), got); diff != "" {
				t.Errorf("Filter statuses (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMultipleConstraints(t *testing.T) {
	zoneNode := func() *podB {
		return mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector)
	}
	fooBar := func() *podB {
		return mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, barSelector)
	}
	policyPods := func() []*v1.Pod {
		return []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj()}
	}
	tests := []struct {
		name         string
		pod          *v1.Pod
		nodes        []*v1.Node
		existingPods []*v1.Pod
		want         map[string]schedcore.Code
	}{
		{
			name:  "zone and node constraints, spreads [3/3, 2/1/0/3]",
			pod:   zoneNode().obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:  "zone and node constraints, spreads [3/4, 2/1/0/4]: no node satisfies both",
			pod:   zoneNode().obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y4").Node("node-y").Label("foo", "").Obj(),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": unsch, "node-y": unsch},
		},
		{
			name:         "different selectors, spreads [1/0, 1/0/0/1]",
			pod:          fooBar().obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("bar", "").Obj()},
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:         "different selectors, spreads [1/0, 0/0/1/1]",
			pod:          fooBar().obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("bar", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("bar", "").Obj()},
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": unsch, "node-y": unsch},
		},
		{
			name:  "different selectors, spreads [2/3, 1/0/0/1]",
			pod:   fooBar().obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(),
				schedtest.MakePod("p-y2").Node("node-y").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": ok, "node-x": unsch, "node-y": unsch},
		},
		{
			name:         "different selectors, the pod does not match the zone constraint's",
			pod:          mkPod("p", "bar", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, barSelector).obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-x1").Node("node-x").Label("bar", "").Obj(), schedtest.MakePod("p-y1").Node("node-y").Label("bar", "").Obj()},
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": unsch, "node-y": unsch},
		},
		{
			name:         "node-x lacks the node label, spreads [1/1, 1/0/0/1]",
			pod:          zoneNode().obj(),
			nodes:        []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.ZoneNode("node-b", "zone1").Obj(), schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2").Obj(), schedtest.ZoneNode("node-y", "zone2").Obj()},
			existingPods: []*v1.Pod{schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj()},
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": ok, "node-x": unres, "node-y": unsch},
		},
		{
			name: "zone honors the nodeSelector, node ignores it",
			pod: mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "zone", dns, fooSelector).
				spread(1, "node", dns, fooSelector, affinityPolicy(ignore)).obj(),
			nodes: []*v1.Node{
				schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1", "node", "node-b", "foo", "").Obj(),
				schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2", "node", "node-x", "foo", "").Obj(), schedtest.MakeNode("node-y").OnlyLabels("zone", "zone2", "node", "node-y").Obj(),
			},
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name: "zone honors taints, node ignores them",
			pod:  mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector, taintsPolicy(honor)).spread(1, "node", dns, fooSelector).obj(),
			nodes: []*v1.Node{
				schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1", "node", "node-b", "foo", "").Obj(),
				schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2", "node", "node-x", "foo", "").Obj(), tainted(schedtest.MakeNode("node-y").OnlyLabels("zone", "zone2", "node", "node-y").Obj(), unschedulableTaint),
			},
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name: "both honor the nodeSelector, taints ignored",
			pod:  mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector).obj(),
			nodes: []*v1.Node{
				schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1", "node", "node-b").Obj(),
				schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2", "node", "node-x", "foo", "").Obj(), tainted(schedtest.MakeNode("node-y").OnlyLabels("zone", "zone2", "node", "node-y", "foo", "").Obj(), unschedulableTaint),
			},
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": ok, "node-x": ok, "node-y": unsch},
		},
		{
			name: "zone honors the nodeSelector and taints, node ignores both",
			pod: mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "zone", dns, fooSelector, taintsPolicy(honor)).
				spread(1, "node", dns, fooSelector, affinityPolicy(ignore)).obj(),
			nodes: []*v1.Node{
				schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node-a", "foo", "").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone1", "node", "node-b").Obj(),
				schedtest.MakeNode("node-x").OnlyLabels("zone", "zone2", "node", "node-x", "foo", "").Obj(), tainted(schedtest.MakeNode("node-y").OnlyLabels("zone", "zone2", "node", "node-y", "foo", "").Obj(), unschedulableTaint),
			},
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:  "two constraints on zone, spreads [3/3, 2/1]",
			pod:   mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, barSelector).spread(1, "zone", dns, fooSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "", "bar", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": ok},
		},
		{
			name:  "two constraints on zone, spreads [3/4, 2/1]",
			pod:   mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, barSelector).spread(1, "zone", dns, fooSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "", "bar", "").Obj(),
				schedtest.MakePod("p-y1").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y2").Node("node-y").Label("foo", "", "bar", "").Obj(), schedtest.MakePod("p-y3").Node("node-y").Label("foo", "").Obj(), schedtest.MakePod("p-y4").Node("node-y").Label("foo", "").Obj(),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": unsch, "node-y": unsch},
		},
		{
			name:  "a node lacking the second constraint's key is unresolvable and its pods count for neither",
			pod:   zoneNode().obj(),
			nodes: []*v1.Node{schedtest.ZoneNode("node-a", "zone1").Obj(), schedtest.MakeNode("node-b").OnlyLabels("zone", "zone2").Obj(), schedtest.ZoneNode("node-c", "zone2").Obj()},
			existingPods: []*v1.Pod{
				schedtest.MakePod("p-a1").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-a2").Node("node-a").Label("foo", "").Obj(), schedtest.MakePod("p-b1").Node("node-b").Label("foo", "").Obj(),
			},
			// zone2 counts only node-c (node-b lacks "node"): 2/0, so node-a
			// fails on skew and node-b on its missing label.
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": unres, "node-c": ok},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := runFilter(t, tt.pod, tt.nodes, tt.existingPods)
			if diff := cmp.Diff(wantStatuses(tt.want), got); diff != "" {
				t.Errorf("Filter statuses (-want +got):\n%s", diff)
			}
		})
	}
}
