package schedcore

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func slabTestNode(name string) *v1.Node {
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
	n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourcePods: resource.MustParse("110")}
	return n
}

func slabTestPod(name, node string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}, Spec: v1.PodSpec{NodeName: node}}
}

// slabTestCache is a cache with n nodes named prefix000, prefix001, ...
func slabTestCache(prefix string, n int) *Cache {
	c := NewCache(DefaultFeatures)
	for i := range n {
		c.AddNode(slabTestNode(fmt.Sprintf("%s%03d", prefix, i)))
	}
	return c
}

// TestIndexInSlab checks indexIn on NodeInfos of the registered slab and
// on every kind of NodeInfo that must not pass for one: the slab lookup
// finds a listed slab member without reading it, and anything else gets
// the answer of the listPos path.
func TestIndexInSlab(t *testing.T) {
	other := NewEmptySnapshot()
	slabTestCache("x", 16).UpdateSnapshot(other)
	c := slabTestCache("n", 16)
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s) // the latest slab
	list := s.List()
	older := append([]*NodeInfo(nil), list...)
	// A rebuild (a node removed: the others move up one place) moves the
	// nodes into a new slab; the older list still holds the old one's.
	c.RemoveNode(slabTestNode("n000"))
	c.UpdateSnapshot(s)
	rebuilt := s.List()

	tests := []struct {
		name     string
		list     []*NodeInfo
		ni       *NodeInfo
		want     int
		fromSlab bool
	}{
		{"a listed slab member, found in the slab", rebuilt, rebuilt[5], 5, true},
		{"another snapshot's list holds another node at the slab index", other.List(), rebuilt[5], -1, true},
		{"a list shorter than the slab index", rebuilt[:3], rebuilt[5], -1, true},
		{"a clone of a slab member, found through listPos", rebuilt, rebuilt[5].Clone(), 5, false},
		{"a member of an older slab in the list of its rebuild", older, older[5], 5, false},
		{"a member of an older slab, whose position now holds another node", rebuilt, older[5], -1, false},
		{"another snapshot's NodeInfo in this list", rebuilt, other.List()[5], -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := indexIn(tt.list, tt.ni); got != tt.want {
				t.Errorf("indexIn = %d, want %d", got, tt.want)
			}
			if got := slabIndex(tt.ni) >= 0; got != tt.fromSlab {
				t.Errorf("in the registered slab: %v, want %v", got, tt.fromSlab)
			}
		})
	}
	// The rebuild copied the nodes: the older list's NodeInfos keep their
	// positions.
	for i, ni := range older {
		if ni.listIndex() != i {
			t.Errorf("older list: %s at %d has listIndex %d", ni.Name(), i, ni.listIndex())
		}
	}
}

// TestReslab checks that once more than 1/reslabShare of the listed nodes
// (and more than reslabMin) were replaced by NodeInfos outside the slab, UpdateSnapshot copies the
// list into a new slab, keeping positions, generations and contents, and
// leaving the NodeInfos it copied unchanged.
func TestReslab(t *testing.T) {
	const n = 8*reslabMin + 16
	c := slabTestCache("n", n)
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	first := &s.List()[0]
	replaced := max(n/reslabShare, reslabMin) + 1
	var before []*NodeInfo
	for k := range replaced {
		if err := c.AddPod(slabTestPod(fmt.Sprint("p", k), fmt.Sprintf("n%03d", 2*k))); err != nil {
			t.Fatal(err)
		}
		before = append(before[:0], s.List()...)
		c.UpdateSnapshot(s)
		if k < replaced-1 {
			ni := s.List()[2*k]
			if s.inSlab(ni) || slabIndex(ni) >= 0 {
				t.Fatalf("after %d replacements: the replaced node is in the slab", k+1)
			}
			if got := indexIn(s.List(), ni); got != 2*k {
				t.Fatalf("after %d replacements: indexIn of the replaced node = %d, want %d", k+1, got, 2*k)
			}
			if s.outside != k+1 {
				t.Fatalf("after %d replacements: outside = %d", k+1, s.outside)
			}
		}
	}
	if s.outside != 0 {
		t.Fatalf("outside = %d after the reslab, want 0", s.outside)
	}
	if &s.List()[0] != first {
		t.Fatal("the reslab replaced the list slice")
	}
	last := 2 * (replaced - 1)
	for i, ni := range s.List() {
		if slabIndex(ni) != i || ni.listIndex() != i || !s.inSlab(ni) {
			t.Errorf("%s at %d: slab index %d, listIndex %d, in the slab %v", ni.Name(), i, slabIndex(ni), ni.listIndex(), s.inSlab(ni))
		}
		if s.nodeInfoMap[ni.Name()] != ni {
			t.Errorf("%s: the map holds another NodeInfo than the list", ni.Name())
		}
		if i != last && (ni.Generation != before[i].Generation || len(ni.Pods) != len(before[i].Pods) || ni.Name() != before[i].Name()) {
			t.Errorf("%s at %d: generation %d, %d pods; before the reslab %s, %d, %d pods", ni.Name(), i, ni.Generation, len(ni.Pods), before[i].Name(), before[i].Generation, len(before[i].Pods))
		}
		if s.listGens[i] != ni.Generation {
			t.Errorf("%s at %d: listGens %d, generation %d", ni.Name(), i, s.listGens[i], ni.Generation)
		}
	}
	if got := len(s.List()[last].Pods); got != 1 {
		t.Errorf("the last replaced node has %d pods after the reslab, want 1", got)
	}
	for i, ni := range before {
		if ni.listIndex() != i || indexIn(before, ni) != i {
			t.Errorf("list before the reslab: %s at %d has listIndex %d, indexIn %d", ni.Name(), i, ni.listIndex(), indexIn(before, ni))
		}
	}
}
