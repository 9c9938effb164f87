package nodeunschedulable

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.ShortfallExplainer = (*NodeUnschedulable)(nil)

// FilterShortfall is ExplainFilter's shortfall, always 1: only uncordoning the node can help.
func (pl *NodeUnschedulable) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}
