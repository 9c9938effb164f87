package queue

import (
	"container/list"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// unschedulablePods is the pool of pods that failed an attempt and wait for
// an event, and of gated pods. It keeps arrival order so that moving pods
// out is deterministic (kube iterates a map; any order is kube's), and the
// requeue index's lists (requeue_index.go), which keep that order too.
// Protected by PriorityQueue.lock.
//
// The index files a pod under its rejector plugins when it is stored: the
// queue owns a stored QueuedPodInfo, and whatever changes its
// UnschedulablePlugins, PendingPlugins or schedulerName (PreEnqueue gating
// it, an update replacing its pod) stores it again with addOrUpdate, which
// refiles it, or takes it out of the pool.
type unschedulablePods struct {
	order   *list.List // of *unschedulableEntry
	byKey   map[string]*list.Element
	gated   int
	metrics Metrics

	ix    *requeueIndex
	lists []memberList
	seq   uint64
	ids   []int // scratch for listsOf
}

type unschedulableEntry struct {
	q *schedcore.QueuedPodInfo
	// gated is whether the pod was gated when stored: it says which gauge
	// (gated or unschedulable) counts it.
	gated bool
	// seq is the entry's place in arrival order (from 1).
	seq uint64
	// members are its links in the index's lists, by ascending list.
	members []member
}

func newUnschedulablePods(m Metrics, ix *requeueIndex) *unschedulablePods {
	return &unschedulablePods{
		order: list.New(), byKey: map[string]*list.Element{}, metrics: m,
		ix: ix, lists: make([]memberList, ix.nLists+1),
	}
}

// addOrUpdate stores the pod, keeping its place if it is already stored.
func (u *unschedulablePods) addOrUpdate(q *schedcore.QueuedPodInfo, event string) {
	k := entityKey(q)
	if e, ok := u.byKey[k]; ok {
		ent := e.Value.(*unschedulableEntry)
		if ent.gated != q.Gated() {
			u.count(ent.gated, -1)
			u.count(q.Gated(), 1)
		}
		ent.q, ent.gated = q, q.Gated()
		// Its rejectors may have changed (a PreEnqueue plugin gated it).
		u.file(ent)
		return
	}
	u.seq++
	ent := &unschedulableEntry{q: q, gated: q.Gated(), seq: u.seq}
	u.byKey[k] = u.order.PushBack(ent)
	u.file(ent)
	u.count(q.Gated(), 1)
	u.metrics.IncomingPods(QueueUnschedulable, event, entitySize(q))
}

// file puts the entry into the index lists its pod belongs to now, moving
// it only if they changed.
func (u *unschedulablePods) file(ent *unschedulableEntry) {
	u.ids = u.ix.listsOf(ent.q, u.ids[:0])
	if len(u.ids) == len(ent.members) {
		same := true
		for i := range ent.members {
			if ent.members[i].list != u.ids[i] {
				same = false
				break
			}
		}
		if same {
			return
		}
	}
	u.unfile(ent)
	if cap(ent.members) < len(u.ids) {
		ent.members = make([]member, len(u.ids))
	}
	ent.members = ent.members[:len(u.ids)]
	for i, id := range u.ids {
		m := &ent.members[i]
		*m = member{e: ent, list: id}
		u.lists[id].link(m)
	}
}

func (u *unschedulablePods) unfile(ent *unschedulableEntry) {
	for i := range ent.members {
		u.lists[ent.members[i].list].unlink(&ent.members[i])
	}
	ent.members = ent.members[:0]
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
func (u *unschedulablePods) delete(p *v1.Pod) { u.deleteKey(podKey(p)) }

// deleteKey removes the entity with the key if stored.
func (u *unschedulablePods) deleteKey(k string) {
	e, ok := u.byKey[k]
	if !ok {
		return
	}
	u.order.Remove(e)
	delete(u.byKey, k)
	ent := e.Value.(*unschedulableEntry)
	u.unfile(ent)
	u.count(ent.gated, -1)
}

func (u *unschedulablePods) get(p *v1.Pod) *schedcore.QueuedPodInfo { return u.getKey(podKey(p)) }

// getKey returns the entity stored under the key, or nil.
func (u *unschedulablePods) getKey(k string) *schedcore.QueuedPodInfo {
	if e, ok := u.byKey[k]; ok {
		return e.Value.(*unschedulableEntry).q
	}
	return nil
}

// list returns the pods in arrival order.
func (u *unschedulablePods) list() []*schedcore.QueuedPodInfo {
	return u.appendTo(make([]*schedcore.QueuedPodInfo, 0, u.order.Len()))
}

// appendTo appends the pods to buf in arrival order.
func (u *unschedulablePods) appendTo(buf []*schedcore.QueuedPodInfo) []*schedcore.QueuedPodInfo {
	buf = slices.Grow(buf, u.order.Len())
	for e := u.order.Front(); e != nil; e = e.Next() {
		buf = append(buf, e.Value.(*unschedulableEntry).q)
	}
	return buf
}

func (u *unschedulablePods) len() int { return u.order.Len() }
