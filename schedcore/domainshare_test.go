package schedcore_test

import (
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// ShareKey shares counts copy-on-write (a write to either side leaves the
// other as it was) and only counts made over the same label column: not
// another snapshot's or label's, nor ones made before the snapshot's nodes
// changed.
func TestDomainCountsShareKey(t *testing.T) {
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	c.AddNode(schedtest.MakeNode("a1").Label("zone", "a").Label("rack", "a").Obj())
	c.AddNode(schedtest.MakeNode("b1").Label("zone", "b").Obj())
	snap := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(snap)
	a1, _ := snap.Get("a1")

	src := schedcore.NewDomainCounts(snap, "zone")
	src.AddValue(0, "a", 2)
	d := schedcore.NewDomainCounts(snap, "rack", "zone")
	if d.ShareKey(0, src, 0) {
		t.Fatal("counts of zone shared as rack's")
	}
	if !d.ShareKey(1, src, 0) {
		t.Fatal("counts over the same column not shared")
	}
	if dom, _ := d.NodeDomain(1, a1); d.At(1, dom) != 2 {
		t.Fatalf("shared count %d, want 2", d.At(1, dom))
	}
	d.AddNode(1, a1, 5)
	if dom, _ := src.NodeDomain(0, a1); src.At(0, dom) != 2 {
		t.Errorf("a write to the sharing counts changed the source: %d, want 2", src.At(0, dom))
	}
	e := schedcore.NewDomainCounts(snap, "zone")
	e.ShareKey(0, src, 0)
	src.AddNode(0, a1, 1)
	if dom, _ := e.NodeDomain(0, a1); e.At(0, dom) != 2 {
		t.Errorf("a write to the source changed the sharing counts: %d, want 2", e.At(0, dom))
	}

	other := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(other)
	if schedcore.NewDomainCounts(other, "zone").ShareKey(0, src, 0) {
		t.Error("counts of another snapshot shared")
	}
	c.AddNode(schedtest.MakeNode("c1").Label("zone", "c").Obj())
	c.UpdateSnapshot(snap)
	if schedcore.NewDomainCounts(snap, "zone").ShareKey(0, src, 0) {
		t.Error("counts made before the nodes changed shared")
	}
}
