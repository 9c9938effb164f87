package explain

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/plugins/defaultpreemption"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// preemption runs DefaultPreemption's evaluation (eligibility, candidates,
// victims, node choice) on the failed cycle's state and statuses, as the
// scheduler's PostFilter would, without evicting anything. Nil when the
// profile has no DefaultPreemption or the evaluation failed internally.
func preemption(ctx context.Context, fw *schedcore.Framework, ex *schedcore.Explanation, pod *v1.Pod) *report.PreemptionOutcome {
	p, ok := fw.Plugin(names.DefaultPreemption)
	if !ok || !fw.HasPostFilterPlugins() {
		return nil
	}
	pl, ok := p.(*defaultpreemption.DefaultPreemption)
	if !ok || ex.State == nil {
		return nil
	}
	c, _, st := pl.Evaluate(ctx, ex.State.Clone(), pod, ex.FitError.Diagnosis.NodeToStatus)
	out := &report.PreemptionOutcome{Victims: []string{}}
	switch {
	case st.IsSuccess():
		out.Node, out.PDBViolations = c.Node, c.NumPDBViolations
		for _, v := range c.Victims {
			out.Victims = append(out.Victims, schedcore.PodName(v))
		}
		out.Message = defaultpreemption.MsgPrefix + defaultpreemption.FoundMessage(c)
	case st.Code() == schedcore.Error:
		return nil
	default:
		out.Message = defaultpreemption.MsgPrefix + st.Message()
	}
	return out
}
