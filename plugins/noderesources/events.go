package noderesources

import (
	"context"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// EventsToRegister lists what may make a pod rejected by NodeResourcesFit
// schedulable, as kube v1.37 does with default gates: an assigned pod
// deleted, a node added or its allocatable changed, and (InPlacePodVerticalScaling)
// an assigned pod or the pod itself scaled down.
func (pl *Fit) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	events := []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Delete}, QueueingHintFn: pl.isSchedulableAfterAssignedPodDelete},
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeAllocatable}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}
	if pl.dra != nil {
		events = append(events, schedcore.ClusterEventWithHint{Event: schedcore.ClusterEvent{Resource: schedcore.DeviceClass, ActionType: schedcore.Add | schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterDeviceClassEvent})
	}
	if pl.features.InPlacePodVerticalScaling {
		events = append(events,
			schedcore.ClusterEventWithHint{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.UpdatePodScaleDown}, QueueingHintFn: pl.isSchedulableAfterAssignedPodScaleDown},
			schedcore.ClusterEventWithHint{Event: schedcore.ClusterEvent{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodScaleDown}, QueueingHintFn: pl.isSchedulableAfterTargetPodScaleDown},
		)
	}
	return events, nil
}

// isSchedulableAfterAssignedPodDelete queues the pod unless the deleted pod
// was neither bound nor nominated anywhere (then it held no resources).
func (pl *Fit) isSchedulableAfterAssignedPodDelete(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	deleted, _, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if deleted == nil {
		return schedcore.Queue, nil
	}
	if deleted.Spec.NodeName == "" && deleted.Status.NominatedNodeName == "" {
		logger.V(5).Info("the deleted pod was unscheduled and it wouldn't make the unscheduled pod schedulable", "pod", schedcore.PodName(pod))
		return schedcore.QueueSkip, nil
	}
	logger.V(5).Info("another scheduled pod was deleted, and it may make the unscheduled pod schedulable", "pod", schedcore.PodName(pod), "deletedPod", schedcore.PodName(deleted))
	return schedcore.Queue, nil
}

// isSchedulableAfterTargetPodScaleDown: the pod itself asking for less may
// make it fit.
func (pl *Fit) isSchedulableAfterTargetPodScaleDown(logger logr.Logger, pod *v1.Pod, _, _ any) (schedcore.QueueingHint, error) {
	logger.V(5).Info("the target pod got scaled down and it may be schedulable now", "pod", schedcore.PodName(pod))
	return schedcore.Queue, nil
}

// isSchedulableAfterAssignedPodScaleDown queues the pod when an assigned pod
// freed some of a resource the pod requests.
func (pl *Fit) isSchedulableAfterAssignedPodScaleDown(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	original, modified, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if original == nil || modified == nil {
		return schedcore.Queue, nil
	}
	if !pl.haveEnoughRelevantResourcesDecreased(pod, original, modified) {
		logger.V(5).Info("pod got scaled down, but the modification isn't related to the resource requests of the target pod", "pod", schedcore.PodName(pod), "modifiedPod", schedcore.PodName(modified))
		return schedcore.QueueSkip, nil
	}
	logger.V(5).Info("another scheduled pod got scaled down, and it may make the unscheduled pod schedulable", "pod", schedcore.PodName(pod), "modifiedPod", schedcore.PodName(modified))
	return schedcore.Queue, nil
}

// haveEnoughRelevantResourcesDecreased is kube's check: the modified pod is
// assigned and its requests (status resources included) dropped for some
// resource the target pod requests. Like kube, pod-level resources count
// here whatever the PodLevelResources gate says.
func (pl *Fit) haveEnoughRelevantResourcesDecreased(target, original, modified *v1.Pod) bool {
	if modified.Spec.NodeName == "" {
		return false
	}
	opts := resourcehelper.PodResourcesOptions{
		UseStatusResources: pl.features.InPlacePodVerticalScaling,
		InPlacePodLevelResourcesVerticalScalingEnabled: pl.features.InPlacePodLevelResourcesVerticalScaling,
	}
	var before, after schedcore.Resource
	before.SetMaxResource(resourcehelper.PodRequests(original, opts))
	after.SetMaxResource(resourcehelper.PodRequests(modified, opts))
	for name, q := range resourcehelper.PodRequests(target, opts) {
		if q.IsZero() {
			continue
		}
		switch name {
		case v1.ResourceCPU:
			if before.MilliCPU > after.MilliCPU {
				return true
			}
		case v1.ResourceMemory:
			if before.Memory > after.Memory {
				return true
			}
		case v1.ResourceEphemeralStorage:
			if before.EphemeralStorage > after.EphemeralStorage {
				return true
			}
		default:
			if schedcore.IsScalarResourceName(name) && before.ScalarResources[name] > after.ScalarResources[name] {
				return true
			}
		}
	}
	return false
}

// isSchedulableAfterNodeChange queues the pod when a node it fits was added,
// or a node it fits gained allocatable of something it requests (or pods).
func (pl *Fit) isSchedulableAfterNodeChange(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	original, modified, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if !isFit(pod, modified, pl.features, pl.dra) {
		logger.V(5).Info("node was created or updated, but it doesn't have enough resource(s) to accommodate this pod", "pod", schedcore.PodName(pod))
		return schedcore.QueueSkip, nil
	}
	if original == nil {
		logger.V(5).Info("node was added and it might fit the pod's resource requests", "pod", schedcore.PodName(pod), "node", modified.Name)
		return schedcore.Queue, nil
	}
	if !haveAnyRequestedResourcesIncreased(pod, original, modified, pl.features) {
		logger.V(5).Info("node was updated, but haven't changed the pod's resource requestments fit assessment", "pod", schedcore.PodName(pod), "node", modified.Name)
		return schedcore.QueueSkip, nil
	}
	logger.V(5).Info("node was updated, and may now fit the pod's resource requests", "pod", schedcore.PodName(pod), "node", modified.Name)
	return schedcore.Queue, nil
}

// isFit reports whether the pod fits an empty node (no ignored resources,
// as in kube).
func isFit(pod *v1.Pod, node *v1.Node, f schedcore.Features, dra *schedcore.DRAManager) bool {
	if node == nil {
		return false
	}
	ni := schedcore.NewNodeInfo()
	ni.SetNode(node)
	return len(fitsRequest(newPreFilterState(pod, f, nil, nil, dra), ni)) == 0
}

// haveAnyRequestedResourcesIncreased reports whether the node's allowed pod
// number grew, or its allocatable grew for a resource the pod requests.
func haveAnyRequestedResourcesIncreased(pod *v1.Pod, originalNode, modifiedNode *v1.Node, f schedcore.Features) bool {
	req := schedcore.ComputePodRequests(pod, f)
	before := schedcore.NewResource(originalNode.Status.Allocatable)
	after := schedcore.NewResource(modifiedNode.Status.Allocatable)
	if after.AllowedPodNumber > before.AllowedPodNumber {
		return true
	}
	if req.MilliCPU == 0 && req.Memory == 0 && req.EphemeralStorage == 0 && len(req.ScalarResources) == 0 {
		return false
	}
	if (req.MilliCPU > 0 && after.MilliCPU > before.MilliCPU) ||
		(req.Memory > 0 && after.Memory > before.Memory) ||
		(req.EphemeralStorage > 0 && after.EphemeralStorage > before.EphemeralStorage) {
		return true
	}
	for name, q := range req.ScalarResources {
		if q == 0 {
			continue
		}
		if after.ScalarResources[name] > before.ScalarResources[name] {
			return true
		}
	}
	return false
}

// isSchedulableAfterDeviceClassEvent is kube's hint for DeviceClass events
// with DRA-backed extended resources: a class that newly backs one of the
// pod's requested resources (implicitly, or by an extendedResourceName that
// changed) may make it fit.
func (pl *Fit) isSchedulableAfterDeviceClassEvent(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	original, modified, err := helper.As[*resourceapi.DeviceClass](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	reqs := schedcore.ComputePodRequests(pod, pl.features)
	if original != nil {
		if ptr.Deref(original.Spec.ExtendedResourceName, "") == ptr.Deref(modified.Spec.ExtendedResourceName, "") {
			return schedcore.QueueSkip, nil
		}
	} else if _, ok := reqs.ScalarResources[v1.ResourceName(resourceapi.ResourceDeviceClassPrefix+modified.Name)]; ok {
		return schedcore.Queue, nil
	}
	if modified.Spec.ExtendedResourceName != nil {
		if _, ok := reqs.ScalarResources[v1.ResourceName(*modified.Spec.ExtendedResourceName)]; ok {
			return schedcore.Queue, nil
		}
	}
	return schedcore.QueueSkip, nil
}
