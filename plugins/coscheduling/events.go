package coscheduling

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// EventsToRegister: a new member may complete a group (kube's
// GangScheduling registers the same pod events), and a PodGroup added or
// changed may ungate its pods.
func (pl *Coscheduling) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add}, QueueingHintFn: pl.isSchedulableAfterPodAdded},
		{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Add}, QueueingHintFn: pl.isSchedulableAfterPodAdded},
		// A group rejected as a whole may fit once other pods leave or
		// nodes come; its own members leaving cannot help it.
		{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Delete}, QueueingHintFn: pl.isSchedulableAfterPodDeleted},
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeAllocatable}},
		{Event: schedcore.ClusterEvent{Resource: schedcore.PodGroup, ActionType: schedcore.Add | schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterPodGroupChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.PodGroupCRD, ActionType: schedcore.Add | schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterPodGroupChange},
	}, nil
}

func (pl *Coscheduling) isSchedulableAfterPodAdded(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	_, added, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if r, ok := pl.groupOf(pod); ok && added != nil && added.UID != pod.UID && pl.inGroup(added, r) {
		return schedcore.Queue, nil
	}
	return schedcore.QueueSkip, nil
}

func (pl *Coscheduling) isSchedulableAfterPodDeleted(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	deleted, _, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if r, ok := pl.groupOf(pod); ok && deleted != nil && !pl.inGroup(deleted, r) {
		return schedcore.Queue, nil
	}
	return schedcore.QueueSkip, nil
}

func (pl *Coscheduling) isSchedulableAfterPodGroupChange(_ logr.Logger, pod *v1.Pod, _, newObj any) (schedcore.QueueingHint, error) {
	r, ok := pl.groupOf(pod)
	if !ok {
		return schedcore.QueueSkip, nil
	}
	var ns, name string
	native := false
	switch o := newObj.(type) {
	case *schedulingv1beta1.PodGroup:
		ns, name, native = o.Namespace, o.Name, true
	case *PodGroup:
		ns, name = o.Namespace, o.Name
	case interface {
		GetNamespace() string
		GetName() string
	}:
		ns, name = o.GetNamespace(), o.GetName()
		native = r.native
	default:
		return schedcore.Queue, fmt.Errorf("unexpected PodGroup object %T", newObj)
	}
	if ns == r.namespace && name == r.name && native == r.native {
		return schedcore.Queue, nil
	}
	return schedcore.QueueSkip, nil
}
