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

// AddKeyScaled adds another counts' key times a factor, by domain: only
// over the same label column, skipping domains whose count is 0 (they are
// not counted), and a value no node has by its value (each counts numbers
// those its own way).
func TestDomainCountsAddKeyScaled(t *testing.T) {
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	c.AddNode(schedtest.MakeNode("a1").Label("zone", "a").Label("rack", "a").Obj())
	c.AddNode(schedtest.MakeNode("b1").Label("zone", "b").Obj())
	snap := schedcore.NewEmptySnapshot()
	c.UpdateSnapshot(snap)

	src := schedcore.NewDomainCounts(snap, "zone")
	src.AddValue(0, "a", 2)
	src.AddValue(0, "b", 1)
	src.AddValue(0, "b", -1) // counted, at 0
	src.AddValue(0, "x", 3)  // no node has it
	tests := []struct {
		name   string
		key    string
		prior  map[string]int64
		ok     bool
		counts map[string]int64
	}{
		{name: "same column", key: "zone", ok: true, counts: map[string]int64{"a": -4, "x": -6}},
		{name: "onto counts", key: "zone", prior: map[string]int64{"y": 1, "a": 1}, ok: true, counts: map[string]int64{"a": -3, "x": -6, "y": 1}},
		{name: "other label", key: "rack", ok: false, counts: map[string]int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := schedcore.NewDomainCounts(snap, tt.key)
			for v, n := range tt.prior {
				d.AddValue(0, v, n)
			}
			if ok := d.AddKeyScaled(0, src, 0, -2); ok != tt.ok {
				t.Fatalf("AddKeyScaled = %v, want %v", ok, tt.ok)
			}
			got := map[string]int64{}
			d.ForEach(0, func(dom schedcore.Domain, n int64) { got[d.Value(0, dom)] = n })
			if len(got) != len(tt.counts) {
				t.Errorf("counts %v, want %v", got, tt.counts)
			}
			for v, n := range tt.counts {
				if got[v] != n {
					t.Errorf("counts %v, want %v", got, tt.counts)
				}
			}
		})
	}
	c.AddNode(schedtest.MakeNode("c1").Label("zone", "c").Obj())
	c.UpdateSnapshot(snap)
	if schedcore.NewDomainCounts(snap, "zone").AddKeyScaled(0, src, 0, 1) {
		t.Error("counts made before the nodes changed added by domain")
	}
}
