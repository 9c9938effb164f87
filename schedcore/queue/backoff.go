package queue

import (
	"math"
	"sync"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// backoffQueue holds pods waiting for their backoff to end, in two heaps
// ordered by backoff expiry as kube's: one for pods rejected by plugins and
// one for pods that failed with an error (no rejector plugins), which Pop
// never takes early.
type backoffQueue struct {
	lock  sync.RWMutex
	clock clock.WithTicker

	podBackoffQ      *podHeap
	podErrorBackoffQ *podHeap

	initial, max    time.Duration
	popFromBackoffQ bool
	activeLess      func(a, b *schedcore.QueuedPodInfo) bool
}

func newBackoffQueue(c clock.WithTicker, initial, max time.Duration, activeLess func(a, b *schedcore.QueuedPodInfo) bool, popFromBackoffQ bool, m Metrics) *backoffQueue {
	bq := &backoffQueue{clock: c, initial: initial, max: max, popFromBackoffQ: popFromBackoffQ, activeLess: activeLess}
	onLen := func(d int) { m.PendingPods(QueueBackoff, d) }
	less := bq.lessBackoffCompleted
	if popFromBackoffQ {
		less = bq.lessBackoffCompletedWithPriority
	}
	bq.podBackoffQ = newPodHeap(less, onLen)
	bq.podErrorBackoffQ = newPodHeap(bq.lessBackoffCompleted, onLen)
	return bq
}

// alignToWindow truncates t to the ordering window when pods may be popped
// from backoffQ; otherwise t is kept.
func (bq *backoffQueue) alignToWindow(t time.Time) time.Time {
	if !bq.popFromBackoffQ {
		return t
	}
	return t.Truncate(backoffQOrderingWindowDuration)
}

// lessBackoffCompletedWithPriority orders by backoff expiry, then as
// activeQ does, so that popping backoffQ early takes the pod activeQ would.
func (bq *backoffQueue) lessBackoffCompletedWithPriority(a, b *schedcore.QueuedPodInfo) bool {
	ba, bb := bq.backoffTime(a), bq.backoffTime(b)
	if !ba.Equal(bb) {
		return ba.Before(bb)
	}
	return bq.activeLess(a, b)
}

func (bq *backoffQueue) lessBackoffCompleted(a, b *schedcore.QueuedPodInfo) bool {
	return bq.backoffTime(a).Before(bq.backoffTime(b))
}

// isPodBackingoff reports whether the pod's backoff has not ended yet; a
// backoff ending in the current window still counts as backing off.
func (bq *backoffQueue) isPodBackingoff(q *schedcore.QueuedPodInfo) bool {
	return !bq.backoffTime(q).Before(bq.alignToWindow(bq.clock.Now()))
}

// backoffTime returns when the pod's backoff ends, caching it in the pod:
// Timestamp + backoffDuration, aligned to the window; zero when backoff is
// disabled (max 0) or the pod has no failures.
func (bq *backoffQueue) backoffTime(q *schedcore.QueuedPodInfo) time.Time {
	if bq.max == 0 {
		return time.Time{}
	}
	count := q.UnschedulableCount
	if q.ConsecutiveErrorsCount > 0 {
		count = q.ConsecutiveErrorsCount
	}
	if count == 0 {
		return time.Time{}
	}
	if q.BackoffExpiration.IsZero() {
		q.BackoffExpiration = bq.alignToWindow(q.Timestamp.Add(bq.backoffDuration(count, entitySize(q))))
	}
	return q.BackoffExpiration
}

// entitySize is 1 for a pod, the number of queued members for a group.
func entitySize(q *schedcore.QueuedPodInfo) int {
	if q.Group != nil {
		return q.Group.Size()
	}
	return 1
}

// backoffDuration is initial << (count-1), capped at max; for an entity
// of more than one pod the cap is max × √size (kube's
// calculateBackoffDuration: time.Duration(float64(max) * math.Sqrt(size))).
func (bq *backoffQueue) backoffDuration(count, size int) time.Duration {
	if count <= 0 {
		return 0
	}
	maxBackoff := bq.max
	if size > 1 {
		maxBackoff = time.Duration(float64(maxBackoff) * math.Sqrt(float64(size)))
	}
	shift := uint(count - 1)
	if bq.initial > maxBackoff>>shift {
		return maxBackoff
	}
	return bq.initial << shift
}

// popAllBackoffCompleted pops every pod whose backoff ended, from both heaps.
func (bq *backoffQueue) popAllBackoffCompleted() []*schedcore.QueuedPodInfo {
	bq.lock.Lock()
	defer bq.lock.Unlock()
	return append(bq.popCompleted(bq.podBackoffQ), bq.popCompleted(bq.podErrorBackoffQ)...)
}

func (bq *backoffQueue) popCompleted(h *podHeap) []*schedcore.QueuedPodInfo {
	var out []*schedcore.QueuedPodInfo
	for {
		q, ok := h.Peek()
		if !ok || bq.isPodBackingoff(q) {
			return out
		}
		h.Pop()
		out = append(out, q)
	}
}

// add puts the pod in the error heap if no plugin rejected it, else in the
// main heap, making sure it is not in the other.
func (bq *backoffQueue) add(logger logr.Logger, q *schedcore.QueuedPodInfo, event string, m Metrics) {
	bq.lock.Lock()
	defer bq.lock.Unlock()
	to, other := bq.podBackoffQ, bq.podErrorBackoffQ
	if q.UnschedulablePlugins.Len() == 0 && q.PendingPlugins.Len() == 0 {
		to, other = other, to
	}
	to.AddOrUpdate(q)
	if other.DeleteKey(entityKey(q)) != nil {
		logger.Error(nil, "BackoffQueue add() was called with a pod that was already in the other backoff heap", "pod", schedcore.PodName(q.Pod))
		return
	}
	m.IncomingPods(QueueBackoff, event, entitySize(q))
	if v := logger.V(5); v.Enabled() {
		v.Info("Pod moved to an internal scheduling queue", "pod", schedcore.PodName(q.Pod), "event", event, "queue", "Backoff")
	}
}

// update replaces the pod of the entity with the key (a pod, or a member
// of a group) and returns the pod's entry; nil if it is not queued here.
func (bq *backoffQueue) update(key string, newPod *v1.Pod) *schedcore.QueuedPodInfo {
	bq.lock.Lock()
	defer bq.lock.Unlock()
	for _, h := range []*podHeap{bq.podBackoffQ, bq.podErrorBackoffQ} {
		if e, ok := h.GetKey(key); ok {
			q := updateInEntity(e, newPod)
			if q == nil {
				return nil
			}
			h.AddOrUpdate(e)
			return q
		}
	}
	return nil
}

func (bq *backoffQueue) delete(p *v1.Pod) *schedcore.QueuedPodInfo { return bq.deleteKey(podKey(p)) }

func (bq *backoffQueue) deleteKey(k string) *schedcore.QueuedPodInfo {
	bq.lock.Lock()
	defer bq.lock.Unlock()
	if q := bq.podBackoffQ.DeleteKey(k); q != nil {
		return q
	}
	return bq.podErrorBackoffQ.DeleteKey(k)
}

// popBackoff pops the main heap's head (never the error heap's).
func (bq *backoffQueue) popBackoff() (*schedcore.QueuedPodInfo, bool) {
	bq.lock.Lock()
	defer bq.lock.Unlock()
	return bq.podBackoffQ.Pop()
}

func (bq *backoffQueue) get(p *v1.Pod) (*schedcore.QueuedPodInfo, bool) { return bq.getKey(podKey(p)) }

func (bq *backoffQueue) getKey(k string) (*schedcore.QueuedPodInfo, bool) {
	bq.lock.RLock()
	defer bq.lock.RUnlock()
	if q, ok := bq.podBackoffQ.GetKey(k); ok {
		return q, true
	}
	return bq.podErrorBackoffQ.GetKey(k)
}

func (bq *backoffQueue) has(p *v1.Pod) bool { return bq.hasKey(podKey(p)) }

func (bq *backoffQueue) hasKey(k string) bool {
	bq.lock.RLock()
	defer bq.lock.RUnlock()
	return bq.podBackoffQ.HasKey(k) || bq.podErrorBackoffQ.HasKey(k)
}

func (bq *backoffQueue) list() []*v1.Pod {
	bq.lock.RLock()
	defer bq.lock.RUnlock()
	out := make([]*v1.Pod, 0, bq.podBackoffQ.Len()+bq.podErrorBackoffQ.Len())
	out = appendPods(out, bq.podBackoffQ.List())
	return appendPods(out, bq.podErrorBackoffQ.List())
}

func (bq *backoffQueue) len() int {
	bq.lock.RLock()
	defer bq.lock.RUnlock()
	return bq.podBackoffQ.Len() + bq.podErrorBackoffQ.Len()
}

func (bq *backoffQueue) lenBackoff() int {
	bq.lock.RLock()
	defer bq.lock.RUnlock()
	return bq.podBackoffQ.Len()
}

// waitUntilAlignedWithOrderingWindow waits for the next whole window, then
// runs f every window until stop closes, so that whole windows are flushed
// at once.
func (bq *backoffQueue) waitUntilAlignedWithOrderingWindow(f func(), stop <-chan struct{}) {
	now := bq.clock.Now()
	timer := bq.clock.NewTimer(bq.alignToWindow(now.Add(backoffQOrderingWindowDuration)).Sub(now))
	select {
	case <-stop:
		timer.Stop()
		return
	case <-timer.C():
	}
	ticker := bq.clock.NewTicker(backoffQOrderingWindowDuration)
	defer ticker.Stop()
	for {
		select {
		case <-stop:
			return
		default:
		}
		f()
		select {
		case <-stop:
			return
		case <-ticker.C():
		}
	}
}
