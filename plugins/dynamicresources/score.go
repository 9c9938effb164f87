package dynamicresources

// Score and NormalizeScore: the prioritized-list (firstAvailable) choices.

import (
	"context"
	"fmt"
	"iter"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/dynamic-resource-allocation/resourceclaim"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Score rates the node by the firstAvailable subrequests its allocation
// picked: 8 - index for each (the earlier the choice, the higher).
func (pl *DynamicResources) Score(_ context.Context, cs *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	if !pl.enabled || !pl.features.DRAPrioritizedList {
		return 0, nil
	}
	state, err := getStateData(cs)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	if state.claims.empty() {
		return 0, nil
	}
	state.mu.Lock()
	allocations, found := state.nodeAllocations[nodeInfo.Name()]
	state.mu.Unlock()
	if !found {
		return 0, nil
	}
	score, err := computeScore(state.claims.all(), allocations)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	return score, nil
}

// UniformScore is 0 when Score returns 0 on every node without looking
// at it: the plugin or prioritized lists disabled, or a pod without
// claims.
func (pl *DynamicResources) UniformScore(cs *schedcore.CycleState, _ *v1.Pod) (int64, bool) {
	if !pl.enabled || !pl.features.DRAPrioritizedList {
		return 0, true
	}
	state, err := getStateData(cs)
	return 0, err == nil && state.claims.empty()
}

func computeScore(claims iter.Seq2[int, *resourceapi.ResourceClaim], allocations nodeAllocation) (int64, error) {
	var score int64
	unallocatedIndex := 0
	for _, claim := range claims {
		allocated := sets.New[string]()
		var allocation *resourceapi.AllocationResult
		if claim.Status.Allocation != nil {
			allocation = claim.Status.Allocation
		} else {
			if unallocatedIndex >= len(allocations.allocationResults) {
				return 0, fmt.Errorf("number of allocations %d is smaller than number of claims needing allocation", len(allocations.allocationResults))
			}
			allocation = &allocations.allocationResults[unallocatedIndex]
			unallocatedIndex++
		}
		for _, r := range allocation.Devices.Results {
			if resourceclaim.IsSubRequestRef(r.Request) {
				allocated.Insert(r.Request)
			}
		}
		for _, req := range claim.Spec.Devices.Requests {
			if req.Exactly != nil {
				continue
			}
			for i, sub := range req.FirstAvailable {
				if allocated.Has(resourceclaim.CreateSubRequestRef(req.Name, sub.Name)) {
					score += int64(resourceapi.FirstAvailableDeviceRequestMaxSize - i)
				}
			}
		}
	}
	return score, nil
}

// NormalizeColumn scales the scores to [0, 100], the best node at 100.
func (pl *DynamicResources) NormalizeColumn(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, scores []int64) *schedcore.Status {
	if !pl.enabled {
		return nil
	}
	var highest int64
	for _, s := range scores {
		highest = max(highest, s)
	}
	if highest == 0 {
		return nil
	}
	for i := range scores {
		scores[i] = schedcore.MaxNodeScore * scores[i] / highest
	}
	return nil
}

var (
	_ schedcore.UniformScorer        = (*DynamicResources)(nil)
	_ schedcore.NormalizeScorePlugin = (*DynamicResources)(nil)
)
