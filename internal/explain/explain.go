// Package explain is the diagnosis driver of the engine: it loads cluster
// state (a snapshot file or a live listing, both as a snapshot.Cluster) into
// the cache, runs one scheduling cycle of one pod through the real framework
// with schedcore.Explain (no Binder: nothing is assumed or bound), and turns
// the result into report.Explanation, adding what kube-scheduler does not
// say: every rejecting filter per node, every plugin's raw, normalized and
// weighted score, and, for the nodes nearest to fitting, the concrete gap.
package explain

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
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
	// Progress, when set, is called by RunAtTurn after every attempt of
	// its dry-run with the pods placed so far, the pods whose last attempt
	// failed, and the pending pods in all.
	Progress func(placed, failing, total int)
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
	names nameOrder
}

// NewState loads the cluster into a fresh engine. The cluster's objects
// are shared, not copied (the engine does not modify them); pods without a
// UID are copied to get the stable one the dry-run gives them. Preemption
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
			cp := *p
			p = &cp
		}
		work.Pods[i] = p
	}
	nom := &nominator{byNode: map[string][]*schedcore.PodInfo{}}
	eng, err := engine.New(ctx, engine.Options{Config: o.Config, Registry: o.Registry, Features: o.Features, Seed: o.Seed, UseSeed: o.UseSeed},
		engine.Driver{Nominator: nom, Preemption: schedcore.PreemptionHooks{PDBs: engine.PDBsOf(cl.PDBs)}})
	if err != nil {
		return nil, err
	}
	nom.fill(work.Pods, eng.Profiles)
	pending, err := eng.Load(&work)
	if err != nil {
		return nil, err
	}
	return &State{o: o, cluster: &work, eng: eng, pending: pending}, nil
}

// nominator holds the cluster's pending pods that preemption nominated to a
// node (status.nominatedNodeName), as kube-scheduler's queue does: the
// filters of other pods count them on that node when their priority is
// equal or higher (the explained pod itself is left out by its UID).
type nominator struct {
	byNode map[string][]*schedcore.PodInfo
	n      int
}

func (n *nominator) fill(pods []*v1.Pod, profiles *engine.Profiles) {
	for _, p := range pods {
		if p.Spec.NodeName != "" || p.Status.NominatedNodeName == "" || p.DeletionTimestamp != nil ||
			p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		name := p.Spec.SchedulerName
		if name == "" {
			name = v1.DefaultSchedulerName
		}
		if profiles.ByName[name] == nil {
			continue // not in our queue
		}
		n.byNode[p.Status.NominatedNodeName] = append(n.byNode[p.Status.NominatedNodeName], schedcore.NewPodInfo(p))
		n.n++
	}
}

// NominatedPodsForNode returns the pods nominated to the node.
func (n *nominator) NominatedPodsForNode(node string) []*schedcore.PodInfo { return n.byNode[node] }

// NumNominatedPods says how many pods are nominated at all.
func (n *nominator) NumNominatedPods() int { return n.n }

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
	o := s.o
	if o.Source == "" {
		o.Source = SourceSnapshot
	}
	target := pod.DeepCopy()
	if target.Namespace == "" {
		target.Namespace = v1.NamespaceDefault
	}
	if target.Spec.SchedulerName == "" {
		target.Spec.SchedulerName = v1.DefaultSchedulerName
	}
	bound, nominated := target.Spec.NodeName, target.Status.NominatedNodeName
	target.Spec.NodeName = ""
	// Explain evaluates every node; kube would try the nominated node first
	// and stop there if it fits.
	target.Status.NominatedNodeName = ""

	for _, p := range s.cluster.Pods {
		if p.Namespace == target.Namespace && p.Name == target.Name || pod.UID != "" && p.UID == pod.UID {
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
	}
	if target.UID == "" {
		target.UID = engine.SnapshotUID(target.Namespace, target.Name)
	}
	s.eng.Cache.UpdateSnapshot(s.eng.Snapshot)

	fw := s.eng.Framework(target)
	if fw == nil {
		return nil, fmt.Errorf("pod %s has schedulerName %q, which is not a profile of the configuration (profiles: %s): %w",
			schedcore.PodName(target), target.Spec.SchedulerName, strings.Join(s.eng.Profiles.Order, ", "), ErrUnknownProfile)
	}
	snap := s.eng.Snapshot
	if o.Node != "" {
		if _, err := snap.Get(o.Node); err != nil {
			return nil, fmt.Errorf("--node: node %q is not in the cluster: %w", o.Node, ErrUnknownNode)
		}
	}

	ex := s.eng.Explain(ctx, fw, target)
	if ex.Err != nil {
		return nil, fmt.Errorf("explaining pod %s: %w", schedcore.PodName(target), ex.Err)
	}
	rep, order := convert(ex, &s.names)
	rep.Source, rep.BoundNode, rep.NominatedNode = o.Source, bound, nominated
	if s.turn != nil {
		rep.State, rep.Turn = StateAtTurn, s.turn
	} else {
		rep.State, rep.Ahead = StateAsListed, s.ahead(target, bound != "")
	}
	if ex.FitError != nil {
		rep.Preemption = preemption(ctx, fw, ex, target)
	}
	if bound != "" {
		for _, n := range rep.Nodes {
			if n.Node == bound {
				rep.BoundNodeRank, rep.BoundNodeTotal = n.Rank, n.Total
			}
		}
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

	nearest := o.Nearest
	if nearest == 0 {
		nearest = DefaultNearest
	}
	rep.Nearest = []string{}
	if nearest > 0 && ex.PreFilter.IsSuccess() && ex.PreEnqueue == nil {
		// A pod rejected at PreFilter fails every node alike, for the
		// PreFilter reason the summary gives: no node is nearer.
		rep.Nearest = nearestNodes(rep.Nodes, order, ex, snap, nearest)
	}
	want := map[string]bool{o.Node: o.Node != ""}
	for _, n := range rep.Nearest {
		want[n] = true
	}
	for i := range rep.Nodes {
		n := &rep.Nodes[i]
		if !want[n.Node] {
			continue
		}
		ni, _ := snap.Get(n.Node)
		n.Free = free(ni, target, s.eng.Options.Features)
		if !n.Feasible {
			n.Gaps = nodeGaps(&ex.Nodes[order[i]])
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
// pod of equal or higher priority. Gated pods never reach a cycle and are
// not counted.
func (s *State) ahead(target *v1.Pod, bound bool) int {
	if bound {
		return 0
	}
	prio := schedcore.PodPriority(target)
	n := 0
	for _, p := range s.pending {
		if p.Namespace == target.Namespace && p.Name == target.Name {
			return n
		}
		if len(p.Spec.SchedulingGates) == 0 && schedcore.PodPriority(p) >= prio {
			n++
		}
	}
	return n
}

// convert renders schedcore's Explanation as the report's schema: nodes in
// name order, scores per plugin by name (raw, normalized = weighted /
// weight, weighted), ranks. order[i] is the position in ex.Nodes of
// rep.Nodes[i]; names keeps the name order across calls (nil: none kept).
func convert(ex *schedcore.Explanation, names *nameOrder) (rep *report.Explanation, order []int32) {
	rep = &report.Explanation{
		Pod:                  schedcore.PodName(ex.Pod),
		Profile:              ex.Profile,
		PreFilter:            report.PreFilterOutcome{Code: ex.PreFilter.Code().String(), Plugin: ex.PreFilter.Plugin(), Reason: ex.PreFilter.Message()},
		SkippedFilterPlugins: nonNil(ex.SkippedFilterPlugins),
		SkippedScorePlugins:  nonNil(ex.SkippedScorePlugins),
		FilterPlugins:        nonNil(ex.FilterPlugins),
		ScorePluginWeights:   ex.ScoreWeights,
		NumNodes:             len(ex.Nodes),
		Selected:             ex.Selected,
		TiedBest:             nonNil(ex.Tied),
		Ranking:              make([]string, 0, len(ex.Scores)),
	}
	if ex.FitError != nil {
		rep.Message = ex.FitError.Error()
	}
	if st := ex.PreEnqueue; st != nil {
		rep.PreEnqueue = &report.PreFilterOutcome{Code: st.Code().String(), Plugin: st.Plugin(), Reason: st.Message()}
		rep.PreFilter = report.PreFilterOutcome{Code: "NotRun"}
		rep.Message = st.Message()
	}
	for i := range ex.Scores {
		rep.Ranking = append(rep.Ranking, ex.Scores[i].Name)
	}
	if len(ex.Scores) > 0 {
		rep.BestTotal = ex.Scores[0].TotalScore
	}
	totals := make([]int64, len(ex.Scores))
	maps := scoreMaps{weights: ex.ScoreWeights}
	order = names.of(ex.Nodes)
	rep.Nodes = make([]report.ExplainNode, len(ex.Nodes))
	for k, i := range order {
		ne := &ex.Nodes[i]
		n := &rep.Nodes[k]
		n.Node, n.Feasible = ne.Name, ne.Feasible
		if ne.Feasible {
			rep.NumFeasible++
			if r := ne.Rank; r > 0 {
				sc := &ex.Scores[r-1]
				totals[r-1] = sc.TotalScore
				n.Total, n.Rank = &totals[r-1], r
				n.Scores, n.NormalizedScores, n.RawScores = maps.of(sc)
			}
			continue
		}
		if len(ne.Failures) > 0 {
			n.Failures = make([]report.Failure, len(ne.Failures))
			for j, f := range ne.Failures {
				n.Failures[j] = failure(f.Plugin, f.Status, j == 0)
			}
		} else if ne.Status != nil {
			// Rejected before any filter ran on it: by PreFilter, or left
			// out by a PreFilterResult.
			n.Failures = []report.Failure{failure(ne.Status.Plugin(), ne.Status, true)}
		}
	}
	return rep, order
}

// nameOrder keeps the name order of a node list from one explanation to
// the next (the order of the snapshot's list changes rarely): order are
// positions in the list, by name.
type nameOrder struct {
	order []int32
}

// of returns the positions of nodes in name order. The kept order is used
// when it still sorts nodes strictly by name (one pass over the names,
// which also proves it is this list's order since the names are unique);
// otherwise the positions are sorted again and kept. A nil *nameOrder
// keeps nothing.
func (o *nameOrder) of(nodes []schedcore.NodeExplanation) []int32 {
	if o != nil && len(o.order) == len(nodes) && sortedBy(o.order, nodes) {
		return o.order
	}
	order := make([]int32, len(nodes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(nodes[a].Name, nodes[b].Name) })
	if o != nil {
		o.order = order
	}
	return order
}

// sortedBy reports whether order lists nodes with strictly increasing names.
func sortedBy(order []int32, nodes []schedcore.NodeExplanation) bool {
	for k := 1; k < len(order); k++ {
		if order[k] < 0 || order[k-1] < 0 || int(order[k]) >= len(nodes) || int(order[k-1]) >= len(nodes) || nodes[order[k-1]].Name >= nodes[order[k]].Name {
			return false
		}
	}
	return len(order) != 1 || order[0] == 0
}

// scoreMaps builds a feasible node's score maps (weighted, normalized,
// raw: plugin name to score). Nodes with the same scores share one set of
// maps, which readers of the report only read: on a large cluster most
// nodes score alike, and three maps per node were most of the conversion.
// The maps are found by the scores' values; a hit is used only when its
// plugin names are the node's too.
type scoreMaps struct {
	weights map[string]int64
	key     []byte
	seen    map[string]*sharedScores
}

type sharedScores struct {
	from                     *schedcore.NodePluginScores
	scores, normalized, raws map[string]int64
}

func (m *scoreMaps) of(sc *schedcore.NodePluginScores) (scores, normalized, raws map[string]int64) {
	m.key = m.key[:0]
	m.key = binary.AppendUvarint(m.key, uint64(len(sc.Scores)))
	for _, p := range sc.Scores {
		m.key = binary.AppendVarint(m.key, p.Score)
	}
	m.key = binary.AppendUvarint(m.key, uint64(len(sc.RawScores)))
	for _, p := range sc.RawScores {
		m.key = binary.AppendVarint(m.key, p.Score)
	}
	if s, ok := m.seen[string(m.key)]; ok && samePlugins(s.from, sc) {
		return s.scores, s.normalized, s.raws
	}
	s := &sharedScores{from: sc, scores: make(map[string]int64, len(sc.Scores)), normalized: make(map[string]int64, len(sc.Scores)),
		raws: make(map[string]int64, len(sc.RawScores))}
	for _, p := range sc.Scores {
		s.scores[p.Name] = p.Score
		if w := m.weights[p.Name]; w != 0 {
			s.normalized[p.Name] = p.Score / w
		}
	}
	for _, p := range sc.RawScores {
		s.raws[p.Name] = p.Score
	}
	if m.seen == nil {
		m.seen = map[string]*sharedScores{}
	}
	if _, ok := m.seen[string(m.key)]; !ok {
		m.seen[string(m.key)] = s
	}
	return s.scores, s.normalized, s.raws
}

// samePlugins reports whether a and b score the same plugins in the same order.
func samePlugins(a, b *schedcore.NodePluginScores) bool {
	if len(a.Scores) != len(b.Scores) || len(a.RawScores) != len(b.RawScores) {
		return false
	}
	for i := range a.Scores {
		if a.Scores[i].Name != b.Scores[i].Name {
			return false
		}
	}
	for i := range a.RawScores {
		if a.RawScores[i].Name != b.RawScores[i].Name {
			return false
		}
	}
	return true
}

func failure(plugin string, s *schedcore.Status, first bool) report.Failure {
	return report.Failure{Plugin: plugin, Reason: strings.Join(s.Reasons(), "; "), Code: s.Code().String(), First: first}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// shortfall sums the plugins' shortfalls on a rejected node (a plugin that
// does not explain itself counts 1): how far the node is from fitting.
func shortfall(ne *schedcore.NodeExplanation) float64 {
	var sum float64
	for _, vs := range [2][]schedcore.FilterVerdict{ne.Failures, ne.LeftOutBy} {
		for _, v := range vs {
			if v.Explanation != nil && v.Explanation.Shortfall > 0 {
				sum += v.Explanation.Shortfall
			} else {
				sum++
			}
		}
	}
	return sum
}

// nearestNodes picks the rejected nodes closest to fitting: fewest
// failures, then fewest that preemption cannot resolve, then the smallest
// shortfall the plugins report, then most free cpu, then most free memory,
// then name. nodes[i] is ex.Nodes[order[i]].
func nearestNodes(nodes []report.ExplainNode, order []int32, ex *schedcore.Explanation, snap *schedcore.Snapshot, n int) []string {
	type cand struct {
		name                 string
		failures, unresolved int
		shortfall            float64
		cpu, mem             int64
	}
	less := func(a, b *cand) bool {
		if a.failures != b.failures {
			return a.failures < b.failures
		}
		if a.unresolved != b.unresolved {
			return a.unresolved < b.unresolved
		}
		if a.shortfall != b.shortfall {
			return a.shortfall < b.shortfall
		}
		if a.cpu != b.cpu {
			return a.cpu > b.cpu
		}
		if a.mem != b.mem {
			return a.mem > b.mem
		}
		return a.name < b.name
	}
	// best holds the n nearest so far, nearest first (n is a handful: an
	// insertion into it beats sorting every rejected node).
	best := make([]cand, 0, n+1)
	for i, nd := range nodes {
		if nd.Feasible {
			continue
		}
		ni := nodeInfo(snap, order[i], nd.Node)
		if ni == nil {
			continue
		}
		c := cand{name: nd.Node, failures: len(nd.Failures),
			cpu: ni.Allocatable.MilliCPU - ni.Requested.MilliCPU, mem: ni.Allocatable.Memory - ni.Requested.Memory}
		if len(best) == n && !less(&c, &best[n-1]) {
			continue
		}
		for _, f := range nd.Failures {
			if f.Code == schedcore.UnschedulableAndUnresolvable.String() {
				c.unresolved++
			}
		}
		c.shortfall = shortfall(&ex.Nodes[order[i]])
		at := sort.Search(len(best), func(k int) bool { return less(&c, &best[k]) })
		best = slices.Insert(best, at, c)
		if len(best) > n {
			best = best[:n]
		}
	}
	out := []string{}
	for _, c := range best {
		out = append(out, c.name)
	}
	return out
}

// nodeInfo returns the snapshot's node at position i of its list (where
// schedcore.Explain put its explanation) when that node is named name,
// and otherwise looks it up by name; nil when the snapshot has no such node.
func nodeInfo(snap *schedcore.Snapshot, i int32, name string) *schedcore.NodeInfo {
	if list := snap.List(); int(i) < len(list) && list[i].Name() == name {
		return list[i]
	}
	ni, err := snap.Get(name)
	if err != nil {
		return nil
	}
	return ni
}

// free is what the node has left of cpu, memory, pods and of every other
// resource the pod requests.
func free(ni *schedcore.NodeInfo, pod *v1.Pod, f schedcore.Features) map[string]int64 {
	a, r := &ni.Allocatable, &ni.Requested
	out := map[string]int64{
		"cpu":    a.MilliCPU - r.MilliCPU,
		"memory": a.Memory - r.Memory,
		"pods":   int64(a.AllowedPodNumber - len(ni.Pods)),
	}
	req := schedcore.ComputePodResource(pod, f)
	if req.Resource.EphemeralStorage > 0 {
		out["ephemeral-storage"] = a.EphemeralStorage - r.EphemeralStorage
	}
	for name := range req.Resource.ScalarResources {
		out[string(name)] = a.ScalarResources[name] - r.ScalarResources[name]
	}
	return out
}
