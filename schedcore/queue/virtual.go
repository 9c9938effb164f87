package queue

import (
	"time"

	"github.com/go-logr/logr"
)

// Virtual time. Run's two flushes are goroutines on tickers: the backoff
// flush every second from the first whole second after Run (aligned as
// waitUntilAlignedWithOrderingWindow does), and the unschedulable pool's
// leftover flush at Run and every 30 seconds after. A driver on a virtual
// clock that jumps from event to event (replay) cannot wait on tickers;
// instead it asks NextFlush when the next flush would move a pod, jumps the
// clock there (or to an earlier event of its own) and calls Flush. The
// pods then move at the instants Run would have moved them.

// NextFlush returns the first instant after the clock's now at which a
// flush of Run started at origin moves a pod: the end of a pod's backoff
// (taken on the one-second flush), or a pod in the unschedulable pool
// (gated pods included) staying there longer than the maximum (taken on
// the 30-second flush). ok is false when no flush would move anything,
// whatever the time: only an event can then change the queue.
func (p *PriorityQueue) NextFlush(origin time.Time) (next time.Time, ok bool) {
	p.lock.RLock()
	defer p.lock.RUnlock()
	now := p.clock.Now()
	consider := func(t time.Time) {
		if !ok || t.Before(next) {
			next, ok = t, true
		}
	}
	if t, found := p.nextBackoffFlush(origin, now); found {
		consider(t)
	}
	period := unschedulableFlushInterval
	for _, q := range p.unschedulable.list() {
		last := q.Timestamp
		if q.FlushTimestamp.After(last) {
			last = q.FlushTimestamp
		}
		// The first tick strictly more than the maximum after last, and
		// after now.
		due := last.Add(p.podMaxInUnschedulablePodsDuration)
		if now.After(due) {
			due = now
		}
		consider(tickAfter(origin, period, due))
	}
	return next, ok
}

// nextBackoffFlush is the first tick of the one-second flush after now
// that releases the head of a backoff heap. Caller holds p.lock.
func (p *PriorityQueue) nextBackoffFlush(origin, now time.Time) (time.Time, bool) {
	bq := p.backoffQ
	// backoffTime caches the expiry in the pod: a write.
	bq.lock.Lock()
	defer bq.lock.Unlock()
	base := bq.alignToWindow(origin.Add(backoffQOrderingWindowDuration))
	var next time.Time
	found := false
	for _, h := range []*podHeap{bq.podBackoffQ, bq.podErrorBackoffQ} {
		q, ok := h.Peek()
		if !ok {
			continue
		}
		// Released on the first tick T with backoffTime < align(T): ticks
		// are whole seconds when aligning, so T > backoffTime suffices.
		end := bq.backoffTime(q)
		if end.Before(now) {
			end = now
		}
		var t time.Time
		if end.Before(base) {
			t = base
		} else {
			t = tickAfter(base, backoffQOrderingWindowDuration, end)
		}
		if !t.After(now) {
			t = tickAfter(base, backoffQOrderingWindowDuration, now)
		}
		if !found || t.Before(next) {
			next, found = t, true
		}
	}
	return next, found
}

// tickAfter returns the first instant origin + k*period (k >= 0) strictly
// after t.
func tickAfter(origin time.Time, period time.Duration, t time.Time) time.Time {
	if t.Before(origin) {
		return origin
	}
	k := t.Sub(origin)/period + 1
	return origin.Add(k * period)
}

// Flush runs, at the clock's now, what Run started at origin would run at
// that instant: the backoff flush when now is on its one-second tick, and
// the leftover flush of the unschedulable pool when now is on its
// 30-second tick. TryPop flushes finished backoffs at any instant (the
// backoffs are aligned to whole seconds, so between two ticks that moves
// only pods the last tick would have moved), so only the leftover flush
// depends on being called at the tick.
func (p *PriorityQueue) Flush(logger logr.Logger, origin time.Time) {
	now := p.clock.Now()
	base := p.backoffQ.alignToWindow(origin.Add(backoffQOrderingWindowDuration))
	if !now.Before(base) && now.Sub(base)%backoffQOrderingWindowDuration == 0 {
		p.flushBackoffQCompleted(logger)
	}
	if !now.Before(origin) && now.Sub(origin)%unschedulableFlushInterval == 0 {
		p.flushUnschedulablePodsLeftover(logger)
	}
}
