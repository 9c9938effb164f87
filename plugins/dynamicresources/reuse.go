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
// or went in a pool with shared counters: reusedAllocators hands it out
// again until then. A cycle's slices are the manager's list or that list
// without the pools its claims cannot use (prune.go): an allocator is
// kept per list.

// reusedAllocators are the allocators built last, by the slice list they
// were built from.
type reusedAllocators struct {
	mu     sync.Mutex
	byList map[listKey]*builtAllocator
}

// listKey names a slice list by identity: its first element's address
// and its length (the manager hands out one list per objects revision,
// and the pruned lists are kept per revision).
type listKey struct {
	first **resourceapi.ResourceSlice
	n     int
}

// builtAllocator is an allocator and what it was built from.
type builtAllocator struct {
	allocator structured.Allocator
	rev       int64
	state     *structured.AllocatedState
	// countered is allocatedStates.countered when it was built.
	countered int64
}

// maxReusedAllocators bounds the allocators kept (one per claims' list at
// most); all go when it is reached.
const maxReusedAllocators = 64

// allocator returns an allocator over the slices and the state: the last
// one built for the list when nothing it keeps has changed, a new one
// otherwise.
func (pl *DynamicResources) allocator(ctx context.Context, state *structured.AllocatedState, slices []*resourceapi.ResourceSlice, countered int64) (structured.Allocator, error) {
	r := &pl.reuse
	rev := pl.dra.ObjectsRevision()
	key := listKey{n: len(slices)}
	if len(slices) > 0 {
		key.first = &slices[0]
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.byList[key]; b != nil && b.rev == rev && b.state == state && b.countered == countered {
		return b.allocator, nil
	}
	a, err := structured.NewAllocator(ctx, pl.allocFeatures, *state, classLister{pl.dra}, slices, pl.celCache)
	if err != nil {
		delete(r.byList, key)
		return nil, err
	}
	if r.byList == nil || len(r.byList) >= maxReusedAllocators {
		r.byList = map[listKey]*builtAllocator{}
	}
	r.byList[key] = &builtAllocator{allocator: a, rev: rev, state: state, countered: countered}
	return a, nil
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
