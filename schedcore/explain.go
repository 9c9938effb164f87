package schedcore

import (
	"cmp"
	"context"
	"errors"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
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
	PreEnqueue *Status
	// PreFilter is the PreFilter phase's status (nil = Success).
	PreFilter *Status
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
	// Scores are the feasible nodes' scores, best first.
	Scores []NodePluginScores
	// Selected is the chosen node ("" when none fits); Tied the nodes
	// sharing the best total.
	Selected string
	Tied     []string
	// FitError is set when no node fits; its Error() is kube's message.
	FitError *FitError
	// State is the cycle state after the filters (PreFilter data), for a
	// PostFilter evaluation such as explain's preemption dry run.
	State *CycleState
	// Err is set when the cycle failed with an internal error.
	Err error
}

// NodeExplanation is one node's verdict.
type NodeExplanation struct {
	Name     string
	Feasible bool
	// Status is what kube-scheduler records for the node: the first
	// rejecting filter (or the PreFilter/absent status).
	Status *Status
	// Failures are every filter plugin that rejects the node, in filter
	// order, with their explanations; the first one is Status.
	Failures []FilterVerdict
	// LeftOutBy are, for a node a PreFilterResult left out, the plugins
	// whose results did, with their explanations.
	LeftOutBy []FilterVerdict
	// Nominated are the pods nominated to the node that the filters
	// counted as running there (equal or higher priority, not the pod).
	Nominated []*PodInfo
	// Rank is 1 + the node's place in Explanation.Scores (0 = not scored).
	Rank int
}

// Explain runs one scheduling cycle of pod against the snapshot with every
// node evaluated (as with percentageOfNodesToScore: 100) and collects the
// full diagnosis. Nothing is assumed or bound, and neither fw nor the
// snapshot is changed, so explanations of several pods may run at once.
func Explain(ctx context.Context, fw *Framework, snapshot *Snapshot, pod *v1.Pod, tie TieBreak) *Explanation {
	alg := &Algorithm{EvaluateAllNodes: true, ListTied: true, TieBreak: tie, Snapshot: snapshot}

	ex := &Explanation{Pod: pod, Profile: fw.profileName, FilterPlugins: fw.FilterPluginNames(), ScoreWeights: fw.ScorePluginWeights()}
	state := NewCycleState()
	ex.State = state
	if st := fw.RunPreEnqueuePlugins(ctx, pod); !st.IsSuccess() {
		// A gated pod never reaches a cycle (kube keeps it out of activeQ).
		ex.PreEnqueue = st
		for _, ni := range snapshot.List() {
			ex.Nodes = append(ex.Nodes, NodeExplanation{Name: ni.Name(), Status: st, Failures: []FilterVerdict{{Plugin: st.Plugin(), Status: st}}})
		}
		return ex
	}
	result, diag, err := alg.SchedulePod(ctx, fw, state, pod)
	ex.SkippedFilterPlugins = sets.List(state.SkipFilterPlugins)
	ex.SkippedScorePlugins = sets.List(state.SkipScorePlugins)
	var fitErr *FitError
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
	feasible := make([]bool, len(list))
	if err == nil {
		if len(result.Scores) == 0 {
			markFeasible(snapshot, list, feasible, result.SuggestedHost)
		}
		for i := range result.Scores {
			markFeasible(snapshot, list, feasible, result.Scores[i].Name)
		}
	}
	var statuses []*Status
	if diag != nil && diag.NodeToStatus != nil {
		statuses = diag.NodeToStatus.byPosition(snapshot, list)
	}
	ex.Nodes = make([]NodeExplanation, len(list))
	for i, ni := range list {
		ne := NodeExplanation{Name: ni.Name(), Feasible: feasible[i]}
		if !ne.Feasible && diag != nil {
			ne.Status = statuses[i]
			explicit := ne.Status != nil
			if !explicit {
				ne.Status = diag.NodeToStatus.AbsentNodesStatus()
			}
			switch {
			case ex.PreFilter != nil:
			case explicit:
				ne.Failures = fw.DiagnoseFilterPluginsWithNominatedPods(ctx, state, pod, ni)
				ne.Nominated = fw.countedNominatedPods(pod, ni)
			case len(diag.LeftOutBy) > 0:
				ne.LeftOutBy = fw.ExplainLeftOut(ctx, state, pod, ni, diag.LeftOutBy, ne.Status)
			}
		}
		ex.Nodes[i] = ne
	}
	// With a single feasible node kube does not score; explain still does,
	// so the ranking is always shown.
	if err == nil && len(result.Scores) == 0 && fw.HasScorePlugins() {
		ni, _ := snapshot.Get(result.SuggestedHost)
		if scores, e := alg.prioritizeNodes(ctx, fw, state, pod, []*NodeInfo{ni}); e == nil {
			ex.Scores = scores
		}
	}
	ex.Scores = rankScores(ex.Scores)
	for r := range ex.Scores {
		if i := listPosition(snapshot, list, ex.Scores[r].Name); i >= 0 {
			ex.Nodes[i].Rank = r + 1
		}
	}
	return ex
}

// rankScores orders the scores best first: highest total, then lowest
// name. Node names are unique, so the order is total and any sort gives
// it; the indices are sorted rather than the structs, then the structs are
// copied once into place.
func rankScores(scores []NodePluginScores) []NodePluginScores {
	if len(scores) < 2 {
		return scores
	}
	idx := make([]int32, len(scores))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		x, y := &scores[a], &scores[b]
		if x.TotalScore != y.TotalScore {
			return cmp.Compare(y.TotalScore, x.TotalScore)
		}
		return cmp.Compare(x.Name, y.Name)
	})
	out := make([]NodePluginScores, len(scores))
	for r, i := range idx {
		out[r] = scores[i]
	}
	return out
}

// listPosition returns the position in list (the snapshot's List()) of the
// node named name, or -1. It reads the position the snapshot keeps in the
// NodeInfo and checks that the list holds that node there; when it does
// not, it searches the list.
func listPosition(snapshot *Snapshot, list []*NodeInfo, name string) int {
	if ni, ok := snapshot.nodeInfoMap[name]; ok {
		if i := ni.listIndex(); i >= 0 && i < len(list) && list[i].Name() == name {
			return i
		}
	}
	return slices.IndexFunc(list, func(ni *NodeInfo) bool { return ni.Name() == name })
}

// markFeasible marks the named node of list as feasible.
func markFeasible(snapshot *Snapshot, list []*NodeInfo, feasible []bool, name string) {
	if i := listPosition(snapshot, list, name); i >= 0 {
		feasible[i] = true
	}
}
