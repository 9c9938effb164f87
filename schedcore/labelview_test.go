package schedcore_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// A LabelView reads what the nodes' labels say: Nodes lists, in list
// order, exactly the nodes whose label has the value, and Value is the
// node's label, through node relabels, additions and removals between
// snapshot updates, and for a node from outside the snapshot that shares a
// name and list position with a listed one but not its labels.
func TestLabelViewReadsTheNodesLabels(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	addNode := func(name string) {
		mk := schedtest.MakeNode(name)
		if v := rng.IntN(4); v < 3 {
			mk = mk.Label("zone", fmt.Sprint("z", v))
		}
		c.AddNode(mk.Obj())
	}
	names := []string{}
	for i := range 30 {
		names = append(names, fmt.Sprint("n", i))
		addNode(names[i])
	}
	s := schedcore.NewEmptySnapshot()
	for round := range 40 {
		switch rng.IntN(4) {
		case 0, 1: // relabelled
			addNode(names[rng.IntN(len(names))])
		case 2: // added
			names = append(names, fmt.Sprint("a", round))
			addNode(names[len(names)-1])
		default: // removed
			i := rng.IntN(len(names))
			c.RemoveNode(schedtest.MakeNode(names[i]).Obj())
			names = slices.Delete(names, i, i+1)
		}
		c.UpdateSnapshot(s)
		v := s.LabelView("zone")
		for _, value := range []string{"z0", "z1", "z2", "z9", ""} {
			var want, got []string
			for _, ni := range s.List() {
				if x, ok := ni.Node().Labels["zone"]; ok && x == value {
					want = append(want, ni.Name())
				}
			}
			v.Nodes(value, func(ni *schedcore.NodeInfo) bool {
				got = append(got, ni.Name())
				return false
			})
			if !slices.Equal(got, want) {
				t.Fatalf("round %d: nodes in zone %q %v, want %v", round, value, got, want)
			}
		}
		for _, ni := range s.List() {
			want, wantOK := ni.Node().Labels["zone"]
			if got, ok := v.Value(ni); got != want || ok != wantOK {
				t.Fatalf("round %d: node %s zone %q %v, want %q %v", round, ni.Name(), got, ok, want, wantOK)
			}
			// The same name, another node object and zone.
			other := ni.Clone()
			other.SetNode(schedtest.MakeNode(ni.Name()).Label("zone", "elsewhere").Obj())
			if got, ok := v.Value(other); got != "elsewhere" || !ok {
				t.Fatalf("round %d: a copy of node %s relabelled has zone %q %v, want elsewhere", round, ni.Name(), got, ok)
			}
		}
	}
	// Nodes stops when told to.
	calls := 0
	s.LabelView("zone").Nodes("z0", func(*schedcore.NodeInfo) bool { calls++; return true })
	if calls > 1 {
		t.Errorf("Nodes went on after fn asked to stop: %d calls", calls)
	}
}
