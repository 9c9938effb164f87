package dynamicresources

import (
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"
)

// Taking devices only ever removes choices from the allocator. It walks
// the node's devices in a fixed order (pools by ID, slices by name,
// devices in slice order) and returns the first assignment that works; a
// device in use is skipped before its selectors are evaluated. When,
// since an answer was computed, the only changes in the node's pools are
// dedicated devices taken (no device freed, no shared device, no
// consumed capacity, in pools without shared counters or devices that
// allow multiple allocations), every assignment the allocator could try
// now it could try then, and each check on it gives the same result
// (selectors, taints and constraints read the device only; what is taken
// only adds rejections). So:
//   - a failure without an error stays one: the search is a part of the
//     one that found nothing and raised no error;
//   - a success stays the same success when none of its devices was taken:
//     it is still possible, and everything before it in the walk was and
//     still is impossible.
//
// Both need requests the search handles alike in any state: exact counts
// only (allocationMode All decides from every matching device, and adds
// errors of its own), with at most AllocationResultsMaxSize devices per
// claim (the search backtracks differently at the limit). Anything else
// runs the allocator.

// poolChange is one change of what is allocated in a pool: the pool's
// version after it, and what it did.
type poolChange struct {
	ver int64
	// removed: an allocation left the pool (something may be free).
	removed bool
	// devices are the dedicated devices taken; other: a shared device or
	// consumed capacity was taken.
	devices []string
	other   bool
}

// maxPoolChanges bounds each pool's log: an answer older than the log
// runs the allocator.
const maxPoolChanges = 64

// logLocked appends a pool's change.
func (a *allocatedStates) logLocked(pool string, ch poolChange) {
	log := a.changes[pool]
	if len(log) >= maxPoolChanges {
		log = append(log[:0:0], log[len(log)-maxPoolChanges/2:]...)
	}
	a.changes[pool] = append(log, ch)
}

// changeLog is the pools' logs as of the last get (read by the cycle's
// filters; the next get appends to it).
func (a *allocatedStates) changeLog() map[string][]poolChange {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.changes
}

// taken is the contribution's change of the pool.
func (c contribution) taken(pool string, ver int64) poolChange {
	ch := poolChange{ver: ver}
	for _, id := range c.devices {
		if id.Driver.String()+"/"+id.Pool.String() == pool {
			ch.devices = append(ch.devices, id.Device.String())
		}
	}
	for _, id := range c.shared {
		if id.Driver.String()+"/"+id.Pool.String() == pool {
			ch.other = true
		}
	}
	for _, cc := range c.caps {
		if cc.DeviceID.Driver.String()+"/"+cc.DeviceID.Pool.String() == pool {
			ch.other = true
		}
	}
	return ch
}

// stillHoldsLocked reports whether the slot's answer (computed for older
// versions of its relevant pools) is still the allocator's, by the rule
// above.
func (m *allocationMemo) stillHoldsLocked(in *memoInputs, claimsID int64, claims []*resourceapi.ResourceClaim, sl *claimsSlot) bool {
	if in.changes == nil || sl.e.err != nil || !m.exactCountsLocked(claimsID, claims) {
		return false
	}
	for i, p := range sl.nm.pools {
		if !sl.rel[i] {
			continue
		}
		from, to := sl.e.versions[i], in.poolVer[p]
		if from == to {
			continue
		}
		if from < 0 || to < from || !m.plainPoolLocked(p) {
			return false
		}
		n := int64(0)
		for _, ch := range in.changes[p] {
			if ch.ver <= from || ch.ver > to {
				continue
			}
			if ch.removed || ch.other || usesAny(sl.e.results, p, ch.devices) {
				return false
			}
			n++
		}
		if n != to-from {
			// A change not in the log.
			return false
		}
	}
	return true
}

// usesAny reports whether the results hold one of the pool's devices.
func usesAny(results []resourceapi.AllocationResult, pool string, devices []string) bool {
	for i := range results {
		for _, r := range results[i].Devices.Results {
			if r.Driver+"/"+r.Pool != pool {
				continue
			}
			for _, d := range devices {
				if r.Device == d {
					return true
				}
			}
		}
	}
	return false
}

// plainPoolLocked: none of the pool's slices has shared counters, none of
// its devices consumes counters or allows multiple allocations (what is
// taken there is a set of devices, nothing more).
func (m *allocationMemo) plainPoolLocked(p string) bool {
	if v, ok := m.plain[p]; ok {
		return v
	}
	ss, ok := m.poolSlices[p]
	plain := ok
	for _, s := range ss {
		if len(s.Spec.SharedCounters) > 0 {
			plain = false
		}
		for _, d := range s.Spec.Devices {
			if len(d.ConsumesCounters) > 0 || ptr.Deref(d.AllowMultipleAllocations, false) {
				plain = false
			}
		}
	}
	m.plain[p] = plain
	return plain
}

// exactCountsLocked: every request and subrequest of the claims asks for
// an exact count, and a claim's largest choices fit in one result.
func (m *allocationMemo) exactCountsLocked(claimsID int64, claims []*resourceapi.ResourceClaim) bool {
	if v, ok := m.exact[claimsID]; ok {
		return v
	}
	ok := true
	for _, c := range claims {
		total := int64(0)
		for _, r := range c.Spec.Devices.Requests {
			most := int64(-1)
			switch {
			case r.Exactly != nil && len(r.FirstAvailable) == 0:
				most = exactCount(r.Exactly.AllocationMode, r.Exactly.Count)
			case r.Exactly == nil && len(r.FirstAvailable) > 0:
				for _, sub := range r.FirstAvailable {
					n := exactCount(sub.AllocationMode, sub.Count)
					if n < 0 {
						most = -1
						break
					}
					most = max(most, n)
				}
			}
			if most < 0 {
				ok = false
				break
			}
			total += most
		}
		if !ok || total > resourceapi.AllocationResultsMaxSize {
			ok = false
			break
		}
	}
	m.exact[claimsID] = ok
	return ok
}

// exactCount is the count of an exact-count request, -1 for any other.
func exactCount(mode resourceapi.DeviceAllocationMode, count int64) int64 {
	if mode != resourceapi.DeviceAllocationModeExactCount || count < 0 || count > resourceapi.AllocationResultsMaxSize {
		return -1
	}
	return count
}
