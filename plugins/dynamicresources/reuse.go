package dynamicresources

import (
	"context"
	"sync"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"
)

// kube builds an allocator every PreFilter. The allocator keeps the
// slices (split by node), the allocated state it was handed (whose sets
// allocatedStates updates in place), and, per pool with shared counters,
// the counters left once it first needs them, from the state at that
// time. An allocator built for the same slices, classes and state is
// therefore the one a new build would give as long as no allocation came
// or went in a pool with shared counters: reusedAllocator hands it out
// again until then.

// reusedAllocator is the last allocator built and what it was built from.
type reusedAllocator struct {
	mu        sync.Mutex
	allocator structured.Allocator
	rev       int64
	state     *structured.AllocatedState
	slices    []*resourceapi.ResourceSlice
	// countered is allocatedStates.countered when it was built.
	countered int64
}

// allocator returns an allocator over the slices and the state: the last
// one when nothing it keeps has changed, a new one otherwise.
func (pl *DynamicResources) allocator(ctx context.Context, state *structured.AllocatedState, slices []*resourceapi.ResourceSlice, countered int64) (structured.Allocator, error) {
	r := &pl.reuse
	rev := pl.dra.ObjectsRevision()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.allocator != nil && r.rev == rev && r.state == state && sameSlices(r.slices, slices) && r.countered == countered {
		return r.allocator, nil
	}
	a, err := structured.NewAllocator(ctx, pl.allocFeatures, *state, classLister{pl.dra}, slices, pl.celCache)
	if err != nil {
		r.allocator = nil
		return nil, err
	}
	r.allocator, r.rev, r.state, r.slices, r.countered = a, rev, state, slices, countered
	return a, nil
}

// sameSlices: the very same list (the manager hands out one list per
// objects revision).
func sameSlices(a, b []*resourceapi.ResourceSlice) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// counterPoolsLocked are the pools with shared counters, for the
// manager's current objects revision.
func (a *allocatedStates) counterPoolsLocked() map[string]bool {
	rev := a.m.ObjectsRevision()
	if a.counterPools != nil && a.counterRev == rev {
		return a.counterPools
	}
	pools := map[string]bool{}
	for _, s := range a.m.Slices() {
		if len(s.Spec.SharedCounters) > 0 {
			pools[s.Spec.Driver+"/"+s.Spec.Pool.Name] = true
		}
	}
	a.counterPools, a.counterRev = pools, rev
	return pools
}

// touchedLocked counts a change of what is allocated in pool p.
func (a *allocatedStates) touchedLocked(p string) {
	if a.counterPoolsLocked()[p] {
		a.countered++
	}
}

// counteredChanges counts the changes of what is allocated in pools with
// shared counters so far.
func (a *allocatedStates) counteredChanges() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.countered
}
