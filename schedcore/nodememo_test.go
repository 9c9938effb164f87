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
	tb := m.Acquire(key("k1"), s.NumNodes())
	for i, ni := range s.List() {
		if _, ok := tb.Get(ni); ok {
			t.Fatalf("empty table has an entry for %s", ni.Name())
		}
		tb.Put(ni, i+10)
	}
	tb.Release()

	tb = m.Acquire(key("k1"), s.NumNodes())
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
	tb = m.Acquire(key("k1"), s.NumNodes())
	for _, ni := range s.List() {
		_, ok := tb.Get(ni)
		if want := ni.Name() != "b"; ok != want {
			t.Errorf("node %s after a pod was added to b: hit %v, want %v", ni.Name(), ok, want)
		}
	}
	tb.Release()

	// A NodeInfo outside the snapshot list is never remembered.
	free := schedcore.NewNodeInfo()
	tb = m.Acquire(key("k1"), s.NumNodes())
	tb.Put(free, 99)
	if _, ok := tb.Get(free); ok {
		t.Error("a NodeInfo outside a snapshot list was remembered")
	}
	tb.Release()

	// The least recently used key goes first.
	m.Acquire(key("k2"), 3).Release()
	m.Acquire(key("k1"), 3).Release()
	m.Acquire(key("k3"), 3).Release()
	if m.Len() != 2 {
		t.Fatalf("memo holds %d keys, want 2", m.Len())
	}
	tb = m.Acquire(key("k1"), 3)
	_, ok := tb.Get(s.List()[0])
	tb.Release()
	if !ok {
		t.Error("k1, used more recently than k2, was evicted")
	}
}

// VerdictMemo entries hold while a node is unchanged, miss once it changes,
// never apply outside the snapshot list, survive a view growing, and the
// least recently used key is dropped first.
func TestVerdictMemo(t *testing.T) {
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(schedtest.MakeNode(n).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj())
	}
	s := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	m := schedcore.NewVerdictMemo(2)
	v := m.View(key("k1"), s.NumNodes())
	for i, ni := range s.List() {
		if _, ok := v.Get(ni); ok {
			t.Fatalf("empty view has an entry for %s", ni.Name())
		}
		v.Put(ni, uint16(i+1000))
	}
	check := func(what string, v schedcore.VerdictView, hit func(string) bool) {
		t.Helper()
		for i, ni := range s.List() {
			got, ok := v.Get(ni)
			if want := hit(ni.Name()); ok != want || ok && got != uint16(i+1000) {
				t.Errorf("%s: node %s: got %d, %v; want %d, %v", what, ni.Name(), got, ok, i+1000, want)
			}
		}
	}
	all := func(string) bool { return true }
	check("unchanged nodes", m.View(key("k1"), s.NumNodes()), all)
	check("after the view grew", m.View(key("k1"), s.NumNodes()+5), all)

	p := schedtest.MakePod("p1").UID("p1").Req("cpu", "1").Node("b").Obj()
	if err := c.AddPod(p); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	check("after a pod was added to b", m.View(key("k1"), s.NumNodes()), func(n string) bool { return n != "b" })

	free := schedcore.NewNodeInfo()
	v = m.View(key("k1"), s.NumNodes())
	v.Put(free, 7)
	if _, ok := v.Get(free); ok {
		t.Error("a NodeInfo outside a snapshot list was remembered")
	}

	m.View(key("k2"), s.NumNodes())
	m.View(key("k1"), s.NumNodes()) // k1 used last: k2 goes
	m.View(key("k3"), s.NumNodes())
	if m.Len() != 2 {
		t.Errorf("Len = %d, want 2", m.Len())
	}
	check("k1 kept over the older k2", m.View(key("k1"), s.NumNodes()), func(n string) bool { return n != "b" })
	if _, ok := m.View(key("k2"), s.NumNodes()).Get(s.List()[0]); ok {
		t.Error("k2 was not dropped")
	}
}

func key(s string) *schedcore.MemoKey { return new(schedcore.MemoKey).String(s) }
