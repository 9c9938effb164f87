package runtime

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func namedNodes(names ...string) []NodeExplanation {
	out := make([]NodeExplanation, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	return out
}

// A kept name order is used only while it still sorts the list by name:
// another list of the same length (other names, or the same names in
// another order) is sorted afresh.
func TestNameOrderIsCheckedAgainstTheNames(t *testing.T) {
	var o NameOrder
	lists := [][]NodeExplanation{
		namedNodes("c", "a", "b", "d"),
		namedNodes("c", "a", "b", "d"),
		namedNodes("a", "b", "c", "d"),
		namedNodes("d", "x", "b", "a"),
		namedNodes("z"),
		namedNodes("y"),
		namedNodes(),
	}
	for k, nodes := range lists {
		got := o.Of(nodes)
		var names []string
		for _, i := range got {
			names = append(names, nodes[i].Name)
		}
		if len(names) != len(nodes) || !sort.StringsAreSorted(names) {
			t.Errorf("list %d: order %v gives %v", k, got, names)
		}
	}
	o.order = []int32{-1, 0}
	if got := o.Of(namedNodes("a", "b")); !reflect.DeepEqual(got, []int32{0, 1}) {
		t.Errorf("a kept order with a bad position was used: %v", got)
	}
}

// NameOrder.of takes the order from the snapshot's name ranks and keeps
// it only while it inverts them: after a node is removed and another added
// (the list rebuilt at the same length, other names), or the list
// reordered, the order and places are the new list's.
func TestNameOrderFollowsTheSnapshotsRanks(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	live := map[string]bool{}
	snap := schedcore.NewEmptySnapshot()
	var o NameOrder
	for step := 0; step < 300; step++ {
		// One change, or two (a node removed and another added: the
		// same length) between snapshot updates.
		for range 1 + rng.Intn(2) {
			name := fmt.Sprintf("n%02d", rng.Intn(30))
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelTopologyZone: fmt.Sprint("z", rng.Intn(3))}}}
			switch {
			case live[name] && rng.Intn(3) > 0:
				c.RemoveNode(node)
				delete(live, name)
			case live[name]:
				c.UpdateNode(nil, node)
			default:
				c.AddNode(node)
				live[name] = true
			}
		}
		c.UpdateSnapshot(snap)
		list := snap.List()
		nodes := make([]NodeExplanation, len(list))
		for i, ni := range list {
			nodes[i].Name = ni.Name()
		}
		order, place := o.of(nodes, snap)
		if len(order) != len(nodes) || len(place) != len(nodes) {
			t.Fatalf("step %d: %d positions and %d places for %d nodes", step, len(order), len(place), len(nodes))
		}
		for k, i := range order {
			if k > 0 && nodes[order[k-1]].Name >= nodes[i].Name {
				t.Fatalf("step %d: order %v is not by name", step, order)
			}
			if place[i] != int32(k) {
				t.Fatalf("step %d: %s is %d-th by name, its place says %d", step, nodes[i].Name, k, place[i])
			}
		}
	}
}
