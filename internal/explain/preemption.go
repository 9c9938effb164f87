package explain

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// preemption asks the profile's PostFilter (DefaultPreemption) what it
// would do on the failed cycle's state and statuses, as the scheduler's
// PostFilter would, without evicting anything. Nil when no PostFilter
// explains itself or the evaluation failed internally.
func preemption(ctx context.Context, fw *schedruntime.Framework, ex *schedruntime.Explanation, pod *v1.Pod) *report.PreemptionOutcome {
	if ex.State == nil {
		return nil
	}
	pf := fw.ExplainPostFilter(ctx, ex.State, pod, ex.FitError.Diagnosis.NodeToStatus)
	if pf == nil {
		return nil
	}
	out := &report.PreemptionOutcome{Node: pf.Node, PDBViolations: pf.PDBViolations, Message: pf.Message, Victims: make([]string, len(pf.Victims))}
	for i, v := range pf.Victims {
		out.Victims[i] = schedcore.PodName(v)
	}
	return out
}
