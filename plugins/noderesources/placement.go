package noderesources

import (
	"context"
	"fmt"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ErrReasonNoPlacementScorer is the Error of ScorePlacement on a plugin
// built with TopologyAwareWorkloadScheduling off (kube's plugin has no
// placement scorer then and is never asked).
var ErrReasonNoPlacementScorer = fmt.Sprintf("%s scores placements only with TopologyAwareWorkloadScheduling", names.NodeResourcesFit)

var _ schedcore.PlacementScorePlugin = (*Fit)(nil)

// newPlacementScorer is kube's placement scorer of NodeResourcesFit:
// MostAllocated over the args' scoringStrategy.resources, whatever the
// strategy of the node scores, built as the node scorer is (the incoming
// pods' requests with the non-zero defaults, nodes' NonZeroRequested).
func newPlacementScorer(resources []configv1.ResourceSpec, node *resourceAllocationScorer) *resourceAllocationScorer {
	return newScorer(mostAllocated, resources, false, node.podOpts)
}

// PlacementScoreExtensions returns nil: placement scores are not
// normalized.
func (pl *Fit) PlacementScoreExtensions() schedcore.PlacementScoreExtensions { return nil }

// ScorePlacement scores how full the placement's nodes would be, taken
// together, with the proposed members (kube's scorePlacement): the
// members' requests summed, then per node of the placement its allocatable
// and allocated amounts added to the sums, and the MostAllocated score of
// the totals. As in kube, the running sum (members' requests plus the
// allocated amounts of the nodes before) is what decides whether a node's
// extended resource counts: a scalar resource counts from the first node
// where that sum is non-zero.
func (pl *Fit) ScorePlacement(_ context.Context, _ *schedcore.CycleState, _ schedcore.PodGroupInfo, a *schedcore.PodGroupAssignments) (int64, *schedcore.Status) {
	r := pl.placementScorer
	if r == nil {
		return 0, schedcore.NewStatus(schedcore.Error, ErrReasonNoPlacementScorer)
	}
	n := len(r.resources)
	requested := make([]int64, n)
	for _, as := range a.ProposedAssignments {
		for i, q := range r.podRequests(as.Pod()) {
			requested[i] += q
		}
	}
	allocatable, allocated := make([]int64, n), make([]int64, n)
	nodeReq, nodeAlloc, nodeCap := make([]int64, n), make([]int64, n), make([]int64, n)
	if a.Placement != nil {
		for _, node := range a.Nodes {
			clear(nodeReq)
			clear(nodeAlloc)
			clear(nodeCap)
			r.nodeVectors(node, requested, nil, nodeReq, nodeAlloc, nodeCap)
			for i := range n {
				allocatable[i] += nodeCap[i]
				allocated[i] += nodeAlloc[i]
				// requested holds the members' requests and the pods
				// already on the placement's nodes.
				requested[i] += nodeAlloc[i]
			}
		}
	}
	return r.scoreVectors(requested, allocated, allocatable), nil
}
