package schedcore

import "testing"

// The filter loop appends rejections without the index by name; a status
// set after the index was built (by a lookup) must still be found, and a
// node set twice must keep one entry, with the last status.
func TestNodeToStatusIndexFollowsAppends(t *testing.T) {
	a, b, c := NewStatus(Unschedulable, "a"), NewStatus(Unschedulable, "b"), NewStatus(Unschedulable, "c")
	n := NewNodeToStatus()
	n.SetNew("n1", a)
	if got := n.Get("n1"); got != a {
		t.Fatalf("n1: %v, want %v", got, a)
	}
	n.SetNew("n2", b)
	if got := n.Get("n2"); got != b {
		t.Errorf("n2 appended after a lookup: %v, want %v", got, b)
	}
	n.Set("n1", c)
	if got, l := n.Get("n1"), n.Len(); got != c || l != 2 {
		t.Errorf("n1 set again: %v with %d entries, want %v with 2", got, l, c)
	}
	if got := n.Get("n3"); got != n.AbsentNodesStatus() {
		t.Errorf("n3: %v, want the absent status", got)
	}
	var order []string
	n.ForEachExplicitNode(func(node string, _ *Status) { order = append(order, node) })
	if len(order) != 2 || order[0] != "n1" || order[1] != "n2" {
		t.Errorf("explicit nodes %v, want [n1 n2]", order)
	}
}
