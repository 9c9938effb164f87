package schedcore_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// termsOnly is a slot computed from the pods keepTermless does not keep:
// those named t*, as an index of pod terms holds what its pods carry.
func termsOnly(ni *schedcore.NodeInfo) string {
	var pods []string
	for _, pi := range ni.Pods {
		if !keepTermless(pi) {
			pods = append(pods, pi.Pod.Name)
		}
	}
	slices.Sort(pods)
	return fmt.Sprintf("%s %v %s", ni.Name(), ni.Node().Labels, strings.Join(pods, ","))
}

func keepTermless(pi *schedcore.PodInfo) bool { return !strings.HasPrefix(pi.Pod.Name, "t") }

// SyncSnapshotKeep leaves a slot alone when its node gained only a pod
// keep accepts, and computes it again otherwise, also when such a pod and
// one it does not accept land on the same node between two syncs, in
// either order. This fails if a kept entry marks the slot as computed from
// the node's latest generation (the later pod with terms is then missed),
// or if keep is asked about a replacement that is not one pod appended.
func TestNodeSlotsSyncSnapshotKeep(t *testing.T) {
	type op struct {
		pod   string // added to node, unless relabel
		node  string
		label string // relabel node with zone=label
	}
	tests := []struct {
		name      string
		ops       []op // one snapshot update each
		refreshes int
	}{
		{name: "pod without terms: slot kept", ops: []op{{pod: "plain", node: "n0"}}, refreshes: 0},
		{name: "pod with terms: slot read", ops: []op{{pod: "t1", node: "n0"}}, refreshes: 1},
		{name: "without then with terms, same node", ops: []op{{pod: "plain", node: "n0"}, {pod: "t1", node: "n0"}}, refreshes: 1},
		{name: "with then without terms, same node", ops: []op{{pod: "t1", node: "n0"}, {pod: "plain", node: "n0"}}, refreshes: 1},
		{name: "without terms on two nodes", ops: []op{{pod: "plain", node: "n0"}, {pod: "plain2", node: "n1"}}, refreshes: 0},
		{name: "without terms, then node relabelled", ops: []op{{pod: "plain", node: "n1"}, {node: "n1", label: "z9"}}, refreshes: 1},
		{name: "node relabelled, then pod without terms", ops: []op{{node: "n1", label: "z9"}, {pod: "plain", node: "n1"}}, refreshes: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := schedcore.NewCache(schedcore.DefaultFeatures)
			for _, n := range []string{"n0", "n1", "n2"} {
				c.AddNode(schedtest.MakeNode(n).Label("zone", "z1").Capacity("pods", "100").Obj())
			}
			for _, p := range []string{"t0", "p0"} {
				if err := c.AddPod(schedtest.MakePod(p).UID(p).Node("n0").Obj()); err != nil {
					t.Fatal(err)
				}
			}
			s := schedcore.NewEmptySnapshot()
			c.UpdateSnapshot(s)
			var slots schedcore.NodeSlots[string]
			refreshes := 0
			sync := func() {
				slots.SyncSnapshotKeep(s, keepTermless, func(*string) {}, func(ni *schedcore.NodeInfo, v *string) {
					refreshes++
					*v = termsOnly(ni)
				})
			}
			sync()
			refreshes = 0
			for _, o := range tc.ops {
				if o.label != "" {
					c.UpdateNode(nil, schedtest.MakeNode(o.node).Label("zone", o.label).Capacity("pods", "100").Obj())
				} else if err := c.AddPod(schedtest.MakePod(o.pod).UID(o.pod).Node(o.node).Obj()); err != nil {
					t.Fatal(err)
				}
				c.UpdateSnapshot(s)
			}
			sync()
			var want []string
			for _, ni := range s.List() {
				want = append(want, termsOnly(ni))
			}
			if got := slots.Values(); !slices.Equal(got, want) {
				t.Fatalf("slots\n%q\nwant\n%q", got, want)
			}
			if refreshes != tc.refreshes {
				t.Errorf("%d slots computed, want %d", refreshes, tc.refreshes)
			}
		})
	}
}
