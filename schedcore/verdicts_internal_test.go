package schedcore

import (
	"fmt"
	"math/rand"
	"sync/atomic"
	"testing"
)

// TestRejectTable checks that a plugin's remembered rejections are told
// apart by what they say, and that no more than the table holds are
// remembered.
func TestRejectTable(t *testing.T) {
	var tab RejectTable
	a := NewSharedStatus(Unschedulable, "a").WithPlugin("P")
	v, ok := tab.value(a)
	if !ok || tab.Status(v) != a {
		t.Fatalf("first rejection: value %d %v, status %v", v, ok, tab.Status(v))
	}
	// Another status saying the same: the same value.
	if v2, ok := tab.value(NewSharedStatus(Unschedulable, "a").WithPlugin("P")); !ok || v2 != v {
		t.Errorf("an equal rejection: value %d %v, want %d", v2, ok, v)
	}
	for _, s := range []*Status{
		NewSharedStatus(UnschedulableAndUnresolvable, "a").WithPlugin("P"),
		NewSharedStatus(Unschedulable, "a").WithPlugin("Q"),
		NewSharedStatus(Unschedulable, "a", "b").WithPlugin("P"),
	} {
		if v2, ok := tab.value(s); !ok || v2 == v || !tab.Status(v2).Equal(s) {
			t.Errorf("%v: value %d %v, status %v; want a value of its own", s, v2, ok, tab.Status(v2))
		}
	}
	for i := 4; i < MaxRememberedRejections; i++ {
		if _, ok := tab.value(NewSharedStatus(Unschedulable, fmt.Sprint(i))); !ok {
			t.Fatalf("rejection %d not remembered", i)
		}
	}
	if v, ok := tab.value(NewSharedStatus(Unschedulable, "one too many")); ok {
		t.Errorf("a rejection beyond the table's %d remembered as %d", MaxRememberedRejections, v)
	}
	if tab.Status(VerdictPass) != nil || tab.Status(0) != nil {
		t.Error("a pass or no value gives a rejection")
	}
}

// passesAt and verdictsAt read a run of positions at once: their bits
// must be getAt's passes (and rejections), position by position, for entries of other values, of other
// generations, outside the view's window (whose offsets wrap around in
// 24 bits to the entries' offsets) and past the end of the view.
func TestPassesAndVerdictsAtAreGetAt(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	offsets := []int64{-verdictSpan + 1, -1, 0, 1, 2, verdictSpan - 1, verdictSpan, verdictSpan + 1, verdictSpan + 2}
	for round := 0; round < 3000; round++ {
		v := VerdictView{entries: make([]atomic.Uint32, 1+rng.Intn(80)), base: int64(1+rng.Intn(3)) * verdictSpan}
		gens := make([]int64, len(v.entries)+8)
		for i := range gens {
			gens[i] = v.base + offsets[rng.Intn(len(offsets))]
		}
		for i := range v.entries {
			// Passes, rejections (2-9) and other values (10-12).
			if val := uint16(rng.Intn(13)); val != 0 {
				v.putAt(i, v.base+offsets[3+rng.Intn(3)*2], val)
			}
		}
		p0 := min(rng.Intn(len(v.entries)+4), len(gens)-1)
		run := gens[p0 : p0+min(64, rng.Intn(len(gens)-p0))]
		var want, wantRej uint64
		for k, g := range run {
			val, ok := v.getAt(p0+k, g)
			switch {
			case ok && val == VerdictPass:
				want |= 1 << k
			case ok && val >= VerdictFirstReject && val < VerdictFirstReject+MaxRememberedRejections:
				wantRej |= 1 << k
			}
		}
		if got := v.PassesAt(p0, run); got != want {
			t.Fatalf("round %d: passesAt(%d, %d gens) = %b, getAt says %b", round, p0, len(run), got, want)
		}
		// verdictsAt, which a counting pass reads, must tell the same
		// passes and, of the other values getAt finds for the very
		// generation, exactly the RejectTable's.
		if pass, rej := v.VerdictsAt(p0, run); pass != want || rej != wantRej {
			t.Fatalf("round %d: verdictsAt(%d, %d gens) = %b, %b; getAt says %b, %b", round, p0, len(run), pass, rej, want, wantRej)
		}
	}
}
