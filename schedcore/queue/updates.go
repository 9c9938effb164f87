package queue

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Update updates a pending pod. An in-flight pod gets the update recorded
// as events for its requeue decision; a pod in activeQ or backoffQ is
// updated in place; a pod in the unschedulable pool (gated pods included)
// is requeued if its rejectors' hints say the update (TargetPod events)
// may help; an unknown pod is added. A pod group member is updated inside
// its group's entity (the group then requeued as a whole, on the
// strongest member hint), or where it waits (incomplete, pending).
func (p *PriorityQueue) Update(logger logr.Logger, oldPod, newPod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	events := PodSchedulingPropertiesChange(newPod, oldPod, true, p.features)

	key := podKey(oldPod)
	member := p.isMember(oldPod)
	if member {
		var ok bool
		if key, ok = p.rootKeyForPod(oldPod); !ok {
			if q := p.incomplete.update(newPod); q != nil {
				p.nominator.update(logger, oldPod, q.PodInfo)
			}
			return
		}
	}

	updated := func() bool {
		aq := p.activeQ
		aq.lock.Lock()
		defer aq.lock.Unlock()
		if aq.unlockedAddEventsIfPodInFlight(oldPod, newPod, events) {
			logger.V(6).Info("The pod doesn't need to be queued for now because it's being scheduled and will be queued back if necessary", "pod", schedcore.PodName(newPod))
			return true
		}
		if e, ok := aq.queue.GetKey(key); ok {
			if q := updateInEntity(e, newPod); q != nil {
				aq.queue.AddOrUpdate(e)
				p.nominator.update(logger, oldPod, q.PodInfo)
				return true
			}
		}
		if q := p.backoffQ.update(key, newPod); q != nil {
			p.nominator.update(logger, oldPod, q.PodInfo)
			return true
		}
		return false
	}()
	if updated {
		return
	}

	if e := p.unschedulable.getKey(key); e != nil {
		q := updateInEntity(e, newPod)
		if q == nil {
			logger.Error(nil, "Failed to update pod in an entity", "entity", schedcore.PodName(e.Pod), "pod", schedcore.PodName(newPod))
			p.addPod(logger, newPod)
			return
		}
		p.nominator.update(logger, oldPod, q.PodInfo)
		for _, ev := range events {
			hint := p.isEntityWorthRequeuing(logger, e, ev, oldPod, newPod)
			queue := p.requeue(logger, e, hint, ev.Label())
			if queue != QueueUnschedulable {
				if v := logger.V(5); v.Enabled() {
					v.Info("Pod moved to an internal scheduling queue because the Pod is updated", "pod", schedcore.PodName(newPod), "event", ev.Label(), "queue", queue)
				}
			}
			if p.wakes(queue) {
				p.activeQ.broadcast()
				break
			}
		}
		return
	}
	if member {
		if q := p.pending.update(newPod); q != nil {
			p.nominator.update(logger, oldPod, q.PodInfo)
			return
		}
	}
	p.addPod(logger, newPod)
}

// updateInEntity replaces the pod of a pod entity, or of the member of a
// group entity, and returns the updated pod's entry (nil if the group has
// no such member).
func updateInEntity(e *schedcore.QueuedPodInfo, pod *v1.Pod) *schedcore.QueuedPodInfo {
	if e.Group != nil {
		return e.Group.UpdatePod(pod)
	}
	e.PodInfo = schedcore.NewPodInfo(pod)
	return e
}

// Delete removes a pending pod from every queue and the nominator; a
// member leaves its group's entity (an emptied group leaves the queue).
func (p *PriorityQueue) Delete(pod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.nominator.delete(pod)
	if p.isMember(pod) {
		p.deletePodGroupMember(p.logger, pod)
		return
	}
	q := p.activeQ.delete(pod)
	if q == nil {
		q = p.backoffQ.delete(pod)
	}
	if q == nil {
		if q = p.unschedulable.get(pod); q != nil {
			p.unschedulable.delete(pod)
		}
	}
	if q != nil {
		for pl := range q.UnschedulablePlugins.Union(q.PendingPlugins) {
			p.metrics.UnschedulableReason(pl, q.Pod.Spec.SchedulerName, -1)
		}
	}
}
