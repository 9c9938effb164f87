package explain

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// DefaultTurnBudget bounds the dry-run CheckTurn runs, in node evaluations
// (scheduling attempts × nodes): e.g. 500 pods ahead on 1,000 nodes, or
// 15,000 on the 33 nodes of examples/cluster.yaml. Measured (docs/explain.md):
// twice this on the Mixed workload (spread, affinities) took 3.7 s more
// than the explanation alone on a loaded 2-core machine, on
// SchedulingBasic no measurable time.
const DefaultTurnBudget = 500_000

// CheckTurn works out whether rep, pod's explanation as listed, agrees with
// what a dry-run of the same cluster says at the pod's turn (RunAtTurn,
// with the same options), and records the answer in rep.AtTurn: the
// verdict and node at its turn, or why it was not checked. The dry-run is
// bounded by budget node evaluations (0 = DefaultTurnBudget); when the pods
// ahead alone would take it over, it is not started. A pod that is bound,
// or an explanation that is not of the state as listed, is left as it is.
// Errors are those of RunAtTurn other than a pod never attempted and the
// budget.
func CheckTurn(ctx context.Context, cl *snapshot.Cluster, pod *v1.Pod, rep *report.Explanation, o Options, budget int64) error {
	if rep.State != StateAsListed || rep.BoundNode != "" {
		return nil
	}
	if budget <= 0 {
		budget = DefaultTurnBudget
	}
	nodes := int64(len(cl.Nodes))
	if least := int64(rep.Ahead+1) * nodes; least > budget {
		rep.AtTurn = &report.TurnCheck{Skipped: fmt.Sprintf("the dry-run up to its turn evaluates at least %d nodes (%d pods ahead and itself × %d nodes), over the check's %d",
			least, rep.Ahead, nodes, budget)}
		return nil
	}
	// The verdict and the node are all that is compared: no gaps, no
	// detail of one node.
	o.Nearest, o.Node, o.Budget = -1, "", budget
	at, err := RunAtTurn(ctx, cl, pod, o)
	var never *NeverAttemptedError
	switch {
	case errors.Is(err, ErrOverBudget):
		rep.AtTurn = &report.TurnCheck{Skipped: fmt.Sprintf("the dry-run up to its turn evaluates more than %d nodes (scheduling attempts × %d nodes), the check's bound", budget, nodes)}
		return nil
	case errors.As(err, &never):
		rep.AtTurn = &report.TurnCheck{Checked: true, NeverAttempted: never.Why, Agrees: rep.PreEnqueue != nil}
		return nil
	case err != nil:
		return err
	}
	c := &report.TurnCheck{Checked: true, Turn: at.Turn}
	if at.Turn.Node == "" {
		c.Message = at.Message
		if at.PreEnqueue != nil {
			c.Message = at.PreEnqueue.Reason
		}
	}
	c.Agrees = (at.Turn.Node == "") == (rep.Selected == "")
	rep.AtTurn = c
	return nil
}
