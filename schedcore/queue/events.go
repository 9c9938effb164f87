package queue

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Cluster events: the pods of the unschedulable pool that an event may help
// move to the active or backoff queue, as their rejectors' hints decide.

// MoveAllToActiveOrBackoffQueue requeues the pods of the unschedulable pool
// (that pass preCheck, if set) whose rejectors' hints say the event may
// help, and records the event for in-flight pods. Gated pods are only
// re-evaluated on wildcard events or events their gating plugin registered.
func (p *PriorityQueue) MoveAllToActiveOrBackoffQueue(logger logr.Logger, event schedcore.ClusterEvent, oldObj, newObj any, preCheck func(*v1.Pod) bool) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.moveAllToActiveOrBackoffQueue(logger, event, oldObj, newObj, preCheck)
}

func (p *PriorityQueue) moveAllToActiveOrBackoffQueue(logger logr.Logger, event schedcore.ClusterEvent, oldObj, newObj any, preCheck func(*v1.Pod) bool) {
	if !p.isEventOfInterest(logger, event) {
		return
	}
	// kube visits every pod of the pool. The pods outside the index's
	// candidates would all end in QueueSkip without a hint call, so only
	// the log line each of them gets at V(5) tells the two walks apart.
	all := p.walkAll || isWildCard(event) || logger.V(5).Enabled()
	var pods []*schedcore.QueuedPodInfo
	if all {
		pods = p.unschedulable.appendTo(p.moving[:0])
	} else {
		pods = p.unschedulable.candidates(p.ix.plan(event).lists, p.moving[:0])
	}
	if preCheck != nil {
		kept := pods[:0]
		for _, q := range pods {
			if passesPreCheck(q, preCheck) {
				kept = append(kept, q)
			}
		}
		clear(pods[len(kept):])
		pods = kept
	}
	p.movePodsToActiveOrBackoffQueue(logger, pods, event, oldObj, newObj)
	clear(pods)
	p.moving = pods[:0]
}

func (p *PriorityQueue) movePodsToActiveOrBackoffQueue(logger logr.Logger, pods []*schedcore.QueuedPodInfo, event schedcore.ClusterEvent, oldObj, newObj any) {
	if !p.isEventOfInterest(logger, event) {
		return
	}
	activated := false
	for _, q := range pods {
		if q.Gated() && !isWildCard(event) && !matchAnyClusterEvent(event, q.GatingPluginEvents) {
			continue
		}
		hint := p.isEntityWorthRequeuing(logger, q, event, oldObj, newObj)
		if hint == queueSkip {
			if v := logger.V(5); v.Enabled() {
				v.Info("Event is not making pod schedulable", "pod", schedcore.PodName(q.Pod), "event", event.Label())
			}
			continue
		}
		p.unschedulable.deleteKey(entityKey(q))
		if p.wakes(p.requeue(logger, q, hint, event.Label())) {
			activated = true
		}
	}
	if p.activeQ.addEventIfAnyInFlight(oldObj, newObj, event) {
		logger.V(5).Info("Event received while pods are in flight", "event", event.Label())
	}
	if activated {
		p.activeQ.broadcast()
	}
}

// passesPreCheck reports whether a pod passes preCheck, or for a group
// whether any member does (kube's collectEntitiesToEvaluate).
func passesPreCheck(q *schedcore.QueuedPodInfo, preCheck func(*v1.Pod) bool) bool {
	if q.Group == nil {
		return preCheck(q.Pod)
	}
	for _, m := range q.Group.Members {
		if preCheck(m.Pod) {
			return true
		}
	}
	return false
}

// AssignedPodAdded is kube's AssignedPod/Add event (a pod bound or added on
// a node): the hints of the plugins that registered it (inter-pod affinity,
// topology spread, ...) decide which pods move.
func (p *PriorityQueue) AssignedPodAdded(logger logr.Logger, pod *v1.Pod) {
	p.MoveAllToActiveOrBackoffQueue(logger, schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Add}, nil, pod, nil)
}

// AssignedPodUpdated is kube's AssignedPod/Update handling. A zero event
// means "derive it": one move per event PodSchedulingPropertiesChange finds,
// as kube's updateAssignedPodInCache.
func (p *PriorityQueue) AssignedPodUpdated(logger logr.Logger, oldPod, newPod *v1.Pod, event schedcore.ClusterEvent) {
	if event != (schedcore.ClusterEvent{}) {
		p.MoveAllToActiveOrBackoffQueue(logger, event, oldPod, newPod, nil)
		return
	}
	for _, e := range PodSchedulingPropertiesChange(newPod, oldPod, false, p.features) {
		p.MoveAllToActiveOrBackoffQueue(logger, e, oldPod, newPod, nil)
	}
}
