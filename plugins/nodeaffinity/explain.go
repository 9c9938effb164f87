package nodeaffinity

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.ShortfallExplainer = (*NodeAffinity)(nil)

// FilterShortfall is ExplainFilter's shortfall, always 1: nothing on the node but its labels can make it match.
func (pl *NodeAffinity) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}
