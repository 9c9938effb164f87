package engine

import "math/rand"

// What a driver needs to know that a failed scheduling attempt would fail
// again the same way: whether anything a cycle reads has changed since
// (Changes), and which random draws the attempt made (TakeOffsets,
// Redraw), so that repeating it without running it leaves the seeded
// sequences where running it would have (the replay's retries,
// internal/replay/repeat.go).

// Changes counts the changes made to the cluster so far: every put and
// delete of the pods' store (arrivals, bindings, evictions, departures,
// nominations and other status writes), every node, object, claim and
// PodGroup change. It moves whenever the cluster a scheduling cycle reads
// does, the cache's pods waiting at Permit aside (they are assumed, not
// stored: Scheduler.NumParked tells them). Only differences matter.
func (c *Offline) Changes() uint64 { return c.store.changes + c.changes }

// ObjectChanges counts the changes of Changes that are not the pods': the
// nodes, objects, claims and PodGroups. A failed attempt that read no pod
// but its own (runtime.FailedAttempt.PodBlind) holds while it is the same.
func (c *Offline) ObjectChanges() uint64 { return c.changes }

// seededOffsets is the preemption scan's start with a seed, as
// buildProfiles would make it (one source for every profile), recording
// each draw's bound for TakeOffsets once RecordOffsets was called.
func (c *Offline) seededOffsets(seed int64) func(n int32) int32 {
	r := rand.New(rand.NewSource(seed))
	c.redraw = func(n int32) { r.Int31n(n) }
	return func(n int32) int32 {
		if c.recordOffsets {
			c.offsets = append(c.offsets, n)
		}
		return r.Int31n(n)
	}
}

// RecordOffsets starts recording the preemption scan offsets drawn, for
// TakeOffsets.
func (c *Offline) RecordOffsets() { c.recordOffsets = true }

// TakeOffsets returns the bounds of the preemption scan offsets drawn
// since the last call (none without a seed: the scan then starts at the
// first node, and nothing is drawn), and forgets them.
func (c *Offline) TakeOffsets() []int32 {
	if len(c.offsets) == 0 {
		return nil
	}
	out := append([]int32(nil), c.offsets...)
	c.offsets = c.offsets[:0]
	return out
}

// Redraw makes again the draws whose bounds TakeOffsets returned, in their
// order, and records none: the source is then where an attempt making
// them would leave it.
func (c *Offline) Redraw(bounds []int32) {
	for _, n := range bounds {
		c.redraw(n)
	}
}
