package report

import (
	"fmt"
	"strings"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// GapsOf frames what stands in the way on a rejected node: the pods
// nominated to it that the filters counted, then each failing plugin's
// own explanation (schedcore.FilterExplainer, from the cycle state its
// Filter read), in filter order. A plugin that does not explain itself is
// represented by its reason; one whose PreFilterResult left the node out,
// by that fact.
func GapsOf(ne *schedruntime.NodeExplanation) []Gap {
	if ne == nil {
		return nil
	}
	var out []Gap
	if len(ne.Nominated) > 0 {
		names := make([]string, len(ne.Nominated))
		for i, pi := range ne.Nominated {
			names[i] = fmt.Sprintf("%s (priority %d)", schedcore.PodName(pi.Pod), schedcore.PodPriority(pi.Pod))
		}
		out = append(out, Gap{Gap: "preemption nominated this node for " + strings.Join(names, ", ") + ": the filters count them as running here"})
	}
	for _, v := range ne.Failures {
		out = append(out, verdictGaps(v, strings.Join(v.Status.Reasons(), "; "))...)
	}
	for _, v := range ne.LeftOutBy {
		out = append(out, verdictGaps(v, fmt.Sprintf("node is not among the nodes %s's PreFilter allows", v.Plugin))...)
	}
	if len(ne.Failures) == 0 && len(ne.LeftOutBy) == 0 && ne.Status != nil {
		out = append(out, Gap{Plugin: ne.Status.Plugin(), Gap: ne.Status.Message()})
	}
	return out
}

// verdictGaps renders one plugin's verdict: its explanation's gaps, or
// fallback when it has none.
func verdictGaps(v schedruntime.FilterVerdict, fallback string) []Gap {
	if v.Explanation == nil || len(v.Explanation.Gaps) == 0 {
		return []Gap{{Plugin: v.Plugin, Gap: fallback}}
	}
	out := make([]Gap, len(v.Explanation.Gaps))
	for i, g := range v.Explanation.Gaps {
		out[i] = Gap{Plugin: v.Plugin, Gap: g.Text, Details: g.Details}
	}
	return out
}
