package tainttoleration

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.ShortfallExplainer = (*TaintToleration)(nil)

// FilterShortfall is ExplainFilter's shortfall, always 1: preemption cannot remove a taint.
func (pl *TaintToleration) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}
