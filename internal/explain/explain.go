// Package explain is the diagnosis driver of the engine: it loads cluster
// state (a snapshot file or a live listing, both as a snapshot.Cluster) into
// the cache, runs one scheduling cycle of one pod through the real framework
// with schedruntime.Explain (no Binder: nothing is assumed or bound), and turns
// the result into report.Explanation, adding what kube-scheduler does not
// say: every rejecting filter per node, every plugin's raw, normalized and
// weighted score, and, for the nodes nearest to fitting, the concrete gap.
package explain

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain/nearest"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// Where the explained pod came from (report.Explanation.Source).
const (
	SourceSnapshot = "snapshot"
	SourceCluster  = "cluster"
	SourceFile     = "file"
)

// Which cluster state an explanation is of (report.Explanation.State).
const (
	// StateAsListed: the dump or the listing as it is; pending pods are
	// not placed.
	StateAsListed = "as-listed"
	// StateAtTurn: the state at the pod's last attempt in a dry-run
	// (RunAtTurn).
	StateAtTurn = "at-turn"
)

// DefaultNearest is how many rejected nodes get their gaps computed.
const DefaultNearest = 3

var (
	// ErrPodNotFound is returned when the named pod is not in the state.
	ErrPodNotFound = errors.New("pod not found")
	// ErrUnknownProfile is returned when the pod's schedulerName is not one
	// of the configuration's profiles.
	ErrUnknownProfile = errors.New("no such scheduler profile")
	// ErrNoNodes is returned for a cluster without nodes.
	ErrNoNodes = engine.ErrNoNodes
	// ErrUnknownNode is returned when --node names no node of the cluster.
	ErrUnknownNode = errors.New("no such node")
	// ErrStateSpent is returned by a State whose engine a turn check's
	// dry-run has changed (State.CheckTurn).
	ErrStateSpent = errors.New("the state was spent on a dry-run")
)

// NotFoundError is kube's NotFound wording with the namespace:
// `pods "x" not found in namespace "y"`.
type NotFoundError struct{ Namespace, Name string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("pods %q not found in namespace %q", e.Name, e.Namespace)
}

// Unwrap makes errors.Is(err, ErrPodNotFound) true.
func (e *NotFoundError) Unwrap() error { return ErrPodNotFound }

// FindPod returns the cluster's pod namespace/name.
func FindPod(cl *snapshot.Cluster, namespace, name string) (*v1.Pod, error) {
	for _, p := range cl.Pods {
		if p.Namespace == namespace && p.Name == name {
			return p, nil
		}
	}
	return nil, &NotFoundError{Namespace: namespace, Name: name}
}

// Options tune an explanation.
type Options struct {
	// Config is a defaulted, validated KubeSchedulerConfiguration.
	Config *configv1.KubeSchedulerConfiguration
	// Registry holds the plugins (in-tree plus extra).
	Registry schedcore.Registry
	// Features are the feature gates (zero value: defaults).
	Features schedcore.Features
	// Seed, when UseSeed is set, breaks ties between equal best totals
	// pseudo-randomly, as the dry-run's --seed; otherwise the lowest name.
	Seed    int64
	UseSeed bool
	// Nearest is how many rejected nodes get gaps (0 = DefaultNearest,
	// negative = none).
	Nearest int
	// Node, when set, restricts the report's nodes to this one, with its
	// gaps and free resources.
	Node string
	// Source is recorded in the report (SourceSnapshot when empty).
	Source string
	// Live: the state is a live cluster's listing. Its pods' template
	// claims are as the cluster has them: a pod of it whose claim the
	// resourceclaim controller has not made yet is held by PreEnqueue, as
	// the scheduler's queue holds it. A dump's missing claims are made as
	// the controller would (as the dry-run does); so are, either way, the
	// claims of a pod from a file (SourceFile), a new pod the controller
	// has not seen.
	Live bool
	// Progress, when set, is called by RunAtTurn after every attempt of
	// its dry-run with the pods placed so far, the pods whose last attempt
	// failed, and the pending pods in all.
	Progress func(placed, failing, total int)
	// noPrepare leaves the plugins' indexes to the first explanation
	// (tests compare).
	noPrepare bool
	// OwnPods hands the cluster's pods to NewState: those without a UID
	// get the stable one the dry-run gives them in place, rather than in
	// a copy each (the caller's pods are otherwise left as they are). The
	// CLI, which decoded the dump for this one use, sets it: a generated
	// dump's 15,000 pods were 18 MB of copies, kept for as long as the
	// state, and the load's first collection came during the explanations
	// that followed.
	OwnPods bool
	// Budget, when positive, bounds RunAtTurn's dry-run: at most this many
	// node evaluations (scheduling attempts × nodes), else ErrOverBudget.
	Budget int64
}

// State is cluster state loaded into the engine once: the cache, its
// snapshot and the profiles. Several pods can be explained against it (the
// per-pod cost is one scheduling cycle with full diagnosis).
type State struct {
	o       Options
	cluster *snapshot.Cluster
	eng     *engine.Engine
	// pending are the cluster's pending pods in queue order (what a
	// dry-run would schedule); turn, when set, is the dry-run attempt
	// being explained (explainAtTurn).
	pending []*v1.Pod
	turn    *report.ExplainTurn
	// names keeps the snapshot's nodes in name order between explanations.
	names schedruntime.NameOrder
	// index finds cluster's pods by namespace/name and by UID, when
	// the State owns cluster's pod list (NewState), which then never
	// changes; nil otherwise (the pods are searched).
	index *podIndex
	// listed is the cluster NewState was given (cluster's pods are its
	// pods in the same places, or copies); spent is set once a turn
	// check's dry-run has changed the engine (CheckTurn).
	listed *snapshot.Cluster
	spent  bool
}

// NewState loads the cluster into a fresh engine. The cluster's objects
// are shared, not copied (the engine does not modify them); pods without a
// UID are copied to get the stable one the dry-run gives them, or get it in
// place with o.OwnPods. Preemption
// is evaluated, never carried out (no evictor), and the pods the cluster's
// pending pods are nominated to count on their nodes.
func NewState(ctx context.Context, cl *snapshot.Cluster, o Options) (*State, error) {
	if len(cl.Nodes) == 0 {
		return nil, ErrNoNodes
	}
	work := *cl
	work.Pods = make([]*v1.Pod, len(cl.Pods))
	for i, p := range cl.Pods {
		if p.UID == "" {
			if !o.OwnPods {
				cp := *p
				p = &cp
			}
			p.UID = engine.SnapshotUID(p.Namespace, p.Name)
		}
		work.Pods[i] = p
	}
	nom := &engine.ListedNominator{}
	eng, err := engine.New(ctx, engine.Options{Config: o.Config, Registry: o.Registry, Features: o.Features, Seed: o.Seed, UseSeed: o.UseSeed, ClaimsAsListed: o.Live},
		engine.Driver{Nominator: nom, Preemption: schedcore.PreemptionHooks{PDBs: engine.PDBsOf(cl.PDBs)}})
	if err != nil {
		return nil, err
	}
	nom.Fill(work.Pods, eng.Profiles)
	pending, err := eng.Load(&work)
	if err != nil {
		return nil, err
	}
	// The indexes the plugins build on first use are built now, as part
	// of loading: a user explains one pod, and the first explanation
	// should cost what the later ones do.
	if !o.noPrepare {
		eng.Prepare(ctx)
	}
	return &State{o: o, cluster: &work, eng: eng, pending: pending, index: newPodIndex(work.Pods), listed: cl}, nil
}

// Run explains one scheduling cycle of pod against the cluster: NewState,
// then State.Explain.
func Run(ctx context.Context, cl *snapshot.Cluster, pod *v1.Pod, o Options) (*report.Explanation, error) {
	s, err := NewState(ctx, cl, o)
	if err != nil {
		return nil, err
	}
	return s.Explain(ctx, pod)
}

// Explain runs one scheduling cycle of pod with full diagnosis. A pod of
// the state with the same namespace/name (or UID) is taken off its node for
// the cycle, so a bound pod is explained as if it were pending and a
// hypothetical pod from a file replaces the one it names; the state is
// restored afterwards. The pod is not modified.
func (s *State) Explain(ctx context.Context, pod *v1.Pod) (*report.Explanation, error) {
	if s.spent {
		return nil, ErrStateSpent
	}
	o := s.o
	if o.Source == "" {
		o.Source = SourceSnapshot
	}
	bound, nominated := pod.Spec.NodeName, pod.Status.NominatedNodeName
	target := asPending(pod)
	// Explain evaluates every node; kube would try the nominated node first
	// and stop there if it fits.
	target.Status.NominatedNodeName = ""

	for _, p := range s.samePod(target.Namespace, target.Name, pod.UID) {
		if target.UID == "" {
			target.UID = p.UID
		}
		if len(target.Status.ResourceClaimStatuses) == 0 {
			// The template claims the state created for it (as the
			// resourceclaim controller would).
			target.Status.ResourceClaimStatuses = p.Status.ResourceClaimStatuses
		}
		if _, inCache := s.eng.Cache.GetPod(p); inCache {
			s.eng.Cache.RemovePod(p)
			defer func(p *v1.Pod) {
				_ = s.eng.Cache.AddPod(p)
				s.eng.Cache.UpdateSnapshot(s.eng.Snapshot)
			}(p)
		}
	}
	if target.UID == "" {
		target.UID = engine.SnapshotUID(target.Namespace, target.Name)
	}
	if o.Source == SourceFile {
		// A new pod: its template claims are made as the resourceclaim
		// controller would (as dryrun -f and capacity -f do), for this
		// explanation only.
		var claims []*resourceapi.ResourceClaim
		target, claims = engine.TemplateClaimsFor(target, s.cluster.DRA.ResourceClaimTemplates, s.eng.DRA)
		for _, c := range claims {
			s.eng.DRA.AddClaim(c)
			defer s.eng.DRA.DeleteClaim(c)
		}
	}
	s.eng.Cache.UpdateSnapshot(s.eng.Snapshot)

	fw := s.eng.Framework(target)
	if fw == nil {
		return nil, UnknownProfile(target, s.eng.Profiles)
	}
	snap := s.eng.Snapshot
	if o.Node != "" {
		if _, err := snap.Get(o.Node); err != nil {
			return nil, fmt.Errorf("--node: node %q is not in the cluster: %w", o.Node, ErrUnknownNode)
		}
	}

	// Every rejected node is diagnosed for its shortfall, which ranks the
	// nearest; only the nodes shown get their gaps (ex.Detail below).
	ex := schedruntime.ExplainShortfalls(ctx, fw, snap, target, s.eng.Options.TieBreak(), &s.names)
	if ex.Err != nil {
		return nil, fmt.Errorf("explaining pod %s: %w", schedcore.PodName(target), ex.Err)
	}
	// Everything the report keeps is copied out of ex.
	defer ex.Release()
	rep, order := report.ExplanationOf(ex)
	rep.Source, rep.NominatedNode = o.Source, nominated
	setBound(rep, bound)
	if s.turn != nil {
		rep.State, rep.Turn = StateAtTurn, s.turn
	} else {
		rep.State, rep.Ahead = StateAsListed, s.ahead(ctx, target, bound != "")
	}
	if ex.FitError != nil && ex.State != nil {
		// What the profile's PostFilter (DefaultPreemption) would do on the
		// failed cycle's state, without evicting anything. It sees the pod
		// as the scheduler's cycle does, with its nominated node:
		// preemption's eligibility reads it.
		preemptor := target
		if nominated != "" {
			cp := *target
			cp.Status.NominatedNodeName = nominated
			preemptor = &cp
		}
		rep.Preemption = report.PreemptionOf(fw.ExplainPostFilter(ctx, ex.State, preemptor, ex.FitError.Diagnosis.NodeToStatus))
	}
	if nominated != "" {
		// kube-scheduler tries the nominated node first and takes it,
		// without scoring, when it passes the filters.
		for _, n := range rep.Nodes {
			if n.Node == nominated && n.Feasible {
				rep.Selected = nominated
			}
		}
	}

	count := o.Nearest
	if count == 0 {
		count = DefaultNearest
	}
	rep.Nearest = []string{}
	if count > 0 && ex.PreFilter.IsSuccess() && ex.PreEnqueue == nil {
		// A pod rejected at PreFilter fails every node alike, for the
		// PreFilter reason the summary gives: no node is nearer.
		rep.Nearest = nearest.Nodes(rep.Nodes, order, ex, snap, count)
	}
	for _, i := range shown(rep.Nodes, o.Node, rep.Nearest) {
		n := &rep.Nodes[i]
		ni, _ := snap.Get(n.Node)
		// The node's own detail (the others share an empty one).
		n.NodeDetail = &report.NodeDetail{Free: nearest.Free(ni, target, s.eng.Options.Features)}
		if !n.Feasible {
			ex.Detail(ctx, int(order[i]))
			n.Gaps = report.GapsOf(&ex.Nodes[order[i]])
		}
	}
	if o.Node != "" {
		for _, n := range rep.Nodes {
			if n.Node == o.Node {
				rep.Nodes = []report.ExplainNode{n}
				break
			}
		}
	}
	return rep, nil
}

// ahead counts the pending pods a dry-run would schedule before the
// target: those before it in queue order when it is pending itself, none
// for a bound pod, and for a pod from a file (queued last) every pending
// pod of equal or higher priority. A pod its profile's PreEnqueue plugins
// hold (scheduling gates; live, a template claim the controller has not
// made yet) never reaches a cycle and is not counted: the same pass as the
// scheduler's queue runs decides it.
func (s *State) ahead(ctx context.Context, target *v1.Pod, bound bool) int {
	if bound {
		return 0
	}
	prio := schedcore.PodPriority(target)
	n := 0
	for _, p := range s.pending {
		if p.Namespace == target.Namespace && p.Name == target.Name {
			return n
		}
		if schedcore.PodPriority(p) < prio {
			continue
		}
		if fw := s.eng.Framework(p); fw == nil || !fw.RunPreEnqueuePluginsFrom(ctx, p, "", nil).IsSuccess() {
			continue
		}
		n++
	}
	return n
}

// shown returns the places in nodes (in name order) of the node named
// node, if any, and of the nearest nodes, in name order, each once: the
// nodes whose free resources and gaps the report shows.
func shown(nodes []report.ExplainNode, node string, nearest []string) []int {
	var out []int
	for k, name := range append([]string{node}, nearest...) {
		if k == 0 && name == "" {
			continue
		}
		i, found := slices.BinarySearchFunc(nodes, name, func(n report.ExplainNode, name string) int { return strings.Compare(n.Node, name) })
		if found {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// asPending returns a copy of pod off its node, in the default namespace
// and of the default scheduler when it names none: the pod a cycle is run
// for.
func asPending(pod *v1.Pod) *v1.Pod {
	target := pod.DeepCopy()
	if target.Namespace == "" {
		target.Namespace = v1.NamespaceDefault
	}
	if target.Spec.SchedulerName == "" {
		target.Spec.SchedulerName = v1.DefaultSchedulerName
	}
	target.Spec.NodeName = ""
	return target
}

// UnknownProfile is ErrUnknownProfile for pod, naming its schedulerName and
// the configuration's profiles (explain pod's and explain podgroup's error).
func UnknownProfile(pod *v1.Pod, profiles *engine.Profiles) error {
	return fmt.Errorf("pod %s has schedulerName %q, which is not a profile of the configuration (profiles: %s): %w",
		schedcore.PodName(pod), pod.Spec.SchedulerName, strings.Join(profiles.Order, ", "), ErrUnknownProfile)
}

// setBound records in rep the node the pod is bound to, if any, with its
// rank and total there.
func setBound(rep *report.Explanation, node string) {
	rep.BoundNode = node
	if node == "" {
		return
	}
	for _, n := range rep.Nodes {
		if n.Node == node {
			rep.BoundNodeRank, rep.BoundNodeTotal = n.Rank, n.Total
		}
	}
}
