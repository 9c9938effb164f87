package podtopologyspread

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.FilterExplainer = (*PodTopologySpread)(nil)

// ExplainFilter gives, per hard constraint the node violates (the pod's
// own or the configured defaults, as PreFilter counted them), the skew the
// pod would cause: the matching pods of the node's domain, the emptiest
// domain's, and maxSkew; or that the node lacks the topology key. The
// shortfall is the share of the skew over maxSkew.
func (pl *PodTopologySpread) ExplainFilter(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	s, err := getPreFilterState(state)
	if err != nil || len(s.Constraints) == 0 {
		return nil
	}
	node := nodeInfo.Node()
	out := &schedcore.FilterExplanation{}
	for i := range s.Constraints {
		c := &s.Constraints[i]
		dom := helper.DomainWord(c.TopologyKey)
		tv, ok := node.Labels[c.TopologyKey]
		if !ok {
			out.Gaps = append(out.Gaps, schedcore.Gap{Text: fmt.Sprintf("node has no %s label (topology spread constraint %d's topologyKey); %s", c.TopologyKey, i+1, ErrReasonNodeLabelNotMatch)})
			out.Shortfall = 1
			continue
		}
		minMatchNum := s.minMatchNum(i, c.MinDomains)
		matchNum := s.TpValueToMatchNum[i][tv]
		if skew := matchNum + s.selfMatchNum[i] - minMatchNum; skew > int(c.MaxSkew) {
			out.Gaps = append(out.Gaps, schedcore.Gap{Text: fmt.Sprintf("%s skew would be %d > maxSkew %d (%s %s has %d matching pods, the emptiest %d)",
				dom, skew, c.MaxSkew, dom, tv, matchNum, minMatchNum)})
			out.Shortfall = max(out.Shortfall, schedcore.ShortfallOf(int64(skew-int(c.MaxSkew)), int64(skew)))
		}
	}
	if len(out.Gaps) == 0 {
		return nil
	}
	return out
}
