package queue

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Pod groups (GenericWorkload): a member of an observed PodGroup is never
// queued alone but inside its group's entity, a *QueuedPodInfo whose
// Group is set, keyed podgroup/NS/NAME in activeQ, backoffQ and the
// unschedulable pool. A member whose PodGroup is not observed waits in
// incomplete; one arriving while its group is in flight (the last popped
// entity) waits in pending until AddAttemptedPodGroupIfNeeded requeues the
// group (kube's incompletePodGroupPods and pendingPodGroupPods).

var (
	eventUnscheduledPodAdd    = schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add}.Label()
	eventUnscheduledPodUpdate = schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Update}.Label()
)

// isMember reports whether the pod is queued as a pod group member (kube's
// isPodGroupMember; deferred-resize pods, an alpha gate's, are not modelled).
func (p *PriorityQueue) isMember(pod *v1.Pod) bool {
	if !p.groups {
		return false
	}
	_, ok := schedcore.PodGroupNameOf(pod)
	return ok
}

// memberGroupKey is the key of the group a member names.
func memberGroupKey(pod *v1.Pod) string {
	name, _ := schedcore.PodGroupNameOf(pod)
	return groupKey(pod.Namespace, name)
}

// rootKeyForPod returns the key of the member's group if its PodGroup is
// observed (kube's getRootLookupInfoForPod without CompositePodGroups).
func (p *PriorityQueue) rootKeyForPod(pod *v1.Pod) (string, bool) {
	k := memberGroupKey(pod)
	_, ok := p.podGroups[k]
	return k, ok
}

// memberPods holds members outside the queues, by group then pod key.
// Protected by PriorityQueue.lock.
type memberPods struct {
	byGroup map[string]map[string]*schedcore.QueuedPodInfo
	n       int
}

func newMemberPods() *memberPods {
	return &memberPods{byGroup: map[string]map[string]*schedcore.QueuedPodInfo{}}
}

func (m *memberPods) add(q *schedcore.QueuedPodInfo) {
	gk, pk := memberGroupKey(q.Pod), podKey(q.Pod)
	pods := m.byGroup[gk]
	if pods == nil {
		pods = map[string]*schedcore.QueuedPodInfo{}
		m.byGroup[gk] = pods
	}
	if _, ok := pods[pk]; !ok {
		m.n++
	}
	pods[pk] = q
}

func (m *memberPods) get(pod *v1.Pod) *schedcore.QueuedPodInfo {
	return m.byGroup[memberGroupKey(pod)][podKey(pod)]
}

// update replaces the member's pod; nil if it is not held.
func (m *memberPods) update(pod *v1.Pod) *schedcore.QueuedPodInfo {
	q := m.get(pod)
	if q != nil {
		q.PodInfo = schedcore.NewPodInfo(pod)
	}
	return q
}

func (m *memberPods) delete(pod *v1.Pod) *schedcore.QueuedPodInfo {
	gk, pk := memberGroupKey(pod), podKey(pod)
	q := m.byGroup[gk][pk]
	if q == nil {
		return nil
	}
	delete(m.byGroup[gk], pk)
	if len(m.byGroup[gk]) == 0 {
		delete(m.byGroup, gk)
	}
	m.n--
	return q
}

// clear removes and returns the members of a group in member order (kube
// returns map order; the order only decides which member's timestamp a
// group created from them starts with).
func (m *memberPods) clear(key string) []*schedcore.QueuedPodInfo {
	pods := m.byGroup[key]
	if pods == nil {
		return nil
	}
	delete(m.byGroup, key)
	out := make([]*schedcore.QueuedPodInfo, 0, len(pods))
	for _, q := range pods {
		out = append(out, q)
	}
	slices.SortFunc(out, schedcore.ComparePodGroupMembers)
	m.n -= len(out)
	return out
}

// list returns the held pods by group key, then member order.
func (m *memberPods) list() []*v1.Pod {
	keys := make([]string, 0, len(m.byGroup))
	for k := range m.byGroup {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*v1.Pod, 0, m.n)
	for _, k := range keys {
		qs := make([]*schedcore.QueuedPodInfo, 0, len(m.byGroup[k]))
		for _, q := range m.byGroup[k] {
			qs = append(qs, q)
		}
		slices.SortFunc(qs, schedcore.ComparePodGroupMembers)
		for _, q := range qs {
			out = append(out, q.Pod)
		}
	}
	return out
}

func (m *memberPods) len() int { return m.n }

// addPodGroupMember puts a member where kube's addPodGroupMember does:
// incomplete if its PodGroup is not observed; into its group's entity,
// requeued to the queue it was found in, if the group is queued; pending
// if the group is in flight; else into a new entity in activeQ (PreEnqueue
// permitting) with the member's timestamps. Caller holds p.lock.
func (p *PriorityQueue) addPodGroupMember(logger logr.Logger, q *schedcore.QueuedPodInfo) {
	key, ok := p.rootKeyForPod(q.Pod)
	if !ok {
		p.incomplete.add(q)
		if v := logger.V(5); v.Enabled() {
			v.Info("Pod with pod group added to incompletePodGroupPods, waiting for one or more parent pod group objects to be observed", "podGroup", key, "pod", schedcore.PodName(q.Pod))
		}
		return
	}
	if e, strategy := p.deleteFromAnyQueue(key); e != nil {
		e.Group.AddPod(q)
		queue := p.requeue(logger, e, strategy, eventUnscheduledPodAdd)
		if p.wakes(queue) {
			p.activeQ.broadcast()
		}
		if v := logger.V(5); v.Enabled() {
			v.Info("Pod added to existing root group info", "root", key, "pod", schedcore.PodName(q.Pod), "queue", queue)
		}
		return
	}
	if p.activeQ.isLastPopped(key) {
		p.pending.add(q)
		if v := logger.V(5); v.Enabled() {
			v.Info("Pod added to pending pod group pods, waiting for its root group to be requeued", "root", key, "pod", schedcore.PodName(q.Pod))
		}
		return
	}
	e := schedcore.NewQueuedPodGroupInfo(p.podGroups[key], q.Pod.Spec.SchedulerName)
	e.Group.AddPod(q)
	e.Timestamp, e.InitialAttemptTimestamp = q.Timestamp, q.InitialAttemptTimestamp
	if p.moveToActiveQ(logger, e, eventUnscheduledPodAdd, false) {
		p.activeQ.broadcast()
	}
}

// addUnschedulablePodGroupMember re-adds a member handed back after its
// group's attempt; its group is normally the last popped entity, so it
// waits in pending for AddAttemptedPodGroupIfNeeded.
func (p *PriorityQueue) addUnschedulablePodGroupMember(logger logr.Logger, q *schedcore.QueuedPodInfo) {
	for pl := range q.UnschedulablePlugins.Union(q.PendingPlugins) {
		p.metrics.UnschedulableReason(pl, q.Pod.Spec.SchedulerName, 1)
	}
	p.addPodGroupMember(logger, q)
}

// deleteFromAnyQueue takes the entity with the key out of whichever queue
// holds it and returns it with the strategy that puts it back there.
func (p *PriorityQueue) deleteFromAnyQueue(key string) (*schedcore.QueuedPodInfo, queueingStrategy) {
	if e := p.activeQ.deleteKey(key); e != nil {
		return e, queueImmediately
	}
	if e := p.backoffQ.deleteKey(key); e != nil {
		return e, queueAfterBackoff
	}
	if e := p.unschedulable.getKey(key); e != nil {
		p.unschedulable.deleteKey(key)
		return e, queueSkip
	}
	return nil, queueSkip
}

// getFromAnyQueue returns the queued entity with the key, or nil. Caller
// holds p.lock and activeQ.lock.
func (p *PriorityQueue) getFromAnyQueue(key string) *schedcore.QueuedPodInfo {
	if e, ok := p.activeQ.queue.GetKey(key); ok {
		return e
	}
	if e, ok := p.backoffQ.getKey(key); ok {
		return e
	}
	return p.unschedulable.getKey(key)
}

// deletePodGroupMember removes a member from wherever it waits; a group
// left with members goes back to the queue it was in.
func (p *PriorityQueue) deletePodGroupMember(logger logr.Logger, pod *v1.Pod) {
	dropReasons := func(q *schedcore.QueuedPodInfo) {
		for pl := range q.UnschedulablePlugins.Union(q.PendingPlugins) {
			p.metrics.UnschedulableReason(pl, q.Pod.Spec.SchedulerName, -1)
		}
	}
	key, ok := p.rootKeyForPod(pod)
	if !ok {
		if q := p.incomplete.delete(pod); q != nil {
			dropReasons(q)
		}
		return
	}
	e, strategy := p.deleteFromAnyQueue(key)
	if e == nil {
		if q := p.pending.delete(pod); q != nil {
			dropReasons(q)
		}
		return
	}
	if q := e.Group.RemovePod(pod); q != nil {
		dropReasons(q)
	}
	if e.Group.Size() == 0 {
		return
	}
	if p.wakes(p.requeue(logger, e, strategy, eventUnscheduledPodAdd)) {
		p.activeQ.broadcast()
	}
}

// AddPodGroup records an observed PodGroup: a queued entity of it takes the
// object, and the members waiting for it in incomplete join the queue.
func (p *PriorityQueue) AddPodGroup(logger logr.Logger, pg *schedulingv1beta1.PodGroup) {
	p.lock.Lock()
	defer p.lock.Unlock()
	if !p.groups {
		return
	}
	// A queued entity keeps its object: kube's AddPodGroup only links
	// CompositePodGroup children into it.
	key := groupKey(pg.Namespace, pg.Name)
	p.podGroups[key] = pg
	for _, q := range p.incomplete.clear(key) {
		p.addPodGroupMember(logger, q)
	}
}

// UpdatePodGroup replaces the observed PodGroup and the object of its
// queued entity (in place: kube does not reorder the heaps). As kube's
// forest, an update of a group never added records it, without moving the
// members waiting in incomplete (the next member to arrive, or the next
// AddPodGroup, does).
func (p *PriorityQueue) UpdatePodGroup(logger logr.Logger, pg *schedulingv1beta1.PodGroup) {
	p.lock.Lock()
	defer p.lock.Unlock()
	if !p.groups {
		return
	}
	key := groupKey(pg.Namespace, pg.Name)
	p.podGroups[key] = pg
	p.activeQ.lock.Lock()
	defer p.activeQ.lock.Unlock()
	if e := p.getFromAnyQueue(key); e != nil {
		e.Group.Object = pg
	}
}

// DeletePodGroup forgets a PodGroup: the members of its queued entity, or
// those pending while it is in flight, go back to incomplete.
func (p *PriorityQueue) DeletePodGroup(logger logr.Logger, pg *schedulingv1beta1.PodGroup) {
	p.lock.Lock()
	defer p.lock.Unlock()
	if !p.groups {
		return
	}
	key := groupKey(pg.Namespace, pg.Name)
	_, had := p.podGroups[key]
	delete(p.podGroups, key)
	if !had {
		return
	}
	e, _ := p.deleteFromAnyQueue(key)
	if e == nil {
		if !p.activeQ.isLastPopped(key) {
			return
		}
		for _, q := range p.pending.clear(key) {
			p.incomplete.add(q)
		}
		return
	}
	// A leaf group's entity holds only its own members: all of them go.
	for _, q := range e.Group.Members {
		p.incomplete.add(q)
	}
	if v := logger.V(5); v.Enabled() {
		v.Info("Pod group deleted from root group, decomposed and enqueued pods to incompletePodGroupPods", "podGroup", key, "pods", e.Group.Size())
	}
}

// AddAttemptedPodGroupIfNeeded requeues a popped group entity at the end of
// its pod-group cycle (kube's function of that name). The members the
// cycle handed back (AddUnschedulableIfNotPresent) and those that arrived
// meanwhile wait in pending; with none the group leaves the queue. Else a
// new entity of the observed PodGroup takes them with the attempted
// entity's queueing fields: after Success it goes to activeQ with counts
// reset, keeping its timestamp if any handed-back member was in this
// attempt (so that the next cycle, which may preempt, follows at once);
// after a rejection UnschedulableCount grows, after an error
// ConsecutiveErrorsCount, and it goes to backoffQ while backing off, else
// activeQ (PreEnqueue permitting). It is never parked for events.
func (p *PriorityQueue) AddAttemptedPodGroupIfNeeded(logger logr.Logger, g *schedcore.QueuedPodInfo, schedulingCycle int64, status *schedcore.Status) error {
	p.lock.Lock()
	defer p.lock.Unlock()
	if g.Group == nil {
		return fmt.Errorf("pod %v is not a pod group entity", schedcore.PodName(g.Pod))
	}
	key := entityKey(g)
	if p.unschedulable.getKey(key) != nil {
		return fmt.Errorf("pod group %v is already present in unschedulable queue", schedcore.PodName(g.Pod))
	}
	if p.activeQ.hasKey(key) {
		return fmt.Errorf("pod group %v is already present in the active queue", schedcore.PodName(g.Pod))
	}
	if p.backoffQ.hasKey(key) {
		return fmt.Errorf("pod group %v is already present in the backoff queue", schedcore.PodName(g.Pod))
	}
	p.activeQ.clearPopped()
	pending := p.pending.clear(key)
	if len(pending) == 0 {
		return nil
	}
	attempted := sets.New[types.UID]()
	for _, m := range g.Group.Members {
		attempted.Insert(m.Pod.UID)
	}
	hadFailed := false
	for _, m := range pending {
		if attempted.Has(m.Pod.UID) {
			hadFailed = true
			break
		}
	}
	pg, ok := p.podGroups[key]
	if !ok {
		for _, m := range pending {
			p.incomplete.add(m)
		}
		logger.Error(nil, "Root group no longer exists on requeue attempt, decomposed and moved pods to incompletePodGroupPods", "root", key)
		return nil
	}
	e := schedcore.NewQueuedPodGroupInfo(pg, pending[0].Pod.Spec.SchedulerName)
	for _, m := range pending {
		e.Group.AddPod(m)
	}
	copyQueueingParams(e, g)

	withoutBackoff, preserveTimestamp := false, false
	switch {
	case status.IsSuccess():
		withoutBackoff, preserveTimestamp = true, hadFailed
		e.ConsecutiveErrorsCount, e.UnschedulableCount = 0, 0
	case status.IsRejected():
		e.UnschedulableCount++
		e.ConsecutiveErrorsCount = 0
		e.BackoffExpiration = time.Time{}
	default:
		e.ConsecutiveErrorsCount++
		e.BackoffExpiration = time.Time{}
	}
	if !preserveTimestamp {
		e.Timestamp = p.clock.Now()
	}
	e.WasFlushedFromUnschedulable, e.FlushTimestamp = false, time.Time{}

	queue := QueueUnschedulable
	if !withoutBackoff && p.backoffQ.isPodBackingoff(e) {
		if p.moveToBackoffQ(logger, e, EventScheduleAttemptFailure) {
			queue = QueueBackoff
		}
	} else if p.moveToActiveQ(logger, e, EventScheduleAttemptFailure, false) {
		queue = QueueActive
	}
	if v := logger.V(3); v.Enabled() {
		v.Info("Pod group moved to an internal scheduling queue", "podGroup", key, "event", EventScheduleAttemptFailure, "queue", queue, "schedulingCycle", schedulingCycle, "unschedulable plugins", sets.List(e.UnschedulablePlugins.Union(e.PendingPlugins)))
	}
	if p.wakes(queue) {
		p.activeQ.broadcast()
	}
	return nil
}

// copyQueueingParams copies an entity's queueing fields (kube's
// QueueingParams) from src to dst.
func copyQueueingParams(dst, src *schedcore.QueuedPodInfo) {
	dst.Timestamp = src.Timestamp
	dst.Attempts = src.Attempts
	dst.UnschedulableCount = src.UnschedulableCount
	dst.ConsecutiveErrorsCount = src.ConsecutiveErrorsCount
	dst.InitialAttemptTimestamp = src.InitialAttemptTimestamp
	dst.WasFlushedFromUnschedulable = src.WasFlushedFromUnschedulable
	dst.FlushTimestamp = src.FlushTimestamp
	dst.BackoffExpiration = src.BackoffExpiration
	dst.UnschedulablePlugins, dst.PendingPlugins = src.UnschedulablePlugins, src.PendingPlugins
	if dst.UnschedulablePlugins == nil {
		dst.UnschedulablePlugins = sets.New[string]()
	}
	if dst.PendingPlugins == nil {
		dst.PendingPlugins = sets.New[string]()
	}
	dst.GatingPlugin, dst.GatingPluginEvents = src.GatingPlugin, src.GatingPluginEvents
}

// PendingPodGroupPods lists the members waiting for their in-flight group.
func (p *PriorityQueue) PendingPodGroupPods() []*v1.Pod {
	p.lock.RLock()
	defer p.lock.RUnlock()
	return p.pending.list()
}

// IncompletePodGroupPods lists the members waiting for their PodGroup to be
// observed.
func (p *PriorityQueue) IncompletePodGroupPods() []*v1.Pod {
	p.lock.RLock()
	defer p.lock.RUnlock()
	return p.incomplete.list()
}

// GetPodGroup returns a queued (not in-flight) group entity by name.
func (p *PriorityQueue) GetPodGroup(name, namespace string) (*schedcore.QueuedPodInfo, bool) {
	p.lock.RLock()
	defer p.lock.RUnlock()
	p.activeQ.lock.RLock()
	defer p.activeQ.lock.RUnlock()
	e := p.getFromAnyQueue(groupKey(namespace, name))
	return e, e != nil
}
