package explain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

var (
	// ErrNeverAttempted is returned by RunAtTurn when the dry-run never
	// gives the pod a scheduling cycle (scheduling gates, a gang short of
	// members).
	ErrNeverAttempted = errors.New("never attempted in the dry-run")
	// ErrOverBudget is returned by RunAtTurn when its dry-run would
	// evaluate more nodes than Options.Budget allows.
	ErrOverBudget = errors.New("the dry-run up to its turn is over the budget")
)

// NeverAttemptedError is RunAtTurn's ErrNeverAttempted for one pod, with
// why the dry-run gave it no cycle.
type NeverAttemptedError struct{ Pod, Why string }

func (e *NeverAttemptedError) Error() string {
	return fmt.Sprintf("pod %s: %v (%s); explain it without --at-turn", e.Pod, ErrNeverAttempted, e.Why)
}

// Unwrap makes errors.Is(err, ErrNeverAttempted) true.
func (e *NeverAttemptedError) Unwrap() error { return ErrNeverAttempted }

// RunAtTurn explains pod at its turn in a dry-run of the cluster: the
// pending pods are queued and scheduled as `kubectl sched dryrun` does
// (each placement committed, preemption carried out in memory), and the pod
// is explained on the state its last scheduling attempt saw, the attempt
// whose outcome the dry-run reports. A bound pod, or a pod from a file,
// joins the pending pods (taken off its node; it replaces the cluster's pod
// of the same name). The cluster is not modified. With o.Budget set, the
// dry-run stops with ErrOverBudget before the attempt that would take its
// node evaluations (attempts × nodes) over the budget.
func RunAtTurn(ctx context.Context, cl *snapshot.Cluster, pod *v1.Pod, o Options) (*report.Explanation, error) {
	if len(cl.Nodes) == 0 {
		return nil, ErrNoNodes
	}
	if o.Node != "" && !slices.ContainsFunc(cl.Nodes, func(n *v1.Node) bool { return n.Name == o.Node }) {
		return nil, fmt.Errorf("--node: node %q is not in the cluster: %w", o.Node, ErrUnknownNode)
	}
	target := asPending(pod)
	target.Status.Phase = v1.PodPending
	work := *cl
	work.Pods = make([]*v1.Pod, 0, len(cl.Pods)+1)
	for _, p := range cl.Pods {
		if p.Namespace == target.Namespace && p.Name == target.Name {
			if target.UID == "" {
				target.UID = p.UID
			}
			continue
		}
		work.Pods = append(work.Pods, p)
	}
	stampNew(target, work.Pods)
	if o.Live && o.Source == SourceFile {
		// Live, the cluster's template claims are as listed (a pod whose
		// claim the controller has not made yet is held, as the queue of
		// kubectl sched run holds it); a new pod from a file gets its
		// claims made as the controller would, as in Explain.
		if target.UID == "" {
			target.UID = engine.SnapshotUID(target.Namespace, target.Name)
		}
		target, work.DRA.ResourceClaims = engine.TemplateClaimsIn(target, work.DRA)
	}
	work.Pods = append(work.Pods, target)
	return atTurn(ctx, target, pod.Spec.NodeName, len(cl.Nodes), o, func(obs engine.Observer) (*engine.Offline, []*v1.Pod, error) {
		return engine.NewOffline(ctx, &work, engine.Options{
			Config: o.Config, Registry: o.Registry, Features: o.Features, Seed: o.Seed, UseSeed: o.UseSeed,
			ClaimsAsListed: o.Live,
		}, obs)
	})
}

// atTurn is RunAtTurn of target, bound to node bound before (if any), in a
// cluster of nodes nodes, with the offline cluster build makes for the
// observer it is given: the cluster with target pending, and its pending
// pods in queue order.
func atTurn(ctx context.Context, target *v1.Pod, bound string, nodes int, o Options, build func(engine.Observer) (*engine.Offline, []*v1.Pod, error)) (*report.Explanation, error) {
	isTarget := func(p *v1.Pod) bool { return p.Namespace == target.Namespace && p.Name == target.Name }

	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	failing := map[string]bool{}
	total := 0
	var (
		c       *engine.Offline
		rep     *report.Explanation
		expErr  error
		evicted int
		turn    *report.ExplainTurn
		// evaluated counts the nodes the dry-run's attempts evaluate.
		evaluated  int64
		overBudget bool
	)
	progress := func() {
		if o.Progress != nil {
			o.Progress(c.Placements(), len(failing), total)
		}
	}
	obs := engine.Observer{
		Attempting: func(ctx context.Context, p *v1.Pod, attempt int) {
			if evaluated += int64(nodes); o.Budget > 0 && evaluated > o.Budget && !overBudget {
				overBudget = true
				stop()
				return
			}
			if overBudget || !isTarget(p) {
				return
			}
			turn = &report.ExplainTurn{Attempt: attempt, PlacedBefore: c.Placements(), EvictedBefore: evicted}
			s := &State{o: o, cluster: &snapshot.Cluster{}, eng: c.Engine, turn: turn}
			rep, expErr = s.Explain(ctx, p)
		},
		Placed: func(p *v1.Pod, node string, _ int, _ schedruntime.ScheduleResult) {
			if isTarget(p) && turn != nil {
				turn.Node = node
				// Nothing after its placement changes the answer.
				stop()
			}
			delete(failing, schedcore.PodKey(p))
			progress()
		},
		Failed: func(p *v1.Pod, _ engine.Failure) {
			failing[schedcore.PodKey(p)] = true
			progress()
		},
		Evicted:      func(*v1.Pod, string, *v1.Pod) { evicted++ },
		GroupEvicted: func(*v1.Pod, *schedulingv1beta1.PodGroup) { evicted++ },
	}
	c, pending, err := build(obs)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if c.Framework(target) == nil {
		return nil, UnknownProfile(target, c.Profiles)
	}
	total = len(pending)
	c.Submit(pending...)
	err = c.Run(runCtx)
	if overBudget && ctx.Err() == nil {
		return nil, fmt.Errorf("pod %s: %w of %d node evaluations (scheduling attempts × %d nodes)", schedcore.PodName(target), ErrOverBudget, o.Budget, nodes)
	}
	if err != nil && (turn == nil || turn.Node == "" || ctx.Err() != nil) {
		return nil, err
	}
	if expErr != nil {
		return nil, expErr
	}
	if rep == nil {
		why := "it waits in the queue"
		if cur, ok := c.Pod(target.Namespace, target.Name); ok {
			if len(cur.Spec.SchedulingGates) > 0 {
				why = "it has scheduling gates"
			} else if msg, plugin := c.GatedBy(ctx, cur); plugin != "" {
				why = plugin + ": " + msg
			}
		}
		return nil, &NeverAttemptedError{Pod: schedcore.PodName(target), Why: why}
	}
	if turn.Node != "" && rep.Selected != turn.Node && slices.Contains(rep.TiedBest, turn.Node) {
		// --seed: the dry-run's tie-break drew another of the tied nodes
		// than a fresh draw does.
		rep.Selected = turn.Node
	}
	setBound(rep, bound)
	return rep, nil
}

// stampNew gives target, when it has no creation time (a pod from a file,
// or one of a dump without creation times), one a second after the last of
// the others': a new pod queues behind the pods of its priority (the
// pending pods are queued by creation time).
func stampNew(target *v1.Pod, others []*v1.Pod) {
	if !target.CreationTimestamp.IsZero() {
		return
	}
	var last metav1.Time
	for _, p := range others {
		if p.Namespace == target.Namespace && p.Name == target.Name {
			continue
		}
		if last.Before(&p.CreationTimestamp) {
			last = p.CreationTimestamp
		}
	}
	target.CreationTimestamp = metav1.NewTime(last.Add(time.Second))
}
