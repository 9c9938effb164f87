package schedcore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// kubeNodeTree is kube-scheduler v1.37.2's nodeTree (pkg/scheduler/
// backend/cache/node_tree.go) as it is written: a node is looked for in
// its zone's list before it is added. nodeTree must list what it lists.
type kubeNodeTree struct {
	zones []string
	tree  map[string][]string
	num   int
}

func (t *kubeNodeTree) add(n *v1.Node) {
	z := ZoneKey(n)
	if na, ok := t.tree[z]; ok {
		for _, x := range na {
			if x == n.Name {
				return
			}
		}
		t.tree[z] = append(na, n.Name)
	} else {
		t.zones = append(t.zones, z)
		t.tree[z] = []string{n.Name}
	}
	t.num++
}

func (t *kubeNodeTree) remove(n *v1.Node) {
	z := ZoneKey(n)
	na := t.tree[z]
	for i, x := range na {
		if x == n.Name {
			t.tree[z] = append(na[:i:i], na[i+1:]...)
			if len(t.tree[z]) == 0 {
				delete(t.tree, z)
				for j, zz := range t.zones {
					if zz == z {
						t.zones = append(t.zones[:j:j], t.zones[j+1:]...)
						break
					}
				}
			}
			t.num--
			return
		}
	}
}

func (t *kubeNodeTree) list() []string {
	var out []string
	for i := 0; len(out) < t.num; i++ {
		for _, z := range t.zones {
			if na := t.tree[z]; i < len(na) {
				out = append(out, na[i])
			}
		}
	}
	return out
}

func zonedNode(name, zone string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelTopologyZone: zone}}}
}

// A node added twice to its zone is listed once, a node added again under
// another zone is listed twice (kube looks in the new zone's list only),
// and a removed node can come back: the tree's lookup by name must give
// kube's list in each case.
func TestNodeTreeListsAsKube(t *testing.T) {
	type op struct {
		remove     bool
		name, zone string
	}
	tests := []struct {
		name string
		ops  []op
	}{
		{"nodes over zones are interleaved", []op{{false, "a", "z1"}, {false, "b", "z1"}, {false, "c", "z2"}, {false, "d", "z1"}, {false, "e", "z3"}}},
		{"a node added twice to its zone is listed once", []op{{false, "a", "z1"}, {false, "b", "z2"}, {false, "a", "z1"}, {false, "b", "z2"}}},
		{"a node added again under another zone is listed in both", []op{{false, "a", "z1"}, {false, "b", "z1"}, {false, "a", "z2"}, {false, "a", "z2"}}},
		{"a node listed in two zones is not added to the first again", []op{{false, "a", "z1"}, {false, "a", "z2"}, {false, "a", "z1"}, {true, "a", "z2"}, {false, "a", "z1"}}},
		{"a removed node added again is listed again", []op{{false, "a", "z1"}, {false, "b", "z1"}, {true, "a", "z1"}, {false, "a", "z1"}, {false, "a", "z1"}}},
		{"a node removed from a zone it was not in stays listed", []op{{false, "a", "z1"}, {true, "a", "z2"}, {false, "a", "z1"}}},
		{"the last node of a zone removed drops the zone", []op{{false, "a", "z1"}, {false, "b", "z2"}, {true, "a", "z1"}, {false, "c", "z1"}, {false, "d", "z2"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, want := newNodeTree(), &kubeNodeTree{tree: map[string][]string{}}
			for i, o := range tt.ops {
				n := zonedNode(o.name, o.zone)
				if o.remove {
					got.remove(n)
					want.remove(n)
				} else {
					got.add(n)
					want.add(n)
				}
				if diff := cmp.Diff(want.list(), got.list()); diff != "" {
					t.Fatalf("after op %d %+v: list (-want +got):\n%s", i, o, diff)
				}
			}
		})
	}
}
