package schedcore

import (
	"reflect"
	"sort"
	"testing"
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
