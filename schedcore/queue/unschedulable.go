package queue

import (
	"container/list"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// unschedulablePods is the pool of pods that failed an attempt and wait for
// an event, and of gated pods. It keeps arrival order so that moving pods
// out is deterministic (kube iterates a map; any order is kube's).
// Protected by PriorityQueue.lock.
type unschedulablePods struct {
	order   *list.List // of *unschedulableEntry
	byKey   map[string]*list.Element
	gated   int
	metrics Metrics
}

type unschedulableEntry struct {
	q *schedcore.QueuedPodInfo
	// gated is whether the pod was gated when stored: it says which gauge
	// (gated or unschedulable) counts it.
	gated bool
}

func newUnschedulablePods(m Metrics) *unschedulablePods {
	return &unschedulablePods{order: list.New(), byKey: map[string]*list.Element{}, metrics: m}
}

// addOrUpdate stores the pod, keeping its place if it is already stored.
func (u *unschedulablePods) addOrUpdate(q *schedcore.QueuedPodInfo, event string) {
	k := podKey(q.Pod)
	if e, ok := u.byKey[k]; ok {
		ent := e.Value.(*unschedulableEntry)
		if ent.gated != q.Gated() {
			u.count(ent.gated, -1)
			u.count(q.Gated(), 1)
		}
		ent.q, ent.gated = q, q.Gated()
		return
	}
	u.byKey[k] = u.order.PushBack(&unschedulableEntry{q: q, gated: q.Gated()})
	u.count(q.Gated(), 1)
	u.metrics.IncomingPods(QueueUnschedulable, event, 1)
}

func (u *unschedulablePods) count(gated bool, d int) {
	if gated {
		u.gated += d
		u.metrics.PendingPods(QueueGated, d)
		return
	}
	u.metrics.PendingPods(QueueUnschedulable, d)
}

// delete removes the pod if stored.
func (u *unschedulablePods) delete(p *v1.Pod) {
	k := podKey(p)
	e, ok := u.byKey[k]
	if !ok {
		return
	}
	u.order.Remove(e)
	delete(u.byKey, k)
	u.count(e.Value.(*unschedulableEntry).gated, -1)
}

func (u *unschedulablePods) get(p *v1.Pod) *schedcore.QueuedPodInfo {
	if e, ok := u.byKey[podKey(p)]; ok {
		return e.Value.(*unschedulableEntry).q
	}
	return nil
}

// list returns the pods in arrival order.
func (u *unschedulablePods) list() []*schedcore.QueuedPodInfo {
	out := make([]*schedcore.QueuedPodInfo, 0, u.order.Len())
	for e := u.order.Front(); e != nil; e = e.Next() {
		out = append(out, e.Value.(*unschedulableEntry).q)
	}
	return out
}

func (u *unschedulablePods) len() int { return u.order.Len() }
