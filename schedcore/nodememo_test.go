package schedcore_test

import (
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// NodeMemo entries hold while a node is unchanged, miss once it changes,
// never apply to NodeInfos outside the snapshot list, and the least
// recently used key is dropped first.
func TestNodeMemo(t *testing.T) {
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(schedtest.MakeNode(n).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj())
	}
	s := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	m := schedcore.NewNodeMemo[int](2)
	tb := m.Acquire("k1", s.NumNodes())
	for i, ni := range s.List() {
		if _, ok := tb.Get(ni); ok {
			t.Fatalf("empty table has an entry for %s", ni.Name())
		}
		tb.Put(ni, i+10)
	}
	tb.Release()

	tb = m.Acquire("k1", s.NumNodes())
	for i, ni := range s.List() {
		if v, ok := tb.Get(ni); !ok || v != i+10 {
			t.Errorf("unchanged node %s: got %d, %v; want %d, true", ni.Name(), v, ok, i+10)
		}
	}
	tb.Release()

	// A changed node is a miss; the others still hit.
	p := schedtest.MakePod("p1").UID("p1").Req("cpu", "1").Node("b").Obj()
	if err := c.AddPod(p); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	tb = m.Acquire("k1", s.NumNodes())
	for _, ni := range s.List() {
		_, ok := tb.Get(ni)
		if want := ni.Name() != "b"; ok != want {
			t.Errorf("node %s after a pod was added to b: hit %v, want %v", ni.Name(), ok, want)
		}
	}
	tb.Release()

	// A NodeInfo outside the snapshot list is never remembered.
	free := schedcore.NewNodeInfo()
	tb = m.Acquire("k1", s.NumNodes())
	tb.Put(free, 99)
	if _, ok := tb.Get(free); ok {
		t.Error("a NodeInfo outside a snapshot list was remembered")
	}
	tb.Release()

	// The least recently used key goes first.
	m.Acquire("k2", 3).Release()
	m.Acquire("k1", 3).Release()
	m.Acquire("k3", 3).Release()
	if m.Len() != 2 {
		t.Fatalf("memo holds %d keys, want 2", m.Len())
	}
	tb = m.Acquire("k1", 3)
	_, ok := tb.Get(s.List()[0])
	tb.Release()
	if !ok {
		t.Error("k1, used more recently than k2, was evicted")
	}
}
