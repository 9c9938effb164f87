package explain

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
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
	return checkTurn(rep, len(cl.Nodes), budget, func(budget int64) (*report.Explanation, error) {
		// The verdict and the node are all that is compared: no gaps, no
		// detail of one node.
		o.Nearest, o.Node, o.Budget = -1, "", budget
		return RunAtTurn(ctx, cl, pod, o)
	})
}

// CheckTurn is CheckTurn of rep, s's explanation of pod, with the dry-run
// run on s's engine when pod is one of the state's pending pods as listed:
// the state is not loaded again (at 100,000 nodes the load is most of an
// explanation's time), and the answer is CheckTurn's. The dry-run changes
// the engine's state, so s is then spent: Explain and CheckTurn return
// ErrStateSpent. For any other pod (bound, from a file, or not the
// listed pod's object) CheckTurn loads the cluster NewState was given
// again, and s stays as it was. progress, when set, is the dry-run's
// Options.Progress.
func (s *State) CheckTurn(ctx context.Context, pod *v1.Pod, rep *report.Explanation, budget int64, progress func(placed, failing, total int)) error {
	o := s.o
	o.Progress = progress
	if s.spent {
		return ErrStateSpent
	}
	listed := s.listedPending(pod)
	if listed == nil {
		if s.listed == nil {
			return fmt.Errorf("checking the turn of pod %s: the state has no cluster of its own", pod.Namespace+"/"+pod.Name)
		}
		return CheckTurn(ctx, s.listed, pod, rep, o, budget)
	}
	return checkTurn(rep, len(s.cluster.Nodes), budget, func(budget int64) (*report.Explanation, error) {
		o.Nearest, o.Node, o.Budget = -1, "", budget
		// As RunAtTurn's: the pod, pending, in the cluster's place of the
		// listed one (the queue order does not depend on the list's, but
		// on the pod's creation time, which RunAtTurn may give it).
		target := asPending(listed)
		target.Status.Phase = v1.PodPending
		stampNew(target, s.cluster.Pods)
		work := *s.cluster
		work.Pods = slices.Clone(s.cluster.Pods)
		for i, p := range work.Pods {
			if p == listed {
				work.Pods[i] = target
			}
		}
		pending := slices.Clone(s.pending)
		for i, p := range pending {
			if p == listed {
				pending[i] = target
			}
		}
		engine.SortQueueOrder(pending)
		s.spent = true
		return atTurn(ctx, target, "", len(work.Nodes), o, func(obs engine.Observer) (*engine.Offline, []*v1.Pod, error) {
			c, err := engine.OfflineFrom(ctx, s.eng, &work, obs)
			return c, pending, err
		})
	})
}

// listedPending returns the state's copy of pod when pod is the object
// of the cluster NewState was given for a pending pod of the state's
// profiles, nil otherwise.
func (s *State) listedPending(pod *v1.Pod) *v1.Pod {
	if s.listed == nil || s.turn != nil || s.o.Source == SourceFile || pod.Spec.NodeName != "" {
		return nil
	}
	i := slices.Index(s.listed.Pods, pod)
	if i < 0 || i >= len(s.cluster.Pods) {
		return nil
	}
	if p := s.cluster.Pods[i]; slices.Contains(s.pending, p) {
		return p
	}
	return nil
}

// checkTurn is CheckTurn with run, the dry-run up to the pod's turn within
// budget, in a cluster of nodes nodes.
func checkTurn(rep *report.Explanation, nodes int, budget int64, run func(budget int64) (*report.Explanation, error)) error {
	if rep.State != StateAsListed || rep.BoundNode != "" {
		return nil
	}
	if budget <= 0 {
		budget = DefaultTurnBudget
	}
	n := int64(nodes)
	if least := int64(rep.Ahead+1) * n; least > budget {
		rep.AtTurn = &report.TurnCheck{Skipped: fmt.Sprintf("the dry-run up to its turn evaluates at least %d nodes (%d pods ahead and itself × %d nodes), over the check's %d",
			least, rep.Ahead, n, budget)}
		return nil
	}
	at, err := run(budget)
	var never *NeverAttemptedError
	switch {
	case errors.Is(err, ErrOverBudget):
		rep.AtTurn = &report.TurnCheck{Skipped: fmt.Sprintf("the dry-run up to its turn evaluates more than %d nodes (scheduling attempts × %d nodes), the check's bound", budget, n)}
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
