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
// may help; an unknown pod is added.
func (p *PriorityQueue) Update(logger logr.Logger, oldPod, newPod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	events := PodSchedulingPropertiesChange(newPod, oldPod, true, p.features)

	updated := func() bool {
		aq := p.activeQ
		aq.lock.Lock()
		defer aq.lock.Unlock()
		if aq.unlockedAddEventsIfPodInFlight(oldPod, newPod, events) {
			logger.V(6).Info("The pod doesn't need to be queued for now because it's being scheduled and will be queued back if necessary", "pod", schedcore.PodName(newPod))
			return true
		}
		if q, ok := aq.queue.Get(oldPod); ok {
			q.PodInfo = schedcore.NewPodInfo(newPod)
			aq.queue.AddOrUpdate(q)
			p.nominator.update(logger, oldPod, q.PodInfo)
			return true
		}
		if q := p.backoffQ.update(newPod); q != nil {
			p.nominator.update(logger, oldPod, q.PodInfo)
			return true
		}
		return false
	}()
	if updated {
		return
	}

	if q := p.unschedulable.get(oldPod); q != nil {
		q.PodInfo = schedcore.NewPodInfo(newPod)
		p.nominator.update(logger, oldPod, q.PodInfo)
		for _, e := range events {
			hint := p.isPodWorthRequeuing(logger, q, e, oldPod, newPod)
			queue := p.requeue(logger, q, hint, e.Label())
			if queue != QueueUnschedulable {
				if v := logger.V(5); v.Enabled() {
					v.Info("Pod moved to an internal scheduling queue because the Pod is updated", "pod", schedcore.PodName(newPod), "event", e.Label(), "queue", queue)
				}
			}
			if p.wakes(queue) {
				p.activeQ.broadcast()
				break
			}
		}
		return
	}
	p.addPod(logger, newPod)
}

// Delete removes a pending pod from every queue and the nominator.
func (p *PriorityQueue) Delete(pod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.nominator.delete(pod)
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
