package runtime

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ExplainPostFilter asks the profile's PostFilter plugins, in order, what
// the first one that explains itself would do for pod; nil when none does.
func (f *Framework) ExplainPostFilter(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, statuses *schedcore.NodeToStatus) *schedcore.PostFilterExplanation {
	for _, pl := range f.postFilter {
		if ex, ok := pl.(schedcore.PostFilterExplainer); ok {
			return ex.ExplainPostFilter(ctx, state.Clone(), pod, statuses)
		}
	}
	return nil
}

// explainVerdict is pl's verdict on a node it rejected with s: its
// explanation, with gaps, when gaps is set and pl explains itself, and the
// shortfall. Without gaps only the shortfall is computed, by
// FilterShortfall when pl has it.
func explainVerdict(ctx context.Context, pl schedcore.FilterPlugin, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, s *schedcore.Status, gaps bool) FilterVerdict {
	v := FilterVerdict{Plugin: pl.Name(), Status: s, Shortfall: 1}
	ex, ok := pl.(schedcore.FilterExplainer)
	if !ok || !s.IsRejected() {
		return v
	}
	if sx, ok := ex.(schedcore.ShortfallExplainer); ok && !gaps {
		v.Shortfall = schedcore.UnitShortfall(sx.FilterShortfall(ctx, state, pod, nodeInfo, s))
		return v
	}
	e := ex.ExplainFilter(ctx, state, pod, nodeInfo, s)
	if e != nil {
		v.Shortfall = schedcore.UnitShortfall(e.Shortfall)
	}
	if gaps {
		v.Explanation = e
	}
	return v
}
