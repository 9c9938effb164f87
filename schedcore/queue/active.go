package queue

import (
	"container/list"
	"fmt"
	"slices"
	"sync"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// clusterEvent is an event with its objects, kept for in-flight pods.
type clusterEvent struct {
	event          schedcore.ClusterEvent
	oldObj, newObj any
}

// activeQueue is activeQ plus the in-flight bookkeeping, under its own lock
// so that Pop never waits for the queue's main lock. Lock order:
// PriorityQueue.lock > activeQueue.lock > backoffQueue.lock > nominator.lock.
type activeQueue struct {
	lock sync.RWMutex
	// cond is signalled when pods enter activeQ (or backoffQ, when Pop may
	// take from it) and on Close.
	cond  sync.Cond
	queue *podHeap

	// inFlightPods maps the pods popped and not yet Done to their entry in
	// inFlightEvents; the entry's value is the pod as it was popped.
	inFlightPods map[types.UID]*list.Element
	// inFlightEvents interleaves in-flight pods (*v1.Pod) and the events
	// received since (*clusterEvent), in arrival order: a pod's events are
	// the entries after it. Events before the oldest in-flight pod are
	// dropped on Done.
	inFlightEvents *list.List

	schedCycle int64
	closed     bool
	// lastPopped is the key of the entity popped last (kube's
	// lastPoppedEntityKey): a member arriving while its group is the last
	// popped waits in pendingPodGroupPods. Cleared when an attempt is
	// handed back (AddUnschedulableIfNotPresent of a pod,
	// AddAttemptedPodGroupIfNeeded).
	lastPopped string

	// backoff is popped when activeQ is empty (SchedulerPopFromBackoffQ);
	// nil when the gate is off.
	backoff *backoffQueue
	metrics Metrics
}

func newActiveQueue(less func(a, b *schedcore.QueuedPodInfo) bool, m Metrics, backoff *backoffQueue) *activeQueue {
	aq := &activeQueue{
		queue:          newPodHeap(less, func(d int) { m.PendingPods(QueueActive, d) }),
		inFlightPods:   map[types.UID]*list.Element{},
		inFlightEvents: list.New(),
		backoff:        backoff,
		metrics:        m,
	}
	aq.cond.L = &aq.lock
	return aq
}

// pop blocks until a pod can be popped or the queue closes (nil, nil).
func (aq *activeQueue) pop(logger logr.Logger) (*schedcore.QueuedPodInfo, error) {
	aq.lock.Lock()
	defer aq.lock.Unlock()
	for {
		for aq.queue.Len() == 0 && (aq.backoff == nil || aq.backoff.lenBackoff() == 0) {
			if aq.closed {
				logger.V(2).Info("Scheduling queue is closed")
				return nil, nil
			}
			aq.cond.Wait()
		}
		if q, ok := aq.unlockedTryPop(logger); ok {
			return q, nil
		}
	}
}

// tryPop pops without blocking; like pop, it still pops after close while
// pods remain.
func (aq *activeQueue) tryPop(logger logr.Logger) (*schedcore.QueuedPodInfo, bool) {
	aq.lock.Lock()
	defer aq.lock.Unlock()
	for aq.queue.Len() != 0 || (aq.backoff != nil && aq.backoff.lenBackoff() != 0) {
		if q, ok := aq.unlockedTryPop(logger); ok {
			return q, true
		}
	}
	return nil, false
}

// unlockedTryPop takes activeQ's head, or backoffQ's when activeQ is empty,
// and moves it in flight. ok is false when nothing was popped or the pod
// was discarded as a duplicate.
func (aq *activeQueue) unlockedTryPop(logger logr.Logger) (*schedcore.QueuedPodInfo, bool) {
	q, ok := aq.queue.Pop()
	if !ok {
		if aq.backoff == nil {
			return nil, false
		}
		if q, ok = aq.backoff.popBackoff(); !ok {
			return nil, false
		}
		aq.metrics.IncomingPods(QueueActive, EventPopFromBackoffQ, entitySize(q))
	}
	if err := aq.unlockedMoveToInFlight(logger, q); err != nil {
		// Report and carry on with the next pod, as kube does.
		logger.Error(err, "Discarding the popped pod", "pod", schedcore.PodName(q.Pod))
		return nil, false
	}
	// Only a group's key is ever looked up; a pod clears it (no pod key
	// equals a group key), which spares single pods building a key.
	aq.lastPopped = ""
	if q.Group != nil {
		aq.lastPopped = entityKey(q)
	}
	return q, true
}

// unlockedMoveToInFlight counts the attempt (a group's and each member's)
// and tracks the pod, or each member of a group, in flight. A member
// already in flight is dropped from its group with an error log; a pod
// already in flight, or a group left empty, is an error (kube's
// unlockedMoveEntityToInFlight).
func (aq *activeQueue) unlockedMoveToInFlight(logger logr.Logger, q *schedcore.QueuedPodInfo) error {
	q.Attempts++
	g := q.Group
	if g == nil {
		if _, ok := aq.inFlightPods[q.Pod.UID]; ok {
			return fmt.Errorf("the same pod is tracked in multiple places in the scheduler: %s", schedcore.PodName(q.Pod))
		}
		aq.track(q)
	} else {
		for _, m := range slices.Clone(g.Members) {
			m.Attempts++
			if _, ok := aq.inFlightPods[m.Pod.UID]; ok {
				g.RemovePod(m.Pod)
				logger.Error(nil, "Discarding the popped pod group member. It's tracked in multiple places in the scheduler", "pod", schedcore.PodName(m.Pod), "podGroup", schedcore.PodName(q.Pod))
				continue
			}
			aq.track(m)
		}
		if len(g.Members) == 0 {
			return fmt.Errorf("all pods from the pod group are tracked in multiple places in the scheduler: %s", schedcore.PodName(q.Pod))
		}
	}
	aq.schedCycle++
	if g == nil {
		aq.dropReasons(q)
	} else {
		for _, m := range g.Members {
			aq.dropReasons(m)
		}
	}
	return nil
}

// dropReasons takes a popped pod's rejectors out of the unschedulable
// reasons metric.
func (aq *activeQueue) dropReasons(q *schedcore.QueuedPodInfo) {
	for pl := range q.UnschedulablePlugins {
		aq.metrics.UnschedulableReason(pl, q.Pod.Spec.SchedulerName, -1)
	}
	for pl := range q.PendingPlugins {
		if !q.UnschedulablePlugins.Has(pl) {
			aq.metrics.UnschedulableReason(pl, q.Pod.Spec.SchedulerName, -1)
		}
	}
}

func (aq *activeQueue) track(q *schedcore.QueuedPodInfo) {
	aq.metrics.InFlightEvents(EventPodPopped, 1)
	aq.inFlightPods[q.Pod.UID] = aq.inFlightEvents.PushBack(q.Pod)
}

// appendPods appends the pod of each entity, or its members.
func appendPods(out []*v1.Pod, qs []*schedcore.QueuedPodInfo) []*v1.Pod {
	for _, q := range qs {
		if q.Group != nil {
			out = append(out, q.Group.UnscheduledPods()...)
			continue
		}
		out = append(out, q.Pod)
	}
	return out
}

// isLastPopped reports whether the entity with the key was popped last.
func (aq *activeQueue) isLastPopped(key string) bool {
	aq.lock.RLock()
	defer aq.lock.RUnlock()
	return aq.lastPopped == key
}

func (aq *activeQueue) clearPopped() {
	aq.lock.Lock()
	defer aq.lock.Unlock()
	aq.lastPopped = ""
}

func (aq *activeQueue) add(logger logr.Logger, q *schedcore.QueuedPodInfo, event string) {
	aq.lock.Lock()
	defer aq.lock.Unlock()
	aq.queue.AddOrUpdate(q)
	aq.metrics.IncomingPods(QueueActive, event, entitySize(q))
	if v := logger.V(5); v.Enabled() {
		v.Info("Pod moved to an internal scheduling queue", "pod", schedcore.PodName(q.Pod), "event", event, "queue", "Active")
	}
}

func (aq *activeQueue) delete(p *v1.Pod) *schedcore.QueuedPodInfo { return aq.deleteKey(podKey(p)) }

func (aq *activeQueue) deleteKey(k string) *schedcore.QueuedPodInfo {
	aq.lock.Lock()
	defer aq.lock.Unlock()
	return aq.queue.DeleteKey(k)
}

func (aq *activeQueue) has(p *v1.Pod) bool { return aq.hasKey(podKey(p)) }

func (aq *activeQueue) hasKey(k string) bool {
	aq.lock.RLock()
	defer aq.lock.RUnlock()
	return aq.queue.HasKey(k)
}

func (aq *activeQueue) len() int {
	aq.lock.RLock()
	defer aq.lock.RUnlock()
	return aq.queue.Len()
}

func (aq *activeQueue) list() []*v1.Pod {
	aq.lock.RLock()
	defer aq.lock.RUnlock()
	return appendPods(make([]*v1.Pod, 0, aq.queue.Len()), aq.queue.List())
}

// unlockedAddEventsIfPodInFlight records events for newPod if it is in
// flight; the caller holds aq.lock.
func (aq *activeQueue) unlockedAddEventsIfPodInFlight(oldPod, newPod *v1.Pod, events []schedcore.ClusterEvent) bool {
	if _, ok := aq.inFlightPods[newPod.UID]; !ok {
		return false
	}
	for _, e := range events {
		aq.metrics.InFlightEvents(e.Label(), 1)
		aq.inFlightEvents.PushBack(&clusterEvent{event: e, oldObj: oldPod, newObj: newPod})
	}
	return true
}

func (aq *activeQueue) addEventsIfPodInFlight(oldPod, newPod *v1.Pod, events []schedcore.ClusterEvent) bool {
	aq.lock.Lock()
	defer aq.lock.Unlock()
	return aq.unlockedAddEventsIfPodInFlight(oldPod, newPod, events)
}

// addEventIfAnyInFlight records an event if any pod is in flight.
func (aq *activeQueue) addEventIfAnyInFlight(oldObj, newObj any, event schedcore.ClusterEvent) bool {
	aq.lock.Lock()
	defer aq.lock.Unlock()
	if len(aq.inFlightPods) == 0 {
		return false
	}
	aq.metrics.InFlightEvents(event.Label(), 1)
	aq.inFlightEvents.PushBack(&clusterEvent{event: event, oldObj: oldObj, newObj: newObj})
	return true
}

// clusterEventsForPod returns the events received since the pod was popped.
func (aq *activeQueue) clusterEventsForPod(uid types.UID) ([]*clusterEvent, error) {
	aq.lock.RLock()
	defer aq.lock.RUnlock()
	el, ok := aq.inFlightPods[uid]
	if !ok {
		return nil, fmt.Errorf("in flight pod isn't found in the scheduling queue. If you see this error log, it's likely a bug in the scheduler")
	}
	var out []*clusterEvent
	for e := el.Next(); e != nil; e = e.Next() {
		if ev, ok := e.Value.(*clusterEvent); ok {
			out = append(out, ev)
		}
	}
	return out, nil
}

func (aq *activeQueue) listInFlightPods() []*v1.Pod {
	aq.lock.RLock()
	defer aq.lock.RUnlock()
	out := make([]*v1.Pod, 0, len(aq.inFlightPods))
	for e := aq.inFlightEvents.Front(); e != nil; e = e.Next() {
		if p, ok := e.Value.(*v1.Pod); ok {
			out = append(out, p)
		}
	}
	return out
}

func (aq *activeQueue) inFlightEventsLen() int {
	aq.lock.RLock()
	defer aq.lock.RUnlock()
	return aq.inFlightEvents.Len() - len(aq.inFlightPods)
}

func (aq *activeQueue) schedulingCycle() int64 {
	aq.lock.RLock()
	defer aq.lock.RUnlock()
	return aq.schedCycle
}

func (aq *activeQueue) done(uid types.UID) {
	aq.lock.Lock()
	defer aq.lock.Unlock()
	aq.unlockedDone(uid)
}

// unlockedDone forgets an in-flight pod and prunes the events no remaining
// in-flight pod needs (those before the oldest one).
func (aq *activeQueue) unlockedDone(uid types.UID) {
	el, ok := aq.inFlightPods[uid]
	if !ok {
		return
	}
	delete(aq.inFlightPods, uid)
	aq.inFlightEvents.Remove(el)
	for {
		e := aq.inFlightEvents.Front()
		if e == nil {
			break
		}
		ev, ok := e.Value.(*clusterEvent)
		if !ok {
			break
		}
		aq.inFlightEvents.Remove(e)
		aq.metrics.InFlightEvents(ev.event.Label(), -1)
	}
	aq.metrics.InFlightEvents(EventPodPopped, -1)
}

// close marks the queue closed and forgets in-flight pods (a later Done is
// a no-op).
func (aq *activeQueue) close() {
	aq.lock.Lock()
	defer aq.lock.Unlock()
	uids := make([]types.UID, 0, len(aq.inFlightPods))
	for uid := range aq.inFlightPods {
		uids = append(uids, uid)
	}
	for _, uid := range uids {
		aq.unlockedDone(uid)
	}
	aq.closed = true
}

// broadcast wakes Pop callers. It takes the lock so that a wake-up cannot
// fall between Pop's check and its Wait: pods enter backoffQ without
// activeQ's lock, and Pop may take them from there.
func (aq *activeQueue) broadcast() {
	aq.lock.Lock()
	defer aq.lock.Unlock()
	aq.cond.Broadcast()
}
