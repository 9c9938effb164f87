package podtopologyspread

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.ShortfallExplainer = (*PodTopologySpread)(nil)

// ExplainFilter gives, per hard constraint the node violates (the pod's
// own or the configured defaults, as PreFilter counted them), the skew the
// pod would cause: the matching pods of the node's domain, the emptiest
// domain's, and maxSkew; or that the node lacks the topology key. The
// shortfall is the share of the skew over maxSkew.
func (pl *PodTopologySpread) ExplainFilter(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	s, ok := schedcore.Lookup[*preFilterState](state, preFilterStateKey)
	if !ok {
		return nil
	}
	out := &schedcore.FilterExplanation{}
	s.violations(nodeInfo, func(v violation) {
		c := &s.Constraints[v.constraint]
		if !v.labeled {
			out.Gaps = append(out.Gaps, schedcore.Gap{Text: fmt.Sprintf("node has no %s label (topology spread constraint %d's topologyKey); %s", c.TopologyKey, v.constraint+1, ErrReasonNodeLabelNotMatch)})
		} else {
			word := helper.DomainWord(c.TopologyKey)
			out.Gaps = append(out.Gaps, schedcore.Gap{Text: fmt.Sprintf("%s skew would be %d > maxSkew %d (%s %s has %d matching pods, the emptiest %d)",
				word, v.skew, c.MaxSkew, word, nodeInfo.Node().Labels[c.TopologyKey], v.matchNum, v.minMatchNum)})
		}
		out.Shortfall = max(out.Shortfall, v.shortfall(c))
	})
	if len(out.Gaps) == 0 {
		return nil
	}
	return out
}

// FilterShortfall is ExplainFilter's shortfall without its texts.
func (pl *PodTopologySpread) FilterShortfall(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) float64 {
	s, ok := schedcore.Lookup[*preFilterState](state, preFilterStateKey)
	if !ok {
		return 1
	}
	var short float64
	s.violations(nodeInfo, func(v violation) { short = max(short, v.shortfall(&s.Constraints[v.constraint])) })
	if short == 0 {
		return 1
	}
	return short
}

// shortfall is the share of the skew over c's maxSkew; 1 for a node
// without the topology key.
func (v *violation) shortfall(c *topologySpreadConstraint) float64 {
	if !v.labeled {
		return 1
	}
	return schedcore.ShortfallOf(int64(v.skew-int(c.MaxSkew)), int64(v.skew))
}

// violations calls fn, in constraint order, for each constraint the node
// violates, from the counts PreFilter made and the node's domains as
// Filter reads them. The violations are passed by value: FilterShortfall
// runs on every rejected node of an explanation, and a violation by
// pointer (to a func value) was allocated each.
func (s *preFilterState) violations(nodeInfo *schedcore.NodeInfo, fn func(violation)) {
	var buf [4]schedcore.Domain
	doms, _ := s.counts.NodeDomains(nodeInfo, buf[:0])
	for i := range s.Constraints {
		if v, bad := s.check(i, doms[i]); bad {
			fn(v)
		}
	}
}
