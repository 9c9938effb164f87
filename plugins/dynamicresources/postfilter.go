package dynamicresources

import (
	"context"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// PostFilter deallocates one allocated claim that was unavailable on some
// node and is reserved for nobody else, so that the next attempt can pick
// other devices; a special claim of extended resources left from an
// earlier cycle is deleted.
func (pl *DynamicResources) PostFilter(ctx context.Context, cs *schedcore.CycleState, pod *v1.Pod, _ *schedcore.NodeToStatus) (*schedcore.PostFilterResult, *schedcore.Status) {
	if !pl.enabled {
		return nil, schedcore.NewStatus(schedcore.Unschedulable)
	}
	state, err := getStateData(cs)
	if err != nil {
		return nil, schedcore.AsStatus(err)
	}
	if state.claims.empty() {
		return nil, schedcore.NewStatus(schedcore.Unschedulable)
	}
	w := pl.handle.ClaimWriter()
	extended := state.claims.extendedResourceClaim()
	// kube ranges over a map (random order); the lowest index first keeps
	// the dry-run reproducible.
	for _, index := range sets.List(state.unavailableClaims) {
		claim := state.claims.get(index)
		if claim == extended {
			if extended != nil && !isSpecialClaimName(extended.Name) {
				break
			}
			continue
		}
		if len(claim.Status.ReservedFor) == 0 || (len(claim.Status.ReservedFor) == 1 && claim.Status.ReservedFor[0].UID == pod.UID) {
			if w == nil {
				return nil, schedcore.NewStatus(schedcore.Unschedulable)
			}
			c := claim.DeepCopy()
			c.Status.ReservedFor, c.Status.Allocation, c.Status.Devices = nil, nil, nil
			if _, err := w.UpdateClaimStatus(ctx, c); err != nil {
				return nil, schedcore.AsStatus(err)
			}
			return nil, schedcore.NewStatus(schedcore.Unschedulable, MsgDeallocated)
		}
	}
	if extended != nil && !isSpecialClaimName(extended.Name) && w != nil {
		if err := pl.deleteClaim(ctx, extended.DeepCopy()); err != nil {
			return nil, schedcore.AsStatus(err)
		}
		return nil, schedcore.NewStatus(schedcore.Unschedulable, MsgDeleted)
	}
	return nil, schedcore.NewStatus(schedcore.Unschedulable)
}

// userClaimsOnly reports whether claims are the store's unallocated
// claims themselves (no node-specific special claim among them).
func (d *stateData) userClaimsOnly(claims []*resourceapi.ResourceClaim) bool {
	i := 0
	for _, c := range d.claims.toAllocate() {
		if i >= len(claims) || claims[i] != c {
			return false
		}
		i++
	}
	return i == len(claims)
}

// nodeSelectorFromAllocation returns the allocation's node selector, nil
// when it is available everywhere.
func nodeSelectorFromAllocation(a *resourceapi.AllocationResult) (*nodeaffinity.NodeSelector, error) {
	if a.NodeSelector == nil {
		return nil, nil
	}
	return nodeaffinity.NewNodeSelector(a.NodeSelector)
}

// optionalNodeOperationsFeature is the node feature devices that skip node
// operations need (DRAOptionalNodeOperations).
const optionalNodeOperationsFeature = "DRAOptionalNodeOperations"

func allocationRequiresOptionalNodeOperations(a *resourceapi.AllocationResult) bool {
	if a == nil {
		return false
	}
	for _, r := range a.Devices.Results {
		if len(r.SkipNodeOperations) > 0 {
			return true
		}
	}
	return false
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// mayHaveExtendedResources reports whether the pod requests an extended
// resource some DeviceClass backs (cheap test before PreFilter's work).
func (pl *DynamicResources) mayHaveExtendedResources(pod *v1.Pod) bool {
	if !pl.features.DRAExtendedResource || !pl.dra.HasExtendedResources() {
		return false
	}
	has := func(cs []v1.Container) bool {
		for i := range cs {
			for name := range cs[i].Resources.Requests {
				if isDRAExtendedResourceName(name) {
					return true
				}
			}
			for name := range cs[i].Resources.Limits {
				if isDRAExtendedResourceName(name) {
					return true
				}
			}
		}
		return false
	}
	return has(pod.Spec.Containers) || has(pod.Spec.InitContainers)
}

var _ schedcore.NodeLocalPlugin = (*DynamicResources)(nil)

// NodeLocal is true for a pod the plugin skips (no claims, no extended
// resources DRA may back): it then rejects no node. A pod with claims is
// not: its copies compete for devices, and a claim can be shared.
func (pl *DynamicResources) NodeLocal(pod *v1.Pod) bool {
	return !pl.enabled || (len(pod.Spec.ResourceClaims) == 0 && !pl.mayHaveExtendedResources(pod))
}
