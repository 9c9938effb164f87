package schedcore

import (
	resourceapi "k8s.io/api/resource/v1"
)

// AllocationChange is an allocation that became taken (Added) or no
// longer is: see AllocationChanges.
type AllocationChange struct {
	Allocation *resourceapi.AllocationResult
	Added      bool
}

// maxAllocJournal bounds the changes kept for AllocationChanges; a reader
// further behind reads every allocation again.
const maxAllocJournal = 1 << 14

// allocIndex is the manager's index of the allocations Allocations
// returns (each pointer once, with the number of claims and in-flight
// allocations holding it) and the journal of its changes: journal[i] is
// change number journalStart+i+1.
type allocIndex struct {
	refs         map[*resourceapi.AllocationResult]int
	journal      []AllocationChange
	journalStart int64
}

// seq is the number of the last change.
func (x *allocIndex) seq() int64 { return x.journalStart + int64(len(x.journal)) }

// moveLocked records that a holder moved from allocation before to after
// (nil: none).
func (m *DRAManager) moveAllocLocked(before, after *resourceapi.AllocationResult) {
	if before == after {
		return
	}
	m.refAllocLocked(before, -1)
	m.refAllocLocked(after, +1)
}

func (m *DRAManager) refAllocLocked(a *resourceapi.AllocationResult, d int) {
	if a == nil {
		return
	}
	x := &m.allocs
	if x.refs == nil {
		x.refs = map[*resourceapi.AllocationResult]int{}
	}
	n := x.refs[a] + d
	if n <= 0 {
		delete(x.refs, a)
	} else {
		x.refs[a] = n
	}
	if (d > 0 && n == 1) || (d < 0 && n == 0) {
		x.journal = append(x.journal, AllocationChange{Allocation: a, Added: d > 0})
		if len(x.journal) > maxAllocJournal {
			drop := len(x.journal) / 2
			x.journalStart += int64(drop)
			x.journal = append([]AllocationChange(nil), x.journal[drop:]...)
		}
	}
}

// allocationOf is the allocation a claim holds, nil for none.
func allocationOf(c *resourceapi.ResourceClaim) *resourceapi.AllocationResult {
	if c == nil {
		return nil
	}
	return c.Status.Allocation
}

// AllocationSet returns the allocations Allocations returns, each once,
// with the change number they are as of (for AllocationChanges).
func (m *DRAManager) AllocationSet() ([]*resourceapi.AllocationResult, int64) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*resourceapi.AllocationResult, 0, len(m.allocs.refs))
	for a := range m.allocs.refs {
		out = append(out, a)
	}
	return out, m.allocs.seq()
}

// AllocationChanges returns, in order, the allocations that were added to
// and removed from AllocationSet after change number since (one that
// AllocationSet or AllocationChanges returned), and the current change
// number; ok is false when those changes are no longer kept (read
// AllocationSet again). A reader that applies them in order holds the
// same set as AllocationSet, without reading every claim.
func (m *DRAManager) AllocationChanges(since int64) (changes []AllocationChange, seq int64, ok bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	x := &m.allocs
	seq = x.seq()
	if since < x.journalStart || since > seq {
		return nil, seq, false
	}
	i := int(since - x.journalStart)
	return append([]AllocationChange(nil), x.journal[i:]...), seq, true
}
