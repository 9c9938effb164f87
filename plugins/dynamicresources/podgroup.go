package dynamicresources

import (
	"context"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// MsgPodGroupDeallocated is PodGroupPostFilter's reason, kube-scheduler
// v1.37's word for word, given even when the group has no claim.
const MsgPodGroupDeallocated = "deallocation and deletion of ResourceClaims completed"

var _ schedcore.PodGroupPostFilterPlugin = (*DynamicResources)(nil)

// PodGroupPostFilter runs when a pod-group cycle found no place for the
// group (kube's DynamicResources.PodGroupPostFilter): Unschedulable with
// no reason when the plugin is disabled or, with
// TopologyAwareWorkloadScheduling, for a group with scheduling
// constraints; else Unschedulable "deallocation and deletion of
// ResourceClaims completed", so that DefaultPreemption's reason follows
// it in the group's message. kube first deallocates the members' claims
// allocated in an earlier cycle and unavailable on some node (as its
// PostFilter does for a pod); that part is not modelled here (the members'
// PreFilter states are not gathered in the pod-group cycle state).
func (pl *DynamicResources) PodGroupPostFilter(_ context.Context, _ *schedcore.CycleState, g schedcore.PodGroupInfo, _ schedcore.PodGroupSchedulingFunc) (*schedcore.PodGroupPostFilterResult, *schedcore.Status) {
	if !pl.enabled {
		return nil, schedcore.NewStatus(schedcore.Unschedulable)
	}
	if pl.features.TopologyAwareWorkloadScheduling {
		if pg := g.PodGroup(); pg != nil && pg.Spec.SchedulingConstraints != nil {
			return nil, schedcore.NewStatus(schedcore.Unschedulable)
		}
	}
	return nil, schedcore.NewStatus(schedcore.Unschedulable, MsgPodGroupDeallocated)
}
