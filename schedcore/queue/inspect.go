package queue

import (
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// AddNominatedPod records a nomination (ModeOverride) or the pod's
// status.nominatedNodeName (ModeNoop or nil).
func (p *PriorityQueue) AddNominatedPod(logger logr.Logger, pi *schedcore.PodInfo, nominating *schedcore.NominatingInfo) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.nominator.add(logger, pi, nominating)
}

// DeleteNominatedPodIfExists forgets a pod's nomination.
func (p *PriorityQueue) DeleteNominatedPodIfExists(pod *v1.Pod) { p.nominator.delete(pod) }

// NumNominatedPods counts nominated pods (schedcore.NominatedPodCounter).
func (p *PriorityQueue) NumNominatedPods() int {
	p.nominator.lock.RLock()
	defer p.nominator.lock.RUnlock()
	return len(p.nominator.nominatedPodToNode)
}

// NominatedPodsForNode returns copies of the pods nominated to the node, in
// nomination order (as kube). A pod no longer queued (in flight) comes back
// as a bare pod with only its name, namespace and UID, as in kube. Must not
// be called while holding the queue's locks (from a hint, for example).
func (p *PriorityQueue) NominatedPodsForNode(nodeName string) []*schedcore.PodInfo {
	p.lock.RLock()
	defer p.lock.RUnlock()
	refs := p.nominator.forNode(nodeName)
	if len(refs) == 0 {
		return []*schedcore.PodInfo{}
	}
	out := make([]*schedcore.PodInfo, len(refs))
	p.activeQ.lock.RLock()
	defer p.activeQ.lock.RUnlock()
	for i, r := range refs {
		pod := r.toPod()
		if q := p.unlockedGetPod(pod); q != nil {
			pod = q.Pod
		}
		out[i] = schedcore.NewPodInfo(pod.DeepCopy())
	}
	return out
}

// unlockedGetPod finds a queued pod; the caller holds p.lock and
// activeQ.lock.
//
// A pod group member is found only by a pod naming its group (kube's
// GetPod takes the schedulingGroup for that); the nominator's references
// keep it, as kube's podRef does, so a nominated member queued in its
// group comes back whole.
func (p *PriorityQueue) unlockedGetPod(pod *v1.Pod) *schedcore.QueuedPodInfo {
	if p.isMember(pod) {
		key, ok := p.rootKeyForPod(pod)
		if !ok {
			return p.incomplete.get(pod)
		}
		if e := p.getFromAnyQueue(key); e != nil {
			return e.Group.Member(pod)
		}
		return p.pending.get(pod)
	}
	if q, ok := p.activeQ.queue.Get(pod); ok {
		return q
	}
	if q, ok := p.backoffQ.get(pod); ok {
		return q
	}
	return p.unschedulable.get(pod)
}

// GetPod returns a queued (not in-flight) pod by name; members of queued
// groups are not found by name alone (GetPodGroup finds their group).
func (p *PriorityQueue) GetPod(name, namespace string) (*schedcore.QueuedPodInfo, bool) {
	p.lock.RLock()
	defer p.lock.RUnlock()
	p.activeQ.lock.RLock()
	defer p.activeQ.lock.RUnlock()
	pod := &v1.Pod{}
	pod.Name, pod.Namespace = name, namespace
	q := p.unlockedGetPod(pod)
	return q, q != nil
}

// PodsInActiveQ lists activeQ (heap order).
func (p *PriorityQueue) PodsInActiveQ() []*v1.Pod { return p.activeQ.list() }

// PodsInBackoffQ lists backoffQ (heap order).
func (p *PriorityQueue) PodsInBackoffQ() []*v1.Pod { return p.backoffQ.list() }

// UnschedulablePods lists the unschedulable pool, gated pods included, in
// arrival order.
func (p *PriorityQueue) UnschedulablePods() []*v1.Pod {
	p.lock.RLock()
	defer p.lock.RUnlock()
	return appendPods(nil, p.unschedulable.list())
}

// PendingPods lists the pending pods (activeQ, backoffQ, then the
// unschedulable pool; members of queued groups included) with kube's
// summary line, which counts pods. With pod groups the members waiting for
// their PodGroup (incomplete) and for their in-flight group (pending)
// follow, and the line is kube's extended one.
func (p *PriorityQueue) PendingPods() ([]*v1.Pod, string) {
	p.lock.RLock()
	defer p.lock.RUnlock()
	out := p.activeQ.list()
	nActive := len(out)
	backoff := p.backoffQ.list()
	out = append(out, backoff...)
	n := len(out)
	out = appendPods(out, p.unschedulable.list())
	nUnsched := len(out) - n
	if !p.groups {
		return out, fmt.Sprintf(pendingPodsSummary, nActive, len(backoff), nUnsched)
	}
	out = append(out, p.incomplete.list()...)
	out = append(out, p.pending.list()...)
	return out, fmt.Sprintf(pendingPodsExtendedSummary, nActive, len(backoff), nUnsched, p.pending.len(), p.incomplete.len())
}

// Lengths reports the size of each sub-queue; Unschedulable excludes the
// gated pods, counted in Gated. With pod groups it counts pods (the members
// of queued groups) and the members waiting outside the queues.
func (p *PriorityQueue) Lengths() schedcore.QueueLengths {
	p.lock.RLock()
	defer p.lock.RUnlock()
	if p.groups {
		l := schedcore.QueueLengths{
			Active:                 len(p.activeQ.list()),
			Backoff:                len(p.backoffQ.list()),
			PendingPodGroupPods:    p.pending.len(),
			IncompletePodGroupPods: p.incomplete.len(),
		}
		for _, q := range p.unschedulable.list() {
			if q.Gated() {
				l.Gated += entitySize(q)
			} else {
				l.Unschedulable += entitySize(q)
			}
		}
		return l
	}
	return schedcore.QueueLengths{
		Active:        p.activeQ.len(),
		Backoff:       p.backoffQ.len(),
		Unschedulable: p.unschedulable.len() - p.unschedulable.gated,
		Gated:         p.unschedulable.gated,
	}
}
