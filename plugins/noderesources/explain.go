package noderesources

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.ShortfallExplainer = (*Fit)(nil)

// FilterShortfall is ExplainFilter's shortfall without its texts: the
// largest share of a request the node lacks.
func (pl *Fit) FilterShortfall(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) float64 {
	s, ok := schedcore.Lookup[*preFilterState](state, preFilterStateKey)
	if !ok {
		return 1
	}
	var short float64
	for _, r := range fitsRequest(s, nodeInfo) {
		short = max(short, r.shortfall())
	}
	if short == 0 {
		return 1
	}
	return short
}

// shortfall is the share of the request the node lacks; 1 when the
// request exceeds the allocatable (no room freed on the node can help).
func (r *InsufficientResource) shortfall() float64 {
	if r.Unresolvable {
		return 1
	}
	return schedcore.ShortfallOf(r.Missing(), r.Requested)
}
