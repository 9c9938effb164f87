package gpushare

import (
	"context"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// EventsToRegister: a pod GpuShare rejected may fit once a GPU pod leaves
// or a node with GPUs appears, gains GPUs or changes model.
func (pl *GpuShare) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Delete}, QueueingHintFn: isSchedulableAfterPodDelete},
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeAllocatable | schedcore.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

func isSchedulableAfterPodDelete(_ logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	deleted, _, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if r, err := ParseRequest(deleted); err == nil && !r.IsGPU() {
		return schedcore.QueueSkip, nil
	}
	return schedcore.Queue, nil
}

func (pl *GpuShare) isSchedulableAfterNodeChange(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	_, node, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	r, err := ParseRequest(pod)
	if err != nil {
		return schedcore.QueueSkip, nil
	}
	q := node.Status.Allocatable[pl.resource]
	if q.Value() < int64(r.Count) || !r.AcceptsModel(node.Labels[pl.modelLabel]) {
		return schedcore.QueueSkip, nil
	}
	return schedcore.Queue, nil
}
