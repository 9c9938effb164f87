package schedcore

import (
	"fmt"
	"sort"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// sortedAllocs names a set of allocations by their first device, sorted,
// each as often as it occurs.
func sortedAllocs(allocs []*resourceapi.AllocationResult) []string {
	var out []string
	for _, a := range allocs {
		out = append(out, a.Devices.Results[0].Device)
	}
	sort.Strings(out)
	return out
}

// TestAllocationChangesFollowAllocations: a reader applying
// AllocationChanges holds the same set as Allocations (each allocation
// once) through claims allocated, assumed, restored, deleted and in-flight
// allocations signalled and removed; a reader further behind than the
// kept journal is told to read the whole set. It fails when a change is
// not journalled, or when a trimmed journal answers.
func TestAllocationChangesFollowAllocations(t *testing.T) {
	m := NewDRAManager()
	alloc := func(dev string) *resourceapi.AllocationResult {
		return &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{Device: dev}}}}
	}
	claim := func(name, rv string, a *resourceapi.AllocationResult) *resourceapi.ResourceClaim {
		c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: rv}}
		c.Status.Allocation = a
		return c
	}
	set := map[*resourceapi.AllocationResult]bool{}
	_, seq := m.AllocationSet()
	check := func(step string) {
		t.Helper()
		changes, s, ok := m.AllocationChanges(seq)
		if !ok {
			t.Fatalf("%s: changes since %d not kept", step, seq)
		}
		for _, ch := range changes {
			if ch.Added {
				set[ch.Allocation] = true
			} else {
				delete(set, ch.Allocation)
			}
		}
		seq = s
		var got []*resourceapi.AllocationResult
		for a := range set {
			got = append(got, a)
		}
		all, _ := m.Allocations()
		uniq := map[*resourceapi.AllocationResult]bool{}
		var want []*resourceapi.AllocationResult
		for _, a := range all {
			if !uniq[a] {
				uniq[a] = true
				want = append(want, a)
			}
		}
		if g, w := fmt.Sprint(sortedAllocs(got)), fmt.Sprint(sortedAllocs(want)); g != w {
			t.Errorf("%s: changes give %s, Allocations %s", step, g, w)
		}
	}
	a1, a2 := alloc("d1"), alloc("d2")
	m.AddClaim(claim("running", "1", a1))
	check("a claim allocated")
	m.AddClaim(claim("pending", "1", nil))
	inflight := claim("pending", "2", a2)
	m.SignalClaimPendingAllocation(inflight.UID, inflight)
	check("an allocation in flight")
	if err := m.AssumeClaim(inflight); err != nil {
		t.Fatal(err)
	}
	check("the in-flight claim assumed (the same allocation twice)")
	m.MaybeRemoveClaimPendingAllocation(inflight.UID, false)
	check("the in-flight allocation removed, the assumed claim holds it")
	m.RestoreClaim("ns", "pending")
	check("the assumed claim restored")
	m.AddClaim(claim("running", "2", alloc("d3")))
	check("a claim reallocated")
	m.DeleteClaim(claim("running", "2", nil))
	check("a claim deleted")

	// A reader that fell further behind than the journal keeps.
	_, old := m.AllocationSet()
	for i := 0; i <= maxAllocJournal; i++ {
		m.AddClaim(claim(fmt.Sprintf("c-%d", i), "1", alloc(fmt.Sprintf("x-%d", i))))
	}
	if _, _, ok := m.AllocationChanges(old); ok {
		t.Errorf("changes since %d answered after %d more", old, maxAllocJournal+1)
	}
}
