package queue

import (
	"sort"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The requeue index. A cluster event can only move a pod of the
// unschedulable pool, or call one of its hints, if the pod has no rejector
// plugins, if its profile has no queueing hints, or if one of its rejectors
// registered a hint for an event covering the incoming one (see
// isPodWorthRequeuing); for every other pod kube's walk ends in QueueSkip
// without calling anything. The pool therefore keeps, per profile and
// plugin with hints in that profile, the pods that plugin rejected (a
// "hint list"), plus one list of the pods that any event moves, all in the
// pool's order; an event visits the union of the lists of the plugins
// registered for it, in the pool's order, and skips the rest. A bound pod
// (AssignedPod/Add) then visits the pods that inter-pod affinity or
// topology spread rejected, not those that only lacked resources.

// maxCachedPlans bounds the plans kept by event; events carrying custom
// labels could otherwise grow the cache without limit.
const maxCachedPlans = 1024

// eventPlan is what an incoming event needs from the hint maps, computed
// once per event: they never change after New.
type eventPlan struct {
	// interesting is isEventOfInterest's answer (wildcard events aside).
	interesting bool
	// matching lists, per profile index, the positions in its hint map of
	// the entries whose registered event covers the incoming one, in
	// registration order.
	matching [][]int
	// lists are the hint lists (ascending) whose pods may be requeued.
	lists []int
}

// requeueIndex numbers the profiles and their hint lists.
type requeueIndex struct {
	// names are the profiles in index order (sorted); byName inverts it.
	names  []string
	byName map[string]int
	maps   []hintMap
	// listOf gives, per profile index, the hint list of each plugin with
	// a hint in that profile.
	listOf []map[string]int
	// nLists counts the hint lists; the list of pods any event moves is
	// list nLists.
	nLists int
	plans  map[schedcore.ClusterEvent]*eventPlan
}

func newRequeueIndex(hints map[string]hintMap) *requeueIndex {
	ix := &requeueIndex{byName: map[string]int{}, plans: map[schedcore.ClusterEvent]*eventPlan{}}
	for name := range hints {
		ix.names = append(ix.names, name)
	}
	sort.Strings(ix.names)
	for i, name := range ix.names {
		ix.byName[name] = i
		m := hints[name]
		ix.maps = append(ix.maps, m)
		lists := map[string]int{}
		for _, h := range m {
			for _, fn := range h.fns {
				if _, ok := lists[fn.plugin]; !ok {
					lists[fn.plugin] = ix.nLists
					ix.nLists++
				}
			}
		}
		ix.listOf = append(ix.listOf, lists)
	}
	return ix
}

// anyEvent is the list of the pods every event may move.
func (ix *requeueIndex) anyEvent() int { return ix.nLists }

// plan returns the event's plan. Caller holds the queue's lock for
// writing (the cache fills lazily).
func (ix *requeueIndex) plan(e schedcore.ClusterEvent) *eventPlan {
	if pl, ok := ix.plans[e]; ok {
		return pl
	}
	pl := &eventPlan{matching: make([][]int, len(ix.maps))}
	for pi, m := range ix.maps {
		for i, h := range m {
			if !matchClusterEvents(h.event, e) {
				continue
			}
			pl.interesting = true
			pl.matching[pi] = append(pl.matching[pi], i)
			for _, fn := range h.fns {
				pl.lists = append(pl.lists, ix.listOf[pi][fn.plugin])
			}
		}
	}
	sort.Ints(pl.lists)
	pl.lists = compactInts(pl.lists)
	if len(ix.plans) < maxCachedPlans {
		ix.plans[e] = pl
	}
	return pl
}

func compactInts(s []int) []int {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// listsOf appends to buf the lists the pod belongs to, ascending: the
// any-event list if it has no rejector plugins or its profile has no
// hints, else the hint lists of its rejectors (none if no rejector has a
// hint: then only wildcard events move it).
//
// A pod group entity is in the any-event list: its members' rejectors
// decide (isEntityWorthRequeuing), and every event visits it.
func (ix *requeueIndex) listsOf(q *schedcore.QueuedPodInfo, buf []int) []int {
	pi, ok := ix.byName[q.Pod.Spec.SchedulerName]
	if !ok || q.Group != nil || q.UnschedulablePlugins.Len() == 0 && q.PendingPlugins.Len() == 0 {
		return append(buf, ix.anyEvent())
	}
	lists := ix.listOf[pi]
	for pl := range q.UnschedulablePlugins {
		if id, ok := lists[pl]; ok {
			buf = append(buf, id)
		}
	}
	for pl := range q.PendingPlugins {
		if id, ok := lists[pl]; ok && !q.UnschedulablePlugins.Has(pl) {
			buf = append(buf, id)
		}
	}
	sort.Ints(buf)
	return buf
}

// member is an entry's link in one of the pool's lists.
type member struct {
	e          *unschedulableEntry
	prev, next *member
	list       int
}

// memberList is one list of the pool, in the pool's order (by seq).
type memberList struct{ head, tail *member }

// link puts m into its list at its entry's place by seq: at the tail for a
// new entry, further up for an entry whose rejectors changed in place.
func (l *memberList) link(m *member) {
	at := l.tail
	for at != nil && at.e.seq > m.e.seq {
		at = at.prev
	}
	m.prev = at
	if at == nil {
		m.next = l.head
		l.head = m
	} else {
		m.next = at.next
		at.next = m
	}
	if m.next == nil {
		l.tail = m
	} else {
		m.next.prev = m
	}
}

func (l *memberList) unlink(m *member) {
	if m.prev == nil {
		l.head = m.next
	} else {
		m.prev.next = m.next
	}
	if m.next == nil {
		l.tail = m.prev
	} else {
		m.next.prev = m.prev
	}
	m.prev, m.next = nil, nil
}

// candidates appends to buf, in the pool's order and once each, the pods
// of the given lists and of the any-event list.
func (u *unschedulablePods) candidates(lists []int, buf []*schedcore.QueuedPodInfo) []*schedcore.QueuedPodInfo {
	var arr [16]*member
	heads := arr[:0]
	if h := u.lists[u.ix.anyEvent()].head; h != nil {
		heads = append(heads, h)
	}
	for _, id := range lists {
		if h := u.lists[id].head; h != nil {
			heads = append(heads, h)
		}
	}
	var last uint64 // seqs start at 1
	for len(heads) > 0 {
		mi := 0
		for i := 1; i < len(heads); i++ {
			if heads[i].e.seq < heads[mi].e.seq {
				mi = i
			}
		}
		m := heads[mi]
		if m.e.seq != last {
			buf = append(buf, m.e.q)
			last = m.e.seq
		}
		if m.next != nil {
			heads[mi] = m.next
		} else {
			heads[mi] = heads[len(heads)-1]
			heads = heads[:len(heads)-1]
		}
	}
	return buf
}
