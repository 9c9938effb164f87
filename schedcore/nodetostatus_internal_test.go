package schedcore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

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

// NodesForStatusCode follows the entries in list order and looks a node
// up by name when the next entry is not its own: whatever the order of
// the entries (from another start node, with gaps, set again, naming nodes
// the list lacks), it must answer as a lookup of each node does.
func TestNodesForStatusCodeAnswersAsLookups(t *testing.T) {
	var all []*NodeInfo
	for _, name := range []string{"n0", "n1", "n2", "n3", "n4", "n5"} {
		ni := NewNodeInfo()
		ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
		all = append(all, ni)
	}
	u, uu := NewStatus(Unschedulable, "u"), NewStatus(UnschedulableAndUnresolvable, "uu")
	type entry struct {
		node string
		s    *Status
	}
	tests := []struct {
		name    string
		entries []entry
		absent  *Status
	}{
		{"in list order", []entry{{"n0", u}, {"n1", uu}, {"n2", u}, {"n3", u}, {"n4", uu}, {"n5", u}}, nil},
		{"from the third node around the list", []entry{{"n2", u}, {"n3", uu}, {"n4", u}, {"n5", u}, {"n0", uu}, {"n1", u}}, nil},
		{"with nodes left out, absent unresolvable", []entry{{"n3", u}, {"n5", u}, {"n0", u}, {"n1", uu}}, nil},
		{"with nodes left out, absent unschedulable", []entry{{"n4", uu}, {"n1", u}}, NewStatus(Unschedulable, "absent")},
		{"the first node set last", []entry{{"n1", u}, {"n2", uu}, {"n3", u}, {"n4", u}, {"n5", uu}, {"n0", u}}, nil},
		{"in reverse", []entry{{"n5", u}, {"n4", uu}, {"n3", u}, {"n2", u}, {"n1", uu}, {"n0", u}}, nil},
		{"naming nodes the list lacks", []entry{{"x", u}, {"n0", uu}, {"y", u}, {"n1", u}, {"n3", u}}, nil},
		{"a node set again keeps its place", []entry{{"n0", u}, {"n1", u}, {"n2", u}, {"n1", uu}, {"n0", uu}}, nil},
		{"no entries", nil, NewStatus(Unschedulable, "absent")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewNodeToStatus()
			if tt.absent != nil {
				m.SetAbsentNodesStatus(tt.absent)
			}
			for _, e := range tt.entries {
				m.Set(e.node, e.s)
			}
			for _, code := range []Code{Unschedulable, UnschedulableAndUnresolvable} {
				var want []string
				for _, ni := range all {
					if m.Get(ni.Name()).Code() == code {
						want = append(want, ni.Name())
					}
				}
				var got []string
				for _, ni := range m.NodesForStatusCode(all, code) {
					got = append(got, ni.Name())
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("code %v (-want +got):\n%s", code, diff)
				}
			}
		})
	}
}

// The first lookups of a map read its entries, the later ones its index
// by name: both must give each node's last status, before and after the
// index is built, and after a Release the map starts over.
func TestNodeToStatusLookupsBeforeAndAfterTheIndex(t *testing.T) {
	a, b, c := NewStatus(Unschedulable, "a"), NewStatus(Unschedulable, "b"), NewStatus(UnschedulableAndUnresolvable, "c")
	n := NewCycleNodeToStatus()
	want := map[string]*Status{}
	set := func(node string, s *Status, fresh bool) {
		if fresh {
			n.SetNew(node, s)
		} else {
			n.Set(node, s)
		}
		want[node] = s
	}
	check := func(when string) {
		t.Helper()
		for _, node := range []string{"n0", "n1", "n2", "n3", "", "x"} {
			got, ok := n.Explicit(node)
			if w, wok := want[node]; got != w || ok != wok {
				t.Errorf("%s: %q: %v %v, want %v %v", when, node, got, ok, w, wok)
			}
		}
	}
	set("n0", a, true)
	set("n1", b, true)
	set("n2", c, true)
	check("read from the entries")
	check("from the index")
	set("n1", c, false)
	set("n3", a, false)
	check("set after the index")
	n.Release()
	want = map[string]*Status{}
	check("released")
	set("n2", b, true)
	check("refilled")
}
