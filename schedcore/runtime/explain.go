package runtime

import (
	"context"
	"errors"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Explanation is the full diagnosis of one scheduling cycle of a pod:
// what kube-scheduler decides (the same code path) plus what it does not
// report: every rejecting filter per node, and every plugin's raw and
// weighted score. explain and the conformance tests render it.
type Explanation struct {
	Pod     *v1.Pod
	Profile string
	// PreEnqueue is the status of the PreEnqueue plugin that holds the pod
	// out of the scheduling queue (nil when none does): such a pod gets no
	// cycle, and every node reports this status.
	PreEnqueue *schedcore.Status
	// PreFilter is the PreFilter phase's status (nil = Success).
	PreFilter *schedcore.Status
	// PreFilterNodes are the nodes a PreFilterResult restricted to (nil = all).
	PreFilterNodes sets.Set[string]
	// SkippedFilterPlugins / SkippedScorePlugins were skipped by PreFilter / PreScore.
	SkippedFilterPlugins []string
	SkippedScorePlugins  []string
	// FilterPlugins and ScoreWeights describe the profile.
	FilterPlugins []string
	ScoreWeights  map[string]int64
	// Nodes are in snapshot order.
	Nodes []NodeExplanation
	// ByName are the positions in Nodes in name order (shared with the
	// NameOrder that kept them: read only).
	ByName []int32
	// Scores are the feasible nodes' scores, best first.
	Scores []schedcore.NodePluginScores
	// Ranking names the nodes of Scores, in their order (readers only
	// read it: Tied is a part of it).
	Ranking []string
	// Selected is the chosen node ("" when none fits); Tied the nodes
	// sharing the best total.
	Selected string
	Tied     []string
	// FitError is set when no node fits; its Error() is kube's message.
	FitError *schedcore.FitError
	// State is the cycle state after the filters (PreFilter data), for a
	// PostFilter evaluation such as explain's preemption dry run.
	State *schedcore.CycleState
	// Err is set when the cycle failed with an internal error.
	Err error
	// detail diagnoses node i again (ExplainShortfalls: Detail).
	detail func(ctx context.Context, i int, gaps bool)
	// scratch is the working memory detail reads, until Release.
	scratch *explainScratch
}

// NodeExplanation is one node's verdict.
type NodeExplanation struct {
	Name     string
	Feasible bool
	// Status is what kube-scheduler records for the node: the first
	// rejecting filter (or the PreFilter/absent status).
	Status *schedcore.Status
	// Failures are every filter plugin that rejects the node, in filter
	// order, with their explanations; the first one is Status.
	Failures []FilterVerdict
	// LeftOutBy are, for a node a PreFilterResult left out, the plugins
	// whose results did, with their explanations.
	LeftOutBy []FilterVerdict
	// Nominated are the pods nominated to the node that the filters
	// counted as running there (equal or higher priority, not the pod).
	Nominated []*schedcore.PodInfo
	// Rank is 1 + the node's place in Explanation.Scores (0 = not scored).
	Rank int
	// undetailed: the verdicts carry shortfalls but no explanations yet
	// (ExplainShortfalls; Explanation.Detail fills them in).
	undetailed bool
}

// Explain runs one scheduling cycle of pod against the snapshot with every
// node evaluated (as with percentageOfNodesToScore: 100) and collects the
// full diagnosis. Nothing is assumed or bound, and neither fw nor the
// snapshot is changed, so explanations of several pods may run at once.
func Explain(ctx context.Context, fw *Framework, snapshot *schedcore.Snapshot, pod *v1.Pod, tie TieBreak) *Explanation {
	return explain(ctx, fw, snapshot, pod, tie, true, nil)
}

// ExplainShortfalls is Explain with the rejected nodes' verdicts diagnosed
// for their shortfalls only (FilterVerdict.Shortfall, no Explanation):
// enough to rank every rejected node by how near it is to fitting, without
// the gaps' texts of thousands of nodes. Detail then explains the nodes
// that are shown, exactly as Explain would have. names, when not nil,
// keeps the nodes' name order for the next explanation.
func ExplainShortfalls(ctx context.Context, fw *Framework, snapshot *schedcore.Snapshot, pod *v1.Pod, tie TieBreak, names *NameOrder) *Explanation {
	return explain(ctx, fw, snapshot, pod, tie, false, names)
}

// Detail gives ex.Nodes[i]'s verdicts their explanations, as Explain
// would have: the node is diagnosed again, on the cycle's state, with
// gaps. It does nothing for a node that has them or has no verdicts, so it
// may be called for any node of any Explanation, but not concurrently.
func (ex *Explanation) Detail(ctx context.Context, i int) {
	if i < 0 || i >= len(ex.Nodes) || !ex.Nodes[i].undetailed || ex.detail == nil {
		return
	}
	ex.detail(ctx, i, true)
	ex.Nodes[i].undetailed = false
}

// explain is Explain, with the rejected nodes' gaps when gaps is set.
func explain(ctx context.Context, fw *Framework, snapshot *schedcore.Snapshot, pod *v1.Pod, tie TieBreak, gaps bool, names *NameOrder) *Explanation {
	// Without a TieBreak the nodes tied for the best total are read off
	// the ranking below (in name order already) rather than listed and
	// sorted by name by the host selection.
	alg := &Algorithm{EvaluateAllNodes: true, ListTied: tie != nil, TieBreak: tie, Snapshot: snapshot}

	ex := &Explanation{Pod: pod, Profile: fw.profileName, FilterPlugins: fw.FilterPluginNames(), ScoreWeights: fw.ScorePluginWeights()}
	state := schedcore.NewCycleState()
	ex.State = state
	if st := fw.RunPreEnqueuePlugins(ctx, pod); !st.IsSuccess() {
		// A gated pod never reaches a cycle (kube keeps it out of activeQ).
		ex.PreEnqueue = st
		for _, ni := range snapshot.List() {
			ex.Nodes = append(ex.Nodes, NodeExplanation{Name: ni.Name(), Status: st, Failures: []FilterVerdict{{Plugin: st.Plugin(), Status: st, Shortfall: 1}}})
		}
		ex.ByName = names.Of(ex.Nodes)
		return ex
	}
	result, diag, err := alg.SchedulePod(ctx, fw, state, pod)
	ex.SkippedFilterPlugins = sets.List(state.SkipFilterPlugins)
	ex.SkippedScorePlugins = sets.List(state.SkipScorePlugins)
	var fitErr *schedcore.FitError
	switch {
	case err == nil:
		ex.Selected, ex.Tied, ex.Scores = result.SuggestedHost, result.Tied, result.Scores
	case errors.As(err, &fitErr):
		ex.FitError = fitErr
	default:
		ex.Err = err
	}
	if diag != nil && diag.PreFilterMsg != "" {
		ex.PreFilter = diag.NodeToStatus.AbsentNodesStatus()
	}
	list := snapshot.List()
	pos := newPositions(snapshot, list)
	sc := getExplainScratch()
	if gaps {
		// Nothing reads the scratch once explain returns.
		defer putExplainScratch(sc)
	} else {
		// The rejected nodes' statuses serve Detail: Release frees it.
		ex.scratch = sc
	}
	feasible := sc.feasible.zeroed(len(list))
	// at[k] is the position in list of ex.Scores[k]'s node (-1: none).
	at := sc.at.sized(len(ex.Scores))
	if err == nil {
		if len(result.Scores) == 0 {
			if i := pos.of(result.SuggestedHost); i >= 0 {
				feasible[i] = true
			}
		}
		for k := range result.Scores {
			i := pos.of(result.Scores[k].Name)
			if i >= 0 {
				feasible[i] = true
			}
			at[k] = int32(i)
		}
	}
	var statuses []*schedcore.Status
	if diag != nil && diag.NodeToStatus != nil {
		statuses = sc.statuses.zeroed(len(list))
		pos := newPositions(snapshot, list)
		diag.NodeToStatus.ForEachExplicitNode(func(node string, s *schedcore.Status) {
			if i := pos.of(node); i >= 0 {
				statuses[i] = s
			}
		})
	}
	ex.Nodes = nodeExplanations(len(list))
	// rejected are the nodes to diagnose: the filters run again on each,
	// and the rejecting ones explain themselves.
	rejected := sc.rejected.sized(len(list))[:0]
	for i := range list {
		ne := &ex.Nodes[i]
		ne.Name, ne.Feasible = pos.names[i], feasible[i]
		if ne.Feasible || diag == nil {
			continue
		}
		ne.Status = statuses[i]
		if ne.Status == nil {
			ne.Status = diag.NodeToStatus.AbsentNodesStatus()
		} else if ex.PreFilter == nil {
			rejected = append(rejected, int32(i))
			continue
		}
		if ex.PreFilter == nil && len(diag.LeftOutBy) > 0 {
			rejected = append(rejected, int32(i))
		}
	}
	if err == nil && diag != nil {
		// A node was found: the rejections were read into the nodes'
		// entries and nothing reads their map any more (a failure's is its
		// FitError's and is kept), so its list serves later cycles.
		diag.NodeToStatus.Release()
	}
	// The nodes are diagnosed in parallel, each into its own entry, as
	// the filters ran: the filters and their explainers only read the
	// cycle state and the node. Every node is diagnosed even when ctx is
	// cancelled (the plugins still see ctx), so no entry is left half done.
	filters, mem := fw.diagnosisFilters(state)
	// The rejected nodes' verdicts are copied into the scratch when it is
	// kept until Release (ExplainShortfalls); Explain's are their own.
	var keep *verdictSlab
	if !gaps {
		keep = sc.verdicts.reset(len(rejected))
	}
	diagnoseNode := func(ctx context.Context, i int32, gaps bool) {
		ne, ni := &ex.Nodes[i], list[i]
		if statuses[i] != nil {
			ne.Failures = fw.diagnoseWithNominatedPods(ctx, filters, state, pod, ni, gaps, statuses[i], keep, mem)
			ne.Nominated = fw.countedNominatedPods(pod, ni)
		} else {
			ne.LeftOutBy = fw.explainLeftOut(ctx, state, pod, ni, diag.LeftOutBy, ne.Status, gaps)
		}
		ne.undetailed = !gaps
	}
	fw.handle.Parallelizer().Until(context.WithoutCancel(ctx), len(rejected), func(k int) {
		diagnoseNode(ctx, rejected[k], gaps)
	})
	if !gaps {
		ex.detail = func(ctx context.Context, i int, gaps bool) { diagnoseNode(context.WithoutCancel(ctx), int32(i), gaps) }
	}
	// With a single feasible node kube does not score; explain still does,
	// so the ranking is always shown.
	if err == nil && len(result.Scores) == 0 && fw.HasScorePlugins() {
		ni, _ := snapshot.Get(result.SuggestedHost)
		if scores, e := alg.prioritizeNodes(ctx, fw, state, pod, []*schedcore.NodeInfo{ni}); e == nil {
			ex.Scores = scores
			at = sc.at.sized(len(scores))
			for k := range scores {
				at[k] = int32(pos.of(scores[k].Name))
			}
		}
	}
	var place []int32
	ex.ByName, place = names.of(ex.Nodes, snapshot)
	// byName[k] is the place by name of ex.Scores[k]'s node (-1: none).
	byName := sc.byName.sized(len(ex.Scores))
	for k := range byName {
		byName[k] = -1
		if at[k] >= 0 {
			byName[k] = place[at[k]]
		}
	}
	for k, r := range sc.rank.rankScores(ex.Scores, byName) {
		if at[k] >= 0 {
			ex.Nodes[at[k]].Rank = int(r) + 1
		}
	}
	ex.Ranking = make([]string, len(ex.Scores))
	for k := range ex.Scores {
		ex.Ranking[k] = ex.Scores[k].Name
	}
	if err == nil && tie == nil && len(result.Scores) > 0 {
		// The nodes tied for the best total, in name order, as the host
		// selection lists them: the first of the ranking (best first,
		// equal totals in name order).
		n := 0
		for n < len(ex.Scores) && ex.Scores[n].TotalScore == ex.Scores[0].TotalScore {
			n++
		}
		ex.Tied = ex.Ranking[:n:n]
	}
	return ex
}

// spareNodes are node entries of released explanations
// (Explanation.Release), cleared: an explanation of 5000 nodes needs half
// a megabyte of them, garbage once it is rendered.
var spareNodes sync.Pool

// nodeExplanations returns n zero node entries, released ones when there
// are enough.
func nodeExplanations(n int) []NodeExplanation {
	if p, _ := spareNodes.Get().(*[]NodeExplanation); p != nil && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]NodeExplanation, n)
}

// Release gives the explanation's node entries and its list of scores
// back for another explanation. Neither ex nor its Nodes nor its Scores
// may be used afterwards, nor the nodes' lists of verdicts (Failures);
// what was read from the entries (statuses, the verdicts themselves,
// names, each node's score lists) stays valid.
func (ex *Explanation) Release() {
	if ex == nil {
		return
	}
	putSpareScores(ex.Scores)
	ex.Scores = nil
	if sc := ex.scratch; sc != nil {
		ex.scratch, ex.detail = nil, nil
		putExplainScratch(sc)
	}
	if ex.Nodes == nil || ex.PreEnqueue != nil {
		return
	}
	nodes := ex.Nodes[:cap(ex.Nodes)]
	clear(nodes)
	ex.Nodes, ex.detail = nil, nil
	spareNodes.Put(&nodes)
}
