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

// TestUpdateInPlace checks that UpdateSnapshot overwrites a changed node's
// listed slab member where it stands (kube-scheduler's stable snapshot
// NodeInfos): same object, slab index and position, the new contents
// under a fresh generation, the columns and the map in step; and that a
// listed NodeInfo outside the slab is replaced by the copy, never written.
func TestUpdateInPlace(t *testing.T) {
	const n = 64
	c := slabTestCache("n", n)
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	first := &s.List()[0]
	before := append([]*NodeInfo(nil), s.List()...)
	gens := make([]int64, n)
	for i, ni := range before {
		gens[i] = ni.Generation
	}
	changed := map[int]bool{}
	for k := 0; k < n; k += 3 {
		if err := c.AddPod(slabTestPod(fmt.Sprint("p", k), fmt.Sprintf("n%03d", k))); err != nil {
			t.Fatal(err)
		}
		c.UpdateSnapshot(s)
		changed[k] = true
	}
	if &s.List()[0] != first {
		t.Fatal("an in-place update replaced the list slice")
	}
	for i, ni := range s.List() {
		if ni != before[i] {
			t.Errorf("%s at %d: another NodeInfo is listed, want the slab member overwritten", ni.Name(), i)
		}
		if slabIndex(ni) != i || ni.listIndex() != i || !s.inSlab(ni) || indexIn(s.List(), ni) != i {
			t.Errorf("%s at %d: slab index %d, listIndex %d, in the slab %v, indexIn %d", ni.Name(), i, slabIndex(ni), ni.listIndex(), s.inSlab(ni), indexIn(s.List(), ni))
		}
		if s.nodeInfoMap[ni.Name()] != ni {
			t.Errorf("%s: the map holds another NodeInfo than the list", ni.Name())
		}
		if s.listGens[i] != ni.Generation || s.listNames[i] != ni.Name() {
			t.Errorf("%s at %d: columns say %s of generation %d, the NodeInfo %d", ni.Name(), i, s.listNames[i], s.listGens[i], ni.Generation)
		}
		wantPods := 0
		if changed[i] {
			wantPods = 1
		}
		if len(ni.Pods) != wantPods || (ni.Generation != gens[i]) != changed[i] {
			t.Errorf("%s at %d: %d pods, generation %d (was %d); changed: %v", ni.Name(), i, len(ni.Pods), ni.Generation, gens[i], changed[i])
		}
	}

	// A listed NodeInfo outside the slab is replaced, not written.
	const j = 1
	out := s.List()[j].Clone()
	s.nodeInfoList[j], s.nodeInfoMap[out.Name()] = out, out
	if err := c.AddPod(slabTestPod("q", out.Name())); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	ni := s.List()[j]
	if ni == out || len(out.Pods) != 0 {
		t.Fatalf("the NodeInfo outside the slab was written (%d pods) or kept listed (%v)", len(out.Pods), ni == out)
	}
	if len(ni.Pods) != 1 || ni.listIndex() != j || indexIn(s.List(), ni) != j || s.nodeInfoMap[ni.Name()] != ni || s.listGens[j] != ni.Generation {
		t.Errorf("the copy listed for %s: %d pods, listIndex %d, indexIn %d, in the map %v, column generation %d of %d", ni.Name(), len(ni.Pods), ni.listIndex(), indexIn(s.List(), ni), s.nodeInfoMap[ni.Name()] == ni, s.listGens[j], ni.Generation)
	}
}
