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
)

// fourNodes are node-a, node-b in zone1 and node-x, node-y in zone2.
func fourNodes() []*v1.Node {
	return []*v1.Node{zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-x", "zone2"), zn("node-y", "zone2")}
}

func TestPreFilterState(t *testing.T) {
	// 2 on node-a, 1 on node-b, 2 on node-y.
	fivePods := func() []*v1.Pod {
		return []*v1.Pod{
			ep("p-a1", "node-a", "foo", ""), ep("p-a2", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""),
			ep("p-y1", "node-y", "foo", ""), ep("p-y2", "node-y", "foo", ""),
		}
	}
	// 2 on node-a, 1 on node-b, 4 on node-y.
	sevenPods := func() []*v1.Pod {
		return append(fivePods(), ep("p-y3", "node-y", "foo", ""), ep("p-y4", "node-y", "foo", ""))
	}
	// bar: 1 on node-a, 2 on node-b; node-c has a pod without bar.
	policyPods := func() []*v1.Pod {
		return []*v1.Pod{ep("p-a", "node-a", "bar", ""), ep("p-b", "node-b", "bar", ""), ep("p-c", "node-b", "bar", ""), ep("p-d", "node-c")}
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
				CriticalPaths:     []*pathsView{cp("zone1", 0, "zone2", 0)},
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
				CriticalPaths:     []*pathsView{cp("zone2", 2, "zone1", 3)},
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
				CriticalPaths:     []*pathsView{cp("zone2", 0, "zone1", 0)},
				TpValueToMatchNum: []map[string]int{{"zone1": 0, "zone2": 0}},
			},
		},
		{
			name:         "an empty zone is the critical path on a 3-zone cluster",
			pod:          mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes:        append(fourNodes(), zn("node-o", "zone3"), zn("node-p", "zone3")),
			existingPods: fivePods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", foo)},
				CriticalPaths:     []*pathsView{cp("zone3", 0, "zone2", 2)},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2, "zone3": 0}},
			},
		},
		{
			name:  "pods in other namespaces do not count",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", ""), epNS("p-a2", "ns1", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""),
				epNS("p-y1", "ns2", "node-y", "foo", ""), ep("p-y2", "node-y", "foo", ""),
			},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", foo)},
				CriticalPaths:     []*pathsView{cp("zone2", 1, "zone1", 2)},
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
				CriticalPaths: []*pathsView{cp("zone1", 3, "zone2", 4), cp("node-x", 0, "node-b", 1)},
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
			nodes:        []*v1.Node{zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")},
			existingPods: sevenPods(),
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", foo)},
				CriticalPaths: []*pathsView{cp("zone1", 3, "zone2", 4), cp("node-b", 1, "node-a", 2)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 3, "zone2": 4},
					{"node-a": 2, "node-b": 1, "node-y": 4},
				},
			},
		},
		{
			name:         "constraints with different selectors count different pods",
			pod:          mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, barSelector).obj(),
			nodes:        []*v1.Node{zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")},
			existingPods: []*v1.Pod{ep("p-a", "node-a", "foo", ""), ep("p-b", "node-b", "bar", "")},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", bar)},
				CriticalPaths: []*pathsView{cp("zone2", 0, "zone1", 1), cp("node-a", 0, "node-y", 0)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 1, "zone2": 0},
					{"node-a": 0, "node-b": 1, "node-y": 0},
				},
			},
		},
		{
			name:  "pods with several labels count for each constraint they match",
			pod:   mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, barSelector).obj(),
			nodes: []*v1.Node{zn("node-a", "zone1"), zn("node-b", "zone1"), zn("node-y", "zone2")},
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", ""), ep("p-a2", "node-a", "foo", "", "bar", ""), ep("p-b1", "node-b", "foo", ""),
				ep("p-y1", "node-y", "foo", ""), ep("p-y2", "node-y", "foo", "", "bar", ""), ep("p-y3", "node-y", "foo", ""),
				ep("p-y4", "node-y", "foo", "", "bar", ""),
			},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", bar)},
				CriticalPaths: []*pathsView{cp("zone1", 3, "zone2", 4), cp("node-b", 0, "node-a", 1)},
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
				CriticalPaths: []*pathsView{cp("zone1", 3, "zone2", 4), cp("node-b", 1, "node-a", 2)},
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
				CriticalPaths:     []*pathsView{cp("", math.MaxInt32, "", math.MaxInt32), cp("", math.MaxInt32, "", math.MaxInt32)},
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
				CriticalPaths:     []*pathsView{cp("", math.MaxInt32, "", math.MaxInt32)},
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
			nodes:               []*v1.Node{hn("node-a")},
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
				CriticalPaths: []*pathsView{cp("zone1", 3, "zone2", 4), cp("node-x", 0, "node-b", 1)},
				TpValueToMatchNum: []map[string]int{
					{"zone1": 3, "zone2": 4},
					{"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4},
				},
			},
		},
		{
			name:         "nodeAffinityPolicy Honor (the default) leaves out nodes outside the nodeSelector",
			pod:          mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "node", dns, barSelector).obj(),
			nodes:        []*v1.Node{mkNode("node-a", "node", "node-a", "foo", ""), mkNode("node-b", "node", "node-b", "foo", ""), mkNode("node-c", "node", "node-c", "bar", "")},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar)},
				CriticalPaths:     []*pathsView{cp("node-a", 1, "node-b", 2)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2}},
			},
		},
		{
			name:         "nodeAffinityPolicy Ignore counts nodes outside the nodeSelector",
			pod:          mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "node", dns, barSelector, affinityPolicy(ignore)).obj(),
			nodes:        []*v1.Node{mkNode("node-a", "node", "node-a", "foo", ""), mkNode("node-b", "node", "node-b", "foo", ""), mkNode("node-c", "node", "node-c", "bar", "")},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar).policies(ignore, ignore)},
				CriticalPaths:     []*pathsView{cp("node-c", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
			},
		},
		{
			name:         "nodeAffinityPolicy Honor leaves out nodes outside the required node affinity",
			pod:          mkPod("p", "foo", "").affinityIn("foo", "").spread(1, "node", dns, barSelector).obj(),
			nodes:        []*v1.Node{mkNode("node-a", "node", "node-a", "foo", ""), mkNode("node-b", "node", "node-b", "foo", ""), mkNode("node-c", "node", "node-c", "bar", "")},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar)},
				CriticalPaths:     []*pathsView{cp("node-a", 1, "node-b", 2)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2}},
			},
		},
		{
			name:         "nodeAffinityPolicy Ignore counts nodes outside the required node affinity",
			pod:          mkPod("p", "foo", "").affinityIn("foo", "").spread(1, "node", dns, barSelector, affinityPolicy(ignore)).obj(),
			nodes:        []*v1.Node{mkNode("node-a", "node", "node-a", "foo", ""), mkNode("node-b", "node", "node-b", "foo", ""), mkNode("node-c", "node", "node-c", "bar", "")},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar).policies(ignore, ignore)},
				CriticalPaths:     []*pathsView{cp("node-c", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
			},
		},
		{
			name:         "nodeTaintsPolicy Ignore (the default) counts tainted nodes",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, barSelector).obj(),
			nodes:        []*v1.Node{mkNode("node-a", "node", "node-a"), mkNode("node-b", "node", "node-b"), tainted(mkNode("node-c", "node", "node-c", "bar", ""), unschedulableTaint)},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar)},
				CriticalPaths:     []*pathsView{cp("node-c", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
			},
		},
		{
			name:         "nodeTaintsPolicy Honor leaves out nodes with untolerated taints",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, barSelector, taintsPolicy(honor)).obj(),
			nodes:        []*v1.Node{mkNode("node-a", "node", "node-a"), mkNode("node-b", "node", "node-b"), tainted(mkNode("node-c", "node", "node-c", "bar", ""), unschedulableTaint)},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar).policies(honor, honor)},
				CriticalPaths:     []*pathsView{cp("node-a", 1, "node-b", 2)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2}},
			},
		},
		{
			name:         "nodeTaintsPolicy Honor counts nodes whose taints the pod tolerates",
			pod:          mkPod("p", "foo", "").tolerate(v1.TaintNodeUnschedulable).spread(1, "node", dns, barSelector, taintsPolicy(honor)).obj(),
			nodes:        []*v1.Node{mkNode("node-a", "node", "node-a"), mkNode("node-b", "node", "node-b"), tainted(mkNode("node-c", "node", "node-c", "bar", ""), unschedulableTaint)},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar).policies(honor, honor)},
				CriticalPaths:     []*pathsView{cp("node-c", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
			},
		},
		{
			name: "nodeTaintsPolicy Honor ignores PreferNoSchedule taints",
			pod:  mkPod("p", "foo", "").spread(1, "node", dns, barSelector, taintsPolicy(honor)).obj(),
			nodes: []*v1.Node{mkNode("node-a", "node", "node-a"), mkNode("node-b", "node", "node-b"),
				tainted(mkNode("node-c", "node", "node-c"), v1.Taint{Key: "soft", Effect: v1.TaintEffectPreferNoSchedule})},
			existingPods: policyPods(),
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", bar).policies(honor, honor)},
				CriticalPaths:     []*pathsView{cp("node-c", 0, "node-a", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 1, "node-b": 2, "node-c": 0}},
			},
		},
		{
			name: "policies apply per constraint: zone honors the nodeSelector, node ignores it",
			pod: mkPod("p", "foo", "").nodeSelector("foo", "").
				spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector, affinityPolicy(ignore)).obj(),
			nodes: []*v1.Node{
				mkNode("node-a", "zone", "zone1", "node", "node-a", "foo", ""), mkNode("node-b", "zone", "zone1", "node", "node-b"),
				mkNode("node-x", "zone", "zone2", "node", "node-x", "foo", ""),
			},
			existingPods: []*v1.Pod{ep("p-b1", "node-b", "foo", ""), ep("p-b2", "node-b", "foo", ""), ep("p-x1", "node-x", "foo", "")},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", foo).policies(ignore, ignore)},
				CriticalPaths: []*pathsView{cp("zone1", 0, "zone2", 1), cp("node-a", 0, "node-x", 1)},
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
				mkNode("node-a", "zone", "zone1", "node", "node-a", "foo", ""), tainted(mkNode("node-b", "zone", "zone1", "node", "node-b"), unschedulableTaint),
				mkNode("node-x", "zone", "zone2", "node", "node-x", "foo", ""),
			},
			existingPods: []*v1.Pod{ep("p-b1", "node-b", "foo", ""), ep("p-b2", "node-b", "foo", ""), ep("p-x1", "node-x", "foo", "")},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo).policies(honor, honor), want(1, "node", foo)},
				CriticalPaths: []*pathsView{cp("zone1", 0, "zone2", 1), cp("node-a", 0, "node-x", 1)},
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
				CriticalPaths:     []*pathsView{cp("zone2", 2, "zone1", 3)},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2}},
			},
		},
		{
			name:  "matchLabelKeys are ANDed with a non-empty label selector",
			pod:   mkPod("p", "foo", "", "bar", "a").spread(1, "zone", dns, fooSelector, matchLabelKeys("bar")).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", ""), ep("p-a2", "node-a", "foo", "", "bar", "a"), ep("p-b1", "node-b", "foo", ""),
				ep("p-y1", "node-y", "foo", "", "bar", "a"), ep("p-y2", "node-y", "bar", ""),
			},
			want: &filterView{
				Constraints: []topologySpreadConstraint{want(1, "zone", mustSel(t, &metav1.LabelSelector{
					MatchLabels:      map[string]string{"bar": "a"},
					MatchExpressions: fooSelector.MatchExpressions,
				}))},
				CriticalPaths:     []*pathsView{cp("zone2", 1, "zone1", 1)},
				TpValueToMatchNum: []map[string]int{{"zone1": 1, "zone2": 1}},
			},
		},
		{
			name:  "matchLabelKeys are ANDed with an empty label selector",
			pod:   mkPod("p", "foo", "a").spread(1, "zone", dns, &metav1.LabelSelector{}, matchLabelKeys("foo")).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", "a"), ep("p-a2", "node-a", "foo", "a"), ep("p-b1", "node-b", "foo", "a"),
				ep("p-y1", "node-y", "foo", "a"), ep("p-y2", "node-y", "foo", "a"), ep("p-y3", "node-y", "foo", "b"),
			},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", mustSel(t, matchLabels("foo", "a")))},
				CriticalPaths:     []*pathsView{cp("zone2", 2, "zone1", 3)},
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
				CriticalPaths:     []*pathsView{cp("zone2", 0, "zone1", 0)},
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
				CriticalPaths:     []*pathsView{cp("zone2", 2, "zone1", 3)},
				TpValueToMatchNum: []map[string]int{{"zone1": 3, "zone2": 2}},
			},
		},
		{
			name:  "two constraints on the same topology key are counted apart",
			pod:   mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, fooSelector).spread(1, "zone", dns, barSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", "", "bar", ""), ep("p-b1", "node-b", "foo", ""), ep("p-x1", "node-x", "bar", ""),
				ep("p-y1", "node-y", "foo", "", "bar", ""), ep("p-y2", "node-y", "bar", ""),
			},
			want: &filterView{
				Constraints:   []topologySpreadConstraint{want(1, "zone", foo), want(1, "zone", bar)},
				CriticalPaths: []*pathsView{cp("zone2", 1, "zone1", 2), cp("zone1", 1, "zone2", 3)},
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
				zn("node-a", "zone1"), mkNode("node-b", "zone", "zone1"), mkNode("node-x", "node", "node-x"),
			},
			existingPods: []*v1.Pod{ep("p-a1", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""), ep("p-x1", "node-x", "foo", "")},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "zone", foo), want(1, "node", foo)},
				CriticalPaths:     []*pathsView{cp("zone1", 1, "", math.MaxInt32), cp("node-a", 1, "", math.MaxInt32)},
				TpValueToMatchNum: []map[string]int{{"zone1": 1}, {"node-a": 1}},
			},
		},
		{
			name:         "terminating pods do not count",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, fooSelector).obj(),
			nodes:        []*v1.Node{mkNode("node-a", "node", "node-a"), mkNode("node-b", "node", "node-b")},
			existingPods: []*v1.Pod{terminating(ep("p-a", "node-a", "foo", "")), ep("p-b", "node-b", "foo", "")},
			want: &filterView{
				Constraints:       []topologySpreadConstraint{want(1, "node", foo)},
				CriticalPaths:     []*pathsView{cp("node-a", 0, "node-b", 1)},
				TpValueToMatchNum: []map[string]int{{"node-a": 0, "node-b": 1}},
			},
		},
		{
			name:                "a pod without constraints is skipped",
			pod:                 mkPod("p", "foo", "").obj(),
			nodes:               []*v1.Node{zn("node-a", "zone1")},
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
