package schedcore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// NodeMemo values hold while a node is unchanged, are computed again once
// it changes, are never remembered for NodeInfos outside the snapshot list,
// and the least recently used key is dropped first.
func TestNodeMemo(t *testing.T) {
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(schedtest.MakeNode(n).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj())
	}
	s := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	m := schedcore.NewNodeMemo[string](2)
	par := schedcore.NewParallelizer(2)
	ctx := context.Background()
	// values returns k's values for nodes, computed as "<k> of <node>
	// #<call>", so that a remembered value tells the call it is from.
	call := 0
	values := func(k string, nodes []*schedcore.NodeInfo) []string {
		call++
		return m.Values(ctx, par, key(k), nodes, func(ni *schedcore.NodeInfo) string {
			return fmt.Sprintf("%s of %s #%d", k, ni.Name(), call)
		})
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	check("first call", values("k1", s.List()), []string{"k1 of a #1", "k1 of b #1", "k1 of c #1"})
	check("unchanged nodes", values("k1", s.List()), []string{"k1 of a #1", "k1 of b #1", "k1 of c #1"})
	check("another key", values("k2", s.List()[1:]), []string{"k2 of b #3", "k2 of c #3"})

	// A changed node is computed again; the others are remembered.
	p := schedtest.MakePod("p1").UID("p1").Req("cpu", "1").Node("b").Obj()
	if err := c.AddPod(p); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	check("after a pod was added to b", values("k1", s.List()), []string{"k1 of a #1", "k1 of b #4", "k1 of c #1"})

	// A NodeInfo outside the snapshot list is never remembered.
	free := schedcore.NewNodeInfo()
	free.SetNode(schedtest.MakeNode("free").Obj())
	values("k1", []*schedcore.NodeInfo{free})
	check("a node from outside the list", values("k1", []*schedcore.NodeInfo{free}), []string{"k1 of free #6"})

	// The least recently used key goes first: k2 (used before k1's last
	// calls) makes room for k3.
	values("k3", s.List())
	if m.Len() != 2 {
		t.Fatalf("memo holds %d keys, want 2", m.Len())
	}
	check("k1, used more recently than k2", values("k1", s.List()), []string{"k1 of a #1", "k1 of b #4", "k1 of c #1"})
	check("k2, evicted", values("k2", s.List()[1:]), []string{"k2 of b #9", "k2 of c #9"})
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
		v.Put(ni, uint16(i+100))
	}
	check := func(what string, v schedcore.VerdictView, hit func(string) bool) {
		t.Helper()
		for i, ni := range s.List() {
			got, ok := v.Get(ni)
			if want := hit(ni.Name()); ok != want || ok && got != uint16(i+100) {
				t.Errorf("%s: node %s: got %d, %v; want %d, %v", what, ni.Name(), got, ok, i+100, want)
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

// TestVerdictMemoByNode checks the entries kept for a node object
// (GetByNode): they outlive pods
// placed on the node, not a change of the node object.
func TestVerdictMemoByNode(t *testing.T) {
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(schedtest.MakeNode(n).Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj())
	}
	s := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(s)
	v := schedcore.NewVerdictMemo(1).View(key("k"), s.NumNodes())
	for i, ni := range s.List() {
		v.PutByNode(ni, uint16(i+1))
	}
	check := func(what string, hit func(string) bool) {
		t.Helper()
		for i, ni := range s.List() {
			got, ok := v.GetByNode(ni)
			if want := hit(ni.Name()); ok != want || ok && got != uint16(i+1) {
				t.Errorf("%s: node %s: got %d, %v; want %d, %v", what, ni.Name(), got, ok, i+1, want)
			}
		}
	}
	check("unchanged nodes", func(string) bool { return true })
	if err := c.AddPod(schedtest.MakePod("p1").UID("p1").Req("cpu", "1").Node("b").Obj()); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	check("after a pod was added to b", func(string) bool { return true })
	c.UpdateNode(nil, schedtest.MakeNode("c").Label("zone", "z1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj())
	c.UpdateSnapshot(s)
	check("after c was relabelled", func(n string) bool { return n != "c" })
}
