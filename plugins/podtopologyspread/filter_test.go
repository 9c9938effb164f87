package podtopologyspread

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

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
			mkNode("node-a", "node", "node-a", "foo", ""), mkNode("node-b", "node", "node-b", "foo", ""),
			mkNode("node-x", "node", "node-x", "foo", ""), mkNode("node-y", "node", "node-y"),
		}
	}
	policyPods := func() []*v1.Pod {
		return []*v1.Pod{ep("p-b1", "node-a", "foo", ""), ep("p-b2", "node-b", "foo", ""), ep("p-y1", "node-y", "foo", "")}
	}
	// 2/1/0/3 over node-a, node-b, node-x, node-y.
	pods2103 := func() []*v1.Pod {
		return []*v1.Pod{
			ep("p-a1", "node-a", "foo", ""), ep("p-a2", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""),
			ep("p-y1", "node-y", "foo", ""), ep("p-y2", "node-y", "foo", ""), ep("p-y3", "node-y", "foo", ""),
		}
	}
	threeHosts := func() []*v1.Node {
		return []*v1.Node{mkNode("node-a", "node", "node-a"), mkNode("node-b", "node", "node-b"), mkNode("node-c", "node", "node-c")}
	}
	pods221 := func() []*v1.Pod {
		return []*v1.Pod{
			ep("p-a1", "node-a", "foo", ""), ep("p-a2", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""),
			ep("p-b2", "node-b", "foo", ""), ep("p-c1", "node-c", "foo", ""),
		}
	}
	zonePods21 := func() []*v1.Pod {
		return []*v1.Pod{ep("p-b1", "node-a", "foo", ""), ep("p-b2", "node-b", "foo", ""), ep("p-y1", "node-y", "foo", "")}
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
				epNS("p-a1", "ns1", "node-a", "foo", ""), epNS("p-b1", "ns2", "node-a", "foo", ""),
				ep("p-x1", "node-x", "foo", ""), ep("p-y1", "node-y", "foo", ""),
			},
			want: map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": unsch, "node-y": unsch},
		},
		{
			name:         "a null selector matches no existing pod",
			pod:          mkPod("p", "foo", "").spread(1, "zone", dns, nil).obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{ep("p-x1", "node-x", "foo", ""), ep("p-y1", "node-y", "foo", "")},
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name:  "zones spread 3/3 let every node fit",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", ""), ep("p-a2", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""),
				ep("p-y1", "node-y", "foo", ""), ep("p-y2", "node-y", "foo", ""), ep("p-y3", "node-y", "foo", ""),
			},
			want: map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": ok, "node-y": ok},
		},
		{
			name:  "a node without the zone label is unresolvable and its pods do not count",
			pod:   mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj(),
			nodes: []*v1.Node{zn("node-a", "zone1"), mkNode("node-b", "zon", "zone1", "node", "node-b"), zn("node-x", "zone2"), zn("node-y", "zone2")},
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""), ep("p-x1", "node-x", "foo", ""), ep("p-y1", "node-y", "foo", ""),
			},
			want: map[string]schedcore.Code{"node-a": ok, "node-b": unres, "node-x": unsch, "node-y": unsch},
		},
		{
			name:  "no node has the rack label",
			pod:   mkPod("p", "foo", "").spread(1, "rack", dns, fooSelector).obj(),
			nodes: []*v1.Node{zn("node-a", "zone1"), zn("node-x", "zone2")},
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
			nodes:        []*v1.Node{mkNode("node-a", "node", "node-a"), mkNode("node-b", "node", "node-b")},
			existingPods: []*v1.Pod{terminating(ep("p-a", "node-a", "foo", "")), ep("p-b", "node-b", "foo", "")},
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": unsch},
		},
		{
			// 0/~2~/0/1: node-b does not count, so zone1 has 0 pods.
			name:         "pods on nodes outside the node affinity do not count for their zone",
			pod:          mkPod("p", "foo", "").affinityNotIn("node", "node-b").spread(1, "zone", dns, fooSelector).obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{ep("p-b1", "node-b", "foo", ""), ep("p-b2", "node-b", "foo", ""), ep("p-y1", "node-y", "foo", "")},
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
			nodes:        append(policyNodes()[:3], tainted(mkNode("node-y", "node", "node-y"), unschedulableTaint)),
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": ok},
		},
		{
			name:         "nodeTaintsPolicy Ignore counts tainted nodes",
			pod:          mkPod("p", "foo", "").spread(1, "node", dns, fooSelector).obj(),
			nodes:        append(policyNodes()[:3], tainted(mkNode("node-y", "node", "node-y"), unschedulableTaint)),
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:  "matchLabelKeys restrict the counted pods to the pod's own group",
			pod:   mkPod("p", "app", "web", "rev", "2").spread(1, "node", dns, matchLabels("app", "web"), matchLabelKeys("rev")).obj(),
			nodes: []*v1.Node{mkNode("node-a", "node", "node-a"), mkNode("node-b", "node", "node-b")},
			// rev=1 pods are not counted: node-a has 1 rev=2 pod, node-b none.
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "app", "web", "rev", "2"), ep("p-b1", "node-b", "app", "web", "rev", "1"), ep("p-b2", "node-b", "app", "web", "rev", "1"),
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
		return []*v1.Pod{ep("p-a1", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""), ep("p-y1", "node-y", "foo", "")}
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
				ep("p-a1", "node-a", "foo", ""), ep("p-a2", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""),
				ep("p-y1", "node-y", "foo", ""), ep("p-y2", "node-y", "foo", ""), ep("p-y3", "node-y", "foo", ""),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:  "zone and node constraints, spreads [3/4, 2/1/0/4]: no node satisfies both",
			pod:   zoneNode().obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", ""), ep("p-a2", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""),
				ep("p-y1", "node-y", "foo", ""), ep("p-y2", "node-y", "foo", ""), ep("p-y3", "node-y", "foo", ""), ep("p-y4", "node-y", "foo", ""),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": unsch, "node-y": unsch},
		},
		{
			name:         "different selectors, spreads [1/0, 1/0/0/1]",
			pod:          fooBar().obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{ep("p-a1", "node-a", "foo", ""), ep("p-y1", "node-y", "bar", "")},
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:         "different selectors, spreads [1/0, 0/0/1/1]",
			pod:          fooBar().obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{ep("p-a1", "node-a", "foo", ""), ep("p-x1", "node-x", "bar", ""), ep("p-y1", "node-y", "bar", "")},
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": unsch, "node-y": unsch},
		},
		{
			name:  "different selectors, spreads [2/3, 1/0/0/1]",
			pod:   fooBar().obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", ""), ep("p-a2", "node-a", "foo", "", "bar", ""), ep("p-y1", "node-y", "foo", ""),
				ep("p-y2", "node-y", "foo", "", "bar", ""), ep("p-y3", "node-y", "foo", ""),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": ok, "node-x": unsch, "node-y": unsch},
		},
		{
			name:         "different selectors, the pod does not match the zone constraint's",
			pod:          mkPod("p", "bar", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, barSelector).obj(),
			nodes:        fourNodes(),
			existingPods: []*v1.Pod{ep("p-a1", "node-a", "foo", ""), ep("p-x1", "node-x", "bar", ""), ep("p-y1", "node-y", "bar", "")},
			want:         map[string]schedcore.Code{"node-a": ok, "node-b": ok, "node-x": unsch, "node-y": unsch},
		},
		{
			name:         "node-x lacks the node label, spreads [1/1, 1/0/0/1]",
			pod:          zoneNode().obj(),
			nodes:        []*v1.Node{zn("node-a", "zone1"), zn("node-b", "zone1"), mkNode("node-x", "zone", "zone2"), zn("node-y", "zone2")},
			existingPods: []*v1.Pod{ep("p-a1", "node-a", "foo", ""), ep("p-y3", "node-y", "foo", "")},
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": ok, "node-x": unres, "node-y": unsch},
		},
		{
			name: "zone honors the nodeSelector, node ignores it",
			pod: mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "zone", dns, fooSelector).
				spread(1, "node", dns, fooSelector, affinityPolicy(ignore)).obj(),
			nodes: []*v1.Node{
				mkNode("node-a", "zone", "zone1", "node", "node-a", "foo", ""), mkNode("node-b", "zone", "zone1", "node", "node-b", "foo", ""),
				mkNode("node-x", "zone", "zone2", "node", "node-x", "foo", ""), mkNode("node-y", "zone", "zone2", "node", "node-y"),
			},
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name: "zone honors taints, node ignores them",
			pod:  mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector, taintsPolicy(honor)).spread(1, "node", dns, fooSelector).obj(),
			nodes: []*v1.Node{
				mkNode("node-a", "zone", "zone1", "node", "node-a", "foo", ""), mkNode("node-b", "zone", "zone1", "node", "node-b", "foo", ""),
				mkNode("node-x", "zone", "zone2", "node", "node-x", "foo", ""), tainted(mkNode("node-y", "zone", "zone2", "node", "node-y"), unschedulableTaint),
			},
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name: "both honor the nodeSelector, taints ignored",
			pod:  mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector).obj(),
			nodes: []*v1.Node{
				mkNode("node-a", "zone", "zone1", "node", "node-a", "foo", ""), mkNode("node-b", "zone", "zone1", "node", "node-b"),
				mkNode("node-x", "zone", "zone2", "node", "node-x", "foo", ""), tainted(mkNode("node-y", "zone", "zone2", "node", "node-y", "foo", ""), unschedulableTaint),
			},
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": ok, "node-x": ok, "node-y": unsch},
		},
		{
			name: "zone honors the nodeSelector and taints, node ignores both",
			pod: mkPod("p", "foo", "").nodeSelector("foo", "").spread(1, "zone", dns, fooSelector, taintsPolicy(honor)).
				spread(1, "node", dns, fooSelector, affinityPolicy(ignore)).obj(),
			nodes: []*v1.Node{
				mkNode("node-a", "zone", "zone1", "node", "node-a", "foo", ""), mkNode("node-b", "zone", "zone1", "node", "node-b"),
				mkNode("node-x", "zone", "zone2", "node", "node-x", "foo", ""), tainted(mkNode("node-y", "zone", "zone2", "node", "node-y", "foo", ""), unschedulableTaint),
			},
			existingPods: policyPods(),
			want:         map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": unsch},
		},
		{
			name:  "two constraints on zone, spreads [3/3, 2/1]",
			pod:   mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, barSelector).spread(1, "zone", dns, fooSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", "", "bar", ""), ep("p-a2", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", "", "bar", ""),
				ep("p-y1", "node-y", "foo", ""), ep("p-y2", "node-y", "foo", "", "bar", ""), ep("p-y3", "node-y", "foo", ""),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": ok, "node-y": ok},
		},
		{
			name:  "two constraints on zone, spreads [3/4, 2/1]",
			pod:   mkPod("p", "foo", "", "bar", "").spread(1, "zone", dns, barSelector).spread(1, "zone", dns, fooSelector).obj(),
			nodes: fourNodes(),
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", "", "bar", ""), ep("p-a2", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", "", "bar", ""),
				ep("p-y1", "node-y", "foo", ""), ep("p-y2", "node-y", "foo", "", "bar", ""), ep("p-y3", "node-y", "foo", ""), ep("p-y4", "node-y", "foo", ""),
			},
			want: map[string]schedcore.Code{"node-a": unsch, "node-b": unsch, "node-x": unsch, "node-y": unsch},
		},
		{
			name:  "a node lacking the second constraint's key is unresolvable and its pods count for neither",
			pod:   zoneNode().obj(),
			nodes: []*v1.Node{zn("node-a", "zone1"), mkNode("node-b", "zone", "zone2"), zn("node-c", "zone2")},
			existingPods: []*v1.Pod{
				ep("p-a1", "node-a", "foo", ""), ep("p-a2", "node-a", "foo", ""), ep("p-b1", "node-b", "foo", ""),
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
