package queue

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// PodSchedulingPropertiesChange interprets a pod update as kube's function
// of that name: one event per kind of change (labels, scale down, scale up,
// scheduling gates removed, tolerations added, generated resource claims),
// or a plain Update when none applies. The resource is AssignedPod for a
// pod on a node, else TargetPod when the update is to the pod being
// scheduled itself (isTargetPod), else UnscheduledPod. Drivers use it for
// AssignedPodUpdated and for updates of other pending pods.
func PodSchedulingPropertiesChange(newPod, oldPod *v1.Pod, isTargetPod bool, f schedcore.Features) []schedcore.ClusterEvent {
	r := schedcore.UnscheduledPod
	switch {
	case newPod.Spec.NodeName != "":
		r = schedcore.AssignedPod
	case isTargetPod:
		r = schedcore.TargetPod
	}
	opts := resourcehelper.PodResourcesOptions{
		UseStatusResources: f.InPlacePodVerticalScaling,
		InPlacePodLevelResourcesVerticalScalingEnabled: f.InPlacePodLevelResourcesVerticalScaling,
	}
	var events []schedcore.ClusterEvent
	for _, a := range []schedcore.ActionType{
		podLabelsChange(newPod, oldPod),
		podScaleDown(newPod, oldPod, opts),
		podScaleUp(newPod, oldPod, opts),
		podSchedulingGatesEliminated(newPod, oldPod),
		podTolerationChange(newPod, oldPod),
		podGeneratedResourceClaimChange(newPod, oldPod),
	} {
		if a != schedcore.None {
			events = append(events, schedcore.ClusterEvent{Resource: r, ActionType: a})
		}
	}
	if len(events) == 0 {
		events = append(events, schedcore.ClusterEvent{Resource: r, ActionType: schedcore.Update})
	}
	return events
}

func podLabelsChange(newPod, oldPod *v1.Pod) schedcore.ActionType {
	if !equality.Semantic.DeepEqual(newPod.GetLabels(), oldPod.GetLabels()) {
		return schedcore.UpdatePodLabel
	}
	return schedcore.None
}

// podScaleDown: a request was removed or lowered.
func podScaleDown(newPod, oldPod *v1.Pod, opts resourcehelper.PodResourcesOptions) schedcore.ActionType {
	newReq := resourcehelper.PodRequests(newPod, opts)
	for name, o := range resourcehelper.PodRequests(oldPod, opts) {
		n, ok := newReq[name]
		if !ok || o.MilliValue() > n.MilliValue() {
			return schedcore.UpdatePodScaleDown
		}
	}
	return schedcore.None
}

// podScaleUp: a request was added or raised.
func podScaleUp(newPod, oldPod *v1.Pod, opts resourcehelper.PodResourcesOptions) schedcore.ActionType {
	oldReq := resourcehelper.PodRequests(oldPod, opts)
	for name, n := range resourcehelper.PodRequests(newPod, opts) {
		o, ok := oldReq[name]
		if !ok || n.MilliValue() > o.MilliValue() {
			return schedcore.UpdatePodScaleUp
		}
	}
	return schedcore.None
}

// podTolerationChange: tolerations can only be added, so a length change
// is enough.
func podTolerationChange(newPod, oldPod *v1.Pod) schedcore.ActionType {
	if len(newPod.Spec.Tolerations) != len(oldPod.Spec.Tolerations) {
		return schedcore.UpdatePodToleration
	}
	return schedcore.None
}

func podSchedulingGatesEliminated(newPod, oldPod *v1.Pod) schedcore.ActionType {
	if len(newPod.Spec.SchedulingGates) == 0 && len(oldPod.Spec.SchedulingGates) != 0 {
		return schedcore.UpdatePodSchedulingGatesEliminated
	}
	return schedcore.None
}

// podGeneratedResourceClaimChange compares the claim statuses as
// dynamic-resource-allocation's PodStatusEqual and PodExtendedStatusEqual.
func podGeneratedResourceClaimChange(newPod, oldPod *v1.Pod) schedcore.ActionType {
	if !claimStatusesEqual(newPod.Status.ResourceClaimStatuses, oldPod.Status.ResourceClaimStatuses) ||
		!extendedClaimStatusEqual(newPod.Status.ExtendedResourceClaimStatus, oldPod.Status.ExtendedResourceClaimStatus) {
		return schedcore.UpdatePodGeneratedResourceClaim
	}
	return schedcore.None
}

func claimStatusesEqual(a, b []v1.PodResourceClaimStatus) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name {
			return false
		}
		if (a[i].ResourceClaimName == nil) != (b[i].ResourceClaimName == nil) ||
			a[i].ResourceClaimName != nil && *a[i].ResourceClaimName != *b[i].ResourceClaimName {
			return false
		}
	}
	return true
}

func extendedClaimStatusEqual(a, b *v1.PodExtendedResourceClaimStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.ResourceClaimName == b.ResourceClaimName && slices.Equal(a.RequestMappings, b.RequestMappings)
}
