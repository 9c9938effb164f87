package dynamicresources

import (
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// isSchedulableAfterClaimChange is kube's hint for claim events: a
// deallocation (or an allocated claim deleted) may free devices for any
// pod; otherwise only a change of one of the pod's own claims matters:
// its creation or a change of its status.
func (pl *DynamicResources) isSchedulableAfterClaimChange(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	var original, modified *resourceapi.ResourceClaim
	if oldObj != nil {
		c, ok := oldObj.(*resourceapi.ResourceClaim)
		if !ok {
			return schedcore.Queue, fmt.Errorf("unexpected object in isSchedulableAfterClaimChange: %T", oldObj)
		}
		original = c
	}
	if newObj != nil {
		c, ok := newObj.(*resourceapi.ResourceClaim)
		if !ok {
			return schedcore.Queue, fmt.Errorf("unexpected object in isSchedulableAfterClaimChange: %T", newObj)
		}
		modified = c
	}
	if modified == nil {
		if original == nil || original.Status.Allocation == nil {
			return schedcore.QueueSkip, nil
		}
		return schedcore.Queue, nil
	}
	deallocated := original != nil && original.Status.Allocation != nil && modified.Status.Allocation == nil
	if !deallocated && !mayUseClaim(pod, modified) {
		// Every outcome below but a deallocation is QueueSkip for a pod
		// that does not use the claim (the look-ups' errors included).
		return schedcore.QueueSkip, nil
	}
	usesClaim := false
	if err := pl.foreachPodResourceClaim(pod, func(_ string, c *resourceapi.ResourceClaim) {
		if c.UID == modified.UID {
			usesClaim = true
		}
	}); err != nil {
		return schedcore.QueueSkip, nil
	}
	if deallocated {
		return schedcore.Queue, nil
	}
	if !usesClaim {
		return schedcore.QueueSkip, nil
	}
	if original == nil {
		return schedcore.Queue, nil
	}
	if apiequality.Semantic.DeepEqual(&original.Status, &modified.Status) {
		return schedcore.QueueSkip, nil
	}
	return schedcore.Queue, nil
}

// isSchedulableAfterTargetPodUpdate queues the pod once all its claims
// exist (the resourceclaim controller recorded them in its status).
func (pl *DynamicResources) isSchedulableAfterTargetPodUpdate(_ logr.Logger, _ *v1.Pod, _, newObj any) (schedcore.QueueingHint, error) {
	p, ok := newObj.(*v1.Pod)
	if !ok {
		return schedcore.Queue, fmt.Errorf("unexpected object in isSchedulableAfterTargetPodUpdate: %T", newObj)
	}
	if err := pl.foreachPodResourceClaim(p, nil); err != nil {
		return schedcore.QueueSkip, nil
	}
	return schedcore.Queue, nil
}

// mayUseClaim reports whether one of the pod's claims may be c: the claims
// foreachPodResourceClaim finds are the pod's namespace's, named in its
// spec (resourceClaimName) or, for templates, in its status; an object of
// another name is another claim (another UID).
func mayUseClaim(pod *v1.Pod, c *resourceapi.ResourceClaim) bool {
	if c.Namespace != pod.Namespace {
		return false
	}
	for i := range pod.Spec.ResourceClaims {
		if n := pod.Spec.ResourceClaims[i].ResourceClaimName; n != nil && *n == c.Name {
			return true
		}
	}
	for i := range pod.Status.ResourceClaimStatuses {
		if n := pod.Status.ResourceClaimStatuses[i].ResourceClaimName; n != nil && *n == c.Name {
			return true
		}
	}
	return false
}
