package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ErrNoNodesAvailable is returned when the snapshot has no nodes.
var ErrNoNodesAvailable = errors.New("no nodes available to schedule pods")

const (
	minFeasibleNodesToFind           = 100
	minFeasibleNodesPercentageToFind = 5
)

// ScheduleResult is the outcome of the scheduling algorithm for one pod.
type ScheduleResult struct {
	// SuggestedHost is the chosen node.
	SuggestedHost string
	// EvaluatedNodes counts nodes filtered (feasible or not).
	EvaluatedNodes int
	// FeasibleNodes counts nodes that passed the filters.
	FeasibleNodes int
	// Scores are the per-node scores when more than one node was feasible:
	// Scores[0] is the chosen node, Scores[1] the best other; the rest are
	// unordered.
	Scores []schedcore.NodePluginScores
	// Tied lists the nodes sharing the best total, when the Algorithm
	// lists them (ListTied) or breaks ties with a TieBreak.
	Tied []string
	// NominatingInfo is set by PostFilter on failure.
	NominatingInfo *schedcore.NominatingInfo
}

// TieBreak picks one node among those sharing the best total. The default
// (nil) picks the lowest name; a driver's seeded one picks pseudo-randomly.
type TieBreak func(tied []string) string

// Algorithm is the filter-and-score core shared by every driver: it finds
// the feasible nodes of a pod in a snapshot and ranks them.
type Algorithm struct {
	// PercentageOfNodesToScore is the global setting (0 = adaptive).
	PercentageOfNodesToScore int32
	// TieBreak chooses among equal best totals; nil = lowest node name.
	TieBreak TieBreak
	// Snapshot is the cycle's snapshot.
	Snapshot *schedcore.Snapshot
	// EvaluateAllNodes filters every node, whatever the global and the
	// profile's percentageOfNodesToScore say (Explain).
	EvaluateAllNodes bool
	// ListTied fills ScheduleResult.Tied (Explain). Without it and without
	// a TieBreak the lowest-named best node is chosen without listing the
	// others: with identical nodes, that is every feasible node each cycle.
	ListTied bool
	// ScoreTotalsOnly leaves ScheduleResult.Scores without the per-plugin
	// lists (RawScores, Scores): each entry holds the node's Name and
	// TotalScore only. The offline drivers read nothing else, and building
	// the lists was a tenth of a p0 run's allocation.
	ScoreTotalsOnly bool

	mu                 sync.Mutex
	nextStartNodeIndex int
}

// SchedulePod runs PreFilter, Filter (with the nominated node first),
// PreScore, Score and picks a node. A *FitError is returned when no node
// fits.
func (a *Algorithm) SchedulePod(ctx context.Context, fw *Framework, state *schedcore.CycleState, pod *v1.Pod) (ScheduleResult, *schedcore.Diagnosis, error) {
	return a.SchedulePodWith(ctx, fw, state, pod, CycleOptions{})
}

// SchedulePodWith is SchedulePod with the caller's options for the cycle
// (the scheduler loop's: score into reused buffers, diagnose failures
// only), kept in the cycle's private runner state.
func (a *Algorithm) SchedulePodWith(ctx context.Context, fw *Framework, state *schedcore.CycleState, pod *v1.Pod, opts CycleOptions) (ScheduleResult, *schedcore.Diagnosis, error) {
	var result ScheduleResult
	// Inside a pod-group cycle's placement, the algorithm's nodes are the
	// placement's (Snapshot.AssumePlacement): filtered, counted in the
	// FitError and rotated through; without one, every listed node.
	n := a.Snapshot.NumNodesInPlacement()
	if n == 0 {
		return result, nil, ErrNoNodesAvailable
	}
	cr := runOf(state)
	cr.opts = opts
	if c, ok := fw.handle.Nominator().(schedcore.NominatedPodCounter); ok && c.NumNominatedPods() == 0 {
		cr.noNominatedPods = true
	}
	defer cr.listed.release()
	feasible, diag, err := a.findNodesThatFitPod(ctx, fw, state, pod)
	// Nothing reads the feasible nodes after the cycle: the result names
	// them, and PreScore and Score plugins keep no list past the cycle.
	defer putFeasible(feasible)
	if err != nil {
		return result, &diag, err
	}
	if len(feasible) == 0 {
		return result, &diag, &schedcore.FitError{Pod: pod, NumAllNodes: n, Diagnosis: diag}
	}
	if len(feasible) == 1 {
		return ScheduleResult{SuggestedHost: feasible[0].Name(), EvaluatedNodes: 1 + diag.Evaluated(), FeasibleNodes: 1, Tied: []string{feasible[0].Name()}}, &diag, nil
	}
	defer releaseScoreBuffers(state)
	scores, err := a.prioritizeNodes(ctx, fw, state, pod, feasible)
	if err != nil {
		return result, &diag, err
	}
	result = ScheduleResult{EvaluatedNodes: len(feasible) + diag.Evaluated(), FeasibleNodes: len(feasible)}
	if cr.scoreBufs != nil {
		// The buffers are reused by the next cycle: keep the chosen and
		// the runner-up nodes' scores only, copied out of them.
		c, ru, tied := a.pickHost(scores, a.nameOrder(state, feasible))
		result.SuggestedHost, result.Tied = scores[c].Name, tied
		result.Scores = detachScores(state, scores, c, ru, !a.ScoreTotalsOnly)
		return result, &diag, nil
	}
	result.SuggestedHost, result.Tied = a.selectHost(scores)
	result.Scores = scores
	return result, &diag, nil
}

// prioritizeNodes runs PreScore and Score; with no score plugins every node
// scores 1.
func (a *Algorithm) prioritizeNodes(ctx context.Context, fw *Framework, state *schedcore.CycleState, pod *v1.Pod, nodes []*schedcore.NodeInfo) ([]schedcore.NodePluginScores, error) {
	if !fw.HasScorePlugins() {
		out := make([]schedcore.NodePluginScores, len(nodes))
		for i, n := range nodes {
			out[i] = schedcore.NodePluginScores{Name: n.Name(), TotalScore: 1}
		}
		return out, nil
	}
	if s := fw.RunPreScorePlugins(ctx, state, pod, nodes); !s.IsSuccess() {
		return nil, s.AsError()
	}
	scores, s := fw.RunScorePlugins(ctx, state, pod, nodes)
	if !s.IsSuccess() {
		return nil, s.AsError()
	}
	return scores, nil
}

// selectHost returns the chosen node and, when the Algorithm lists them
// (ListTied, or a TieBreak to choose among them), every node tied with it
// for the best total (in name order). After it, scores[0] is the chosen
// node and scores[1], if any, the best other node (the lowest name among
// equals); the rest keep no particular order.
func (a *Algorithm) selectHost(scores []schedcore.NodePluginScores) (string, []string) {
	c, ru, tied := a.pickHost(scores, nameOrder{})
	scores[0], scores[c] = scores[c], scores[0]
	if ru == 0 {
		ru = c
	}
	if ru > 0 {
		scores[1], scores[ru] = scores[ru], scores[1]
	}
	return scores[0].Name, tied
}

// pickHost returns the index of the chosen node, of the best other node
// (the lowest name among equal totals; -1 when there is none) and, when
// the Algorithm lists them, the nodes tied for the best total (in name
// order). It runs in passes over scores without sorting them, and
// without moving them.
//
// order, when not empty, gives each scored node's rank in name order, so
// that tied totals compare integers, not names.
func (a *Algorithm) pickHost(scores []schedcore.NodePluginScores, order nameOrder) (chosen, runnerUp int, tied []string) {
	best, second := bestTwo(scores, order)
	if a.TieBreak == nil && !a.ListTied {
		return best, second, nil
	}
	// The lowest name among the best totals is scores[best]'s.
	top := scores[best].TotalScore
	for i := range scores {
		if scores[i].TotalScore == top {
			tied = append(tied, scores[i].Name)
		}
	}
	if len(tied) > 1 {
		sort.Strings(tied)
	}
	if len(tied) < 2 || a.TieBreak == nil {
		return best, second, tied
	}
	name := a.TieBreak(tied)
	if name == scores[best].Name {
		return best, second, tied
	}
	for i := range scores {
		if scores[i].Name == name {
			// Another node of the best total: the best one is then the
			// best other.
			return i, best, tied
		}
	}
	return best, second, tied
}

// bestTwo finds in one pass the best and the second best of scores (-1:
// none): a node above (higher total, or equal and a lower name, or rank in
// name order) is better.
func bestTwo(scores []schedcore.NodePluginScores, order nameOrder) (best, second int) {
	best, second = 0, -1
	if order.pos != nil {
		pos, ranks := order.pos[:len(scores)], order.ranks
		bt, bo := scores[0].TotalScore, ranks[pos[0]]
		var st int64
		var so int32
		for i := 1; i < len(scores); i++ {
			t, o := scores[i].TotalScore, ranks[pos[i]]
			if t > bt || t == bt && o < bo {
				best, second, st, so = i, best, bt, bo
				bt, bo = t, o
			} else if second < 0 || t > st || t == st && o < so {
				second, st, so = i, t, o
			}
		}
		return best, second
	}
	better := func(i, j int) bool {
		return scores[i].TotalScore > scores[j].TotalScore ||
			scores[i].TotalScore == scores[j].TotalScore && scores[i].Name < scores[j].Name
	}
	for i := 1; i < len(scores); i++ {
		switch {
		case better(i, best):
			best, second = i, best
		case second < 0 || better(i, second):
			second = i
		}
	}
	return best, second
}

// nameOrder returns the list positions of the feasible nodes the filter
// loop found in the snapshot's list (in their order) and the listed nodes'
// ranks in name order, by position; empty when the positions are not
// known.
func (a *Algorithm) nameOrder(state *schedcore.CycleState, feasible []*schedcore.NodeInfo) nameOrder {
	pos := peekRun(state).listed.positions(a.Snapshot, feasible)
	if pos == nil || len(pos) != len(feasible) {
		return nameOrder{}
	}
	return nameOrder{pos: pos, ranks: a.Snapshot.NameRanks()}
}

// nameOrder ranks scored nodes by name: node i of the scores is at list
// position pos[i], whose rank in name order is ranks[pos[i]].
type nameOrder struct {
	pos, ranks []int32
}

func (a *Algorithm) findNodesThatFitPod(ctx context.Context, fw *Framework, state *schedcore.CycleState, pod *v1.Pod) ([]*schedcore.NodeInfo, schedcore.Diagnosis, error) {
	diag := schedcore.Diagnosis{NodeToStatus: schedcore.NewCycleNodeToStatus()}
	all := a.Snapshot.ListNodesInPlacement()
	preRes, s, unsched := fw.RunPreFilterPlugins(ctx, state, pod)
	diag.UnschedulablePlugins = unsched
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return nil, diag, s.AsError()
		}
		diag.NodeToStatus.SetAbsentNodesStatus(s)
		diag.PreFilterMsg = s.Message()
		diag.AddPluginStatus(s)
		return nil, diag, nil
	}
	if nnn := pod.Status.NominatedNodeName; nnn != "" {
		// A nominated node outside the placement is not tried (kube:
		// evaluateNominatedNode, not an error).
		if ni, err := a.Snapshot.GetNodeInPlacement(nnn); err == nil {
			feasible, err := a.findNodesThatPassFilters(ctx, fw, state, pod, &diag, []*schedcore.NodeInfo{ni}, false)
			if err == nil && len(feasible) != 0 {
				return feasible, diag, nil
			}
			putFeasible(feasible)
		}
	}
	nodes := all
	if !preRes.AllNodes() {
		nodes = make([]*schedcore.NodeInfo, 0, len(preRes.NodeNames))
		// Iterate in snapshot order, not map order, so results do not depend
		// on Go's map iteration.
		for _, ni := range all {
			if preRes.NodeNames.Has(ni.Name()) {
				nodes = append(nodes, ni)
			}
		}
		diag.LeftOutBy = sets.List(unsched)
		diag.NodeToStatus.SetAbsentNodesStatus(schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", diag.LeftOutBy)))
	}
	feasible, err := a.findNodesThatPassFilters(ctx, fw, state, pod, &diag, nodes, true)
	return feasible, diag, err
}

// NumFeasibleNodesToFind is kube's adaptive sample size.
func NumFeasibleNodesToFind(profilePct *int32, globalPct int32, numAllNodes int32) int32 {
	if numAllNodes < minFeasibleNodesToFind {
		return numAllNodes
	}
	pct := globalPct
	if profilePct != nil {
		pct = *profilePct
	}
	if pct == 0 {
		pct = 50 - numAllNodes/125
		if pct < minFeasibleNodesPercentageToFind {
			pct = minFeasibleNodesPercentageToFind
		}
	}
	n := numAllNodes * pct / 100
	if n < minFeasibleNodesToFind {
		return minFeasibleNodesToFind
	}
	return n
}

func (a *Algorithm) findNodesThatPassFilters(ctx context.Context, fw *Framework, state *schedcore.CycleState, pod *v1.Pod, diag *schedcore.Diagnosis, nodes []*schedcore.NodeInfo, rotate bool) ([]*schedcore.NodeInfo, error) {
	start := time.Now()
	numAll := len(nodes)
	toFind := numAll
	if !a.EvaluateAllNodes {
		toFind = int(NumFeasibleNodesToFind(fw.PercentageOfNodesToScore(), a.PercentageOfNodesToScore, int32(numAll)))
	}
	if !fw.HasScorePlugins() {
		toFind = 1
	}
	a.mu.Lock()
	startIdx := 0
	if rotate && numAll > 0 {
		startIdx = a.nextStartNodeIndex % numAll
	}
	a.mu.Unlock()
	if !fw.HasFilterPlugins() {
		out := getFeasible(min(toFind, numAll))[:min(toFind, numAll)]
		for i := range out {
			out[i] = nodes[(startIdx+i)%numAll]
		}
		a.advance(rotate, len(out), a.Snapshot.NumNodesInPlacement())
		return out, nil
	}
	// Nodes are filtered in windows; each worker writes its own slots and
	// results are collected in node order, so which nodes are found never
	// depends on goroutine timing or on the parallelism.
	scratch := getFilterScratch(numAll)
	defer putFilterScratch(scratch)
	statuses, passed := scratch.statuses, scratch.passed
	feasible := getFeasible(min(toFind, numAll))
	// When nodes are the framework's snapshot's list, node i is at list
	// position i: its generation and name are read from the snapshot's
	// columns, and the filters whose verdicts are remembered never reach
	// the NodeInfo. A sampled cycle that times every plugin takes the
	// plain path, node by node, as it remembers nothing; so does a cycle
	// over a placement's nodes (another slice than the list: no list
	// positions, FeasibleListed false, names compared as strings).
	snap := fw.handle.Snapshot()
	byPos := snap != nil && !state.RecordPluginMetrics && sameList(nodes, snap.List()) && fw.nominatedPodsIgnored(state)
	var pos *[]int32
	cr := runOf(state)
	if byPos {
		pos = cr.listed.start(snap, min(toFind, numAll))
	}
	processed := 0
	// The windows' work, kept in the scratch: a closure over these would
	// be made anew on the heap for every window.
	fp := &scratch.pass
	*fp = filterPass{ctx: ctx, fw: fw, state: state, pod: pod, nodes: nodes, snap: snap, byPos: byPos, startIdx: startIdx, statuses: statuses, passed: passed}
	// A cycle whose caller reads the diagnosis only when no node fits
	// counts the rejected nodes, when it is to find some, instead of
	// recording each one's status (with no status set before the pass:
	// the nominated node's would be counted twice).
	if byPos && cr.opts.DiagnoseFailuresOnly && diag.NodeToStatus.Len() == 0 {
		fp.count, fp.passBits = true, scratch.passBits
		var rejected int
		feasible, rejected = fp.countWindows(toFind, feasible, pos)
		if len(feasible) > 0 && fp.firstErr == nil {
			// Also when the context stopped the pass: a recording pass
			// stopped there keeps what it found, and the cycle ends
			// with the context's error either way.
			diag.RejectedUnrecorded = rejected
			processed = len(feasible) + rejected
		} else {
			// Nothing fits, or a filter failed: the rejections are
			// what the caller reads, so the nodes are filtered again,
			// recording them, as a pass that never counted does. The
			// pooled list keeps no node of the count (putFeasible
			// clears only its length).
			clear(feasible)
			feasible, *pos = feasible[:0], (*pos)[:0]
			*fp = filterPass{ctx: ctx, fw: fw, state: state, pod: pod, nodes: nodes, snap: snap, byPos: byPos, startIdx: startIdx, statuses: statuses, passed: passed}
		}
	}
	if !fp.count {
		scratch.written = numAll
		feasible, processed = fp.recordWindows(toFind, feasible, pos, diag)
	}
	if byPos {
		cr.listed.nodes = feasible
	}
	a.advance(rotate, processed, a.Snapshot.NumNodesInPlacement())
	firstErr := fp.firstErr
	var code schedcore.Code
	if firstErr != nil {
		code = schedcore.Error
	}
	if fw.recorder != nil {
		fw.recorder.ExtensionPoint(fw.profileName, ExtFilter, code, time.Since(start))
	}
	return feasible, firstErr
}

// nextWindow is how many nodes the next window of a sampled pass filters
// to find need more feasible nodes when done nodes were filtered and found
// of them feasible: need at first, then as many as the pass rate so far
// says (and a quarter more), so that a pass through mostly failing nodes
// takes a few windows rather than one for each 64 nodes (each window is
// a parallel step). Nodes filtered after the last one needed are dropped
// (they are not counted as processed, as kube's are not): a larger window
// changes no decision, it only filters some nodes for nothing.
func nextWindow(need, done, found int) int {
	switch {
	case done == 0:
		return need
	case found == 0:
		return 2 * done
	}
	return need*done/found + need/4
}

// feasibleLists holds the feasible-node lists of finished cycles
// (putFeasible), for the next cycles: a list is as long as the nodes a
// cycle looks for (every node with percentageOfNodesToScore 100), and
// making it anew each cycle was a third of a dry-run's allocated bytes.
var feasibleLists sync.Pool // of *[]*NodeInfo

// getFeasible returns an empty list with room for n nodes.
func getFeasible(n int) []*schedcore.NodeInfo {
	if p, _ := feasibleLists.Get().(*[]*schedcore.NodeInfo); p != nil && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]*schedcore.NodeInfo, 0, n)
}

// putFeasible gives a cycle's feasible list to later cycles, cleared (it
// must not keep replaced nodes alive). Only for a list nothing reads any
// more: SchedulePod's, once the cycle is over.
func putFeasible(l []*schedcore.NodeInfo) {
	if cap(l) == 0 {
		return
	}
	clear(l)
	l = l[:0]
	feasibleLists.Put(&l)
}

// filterBlock is how many nodes findNodesThatPassFilters filters as one
// piece of parallel work.
const filterBlock = 16

// minParallelFilterBlocks is the fewest blocks a window filters in
// parallel (1024 nodes). A parallel step costs some microseconds of CPU
// (the worker's start, the wake-up of an idle processor and its search for
// more work when the step ends) and, with a node at 20-50 ns, only a window
// of a thousand nodes or more gives the other worker as much work as the
// step costs. The windows of a sampled pass (about 500 nodes, a tenth of
// 5000, then short ones) run on the calling goroutine: in parallel they
// took more CPU for the step than they saved (Mixed/5000Nodes with
// adaptive sampling, 2 CPUs: 10-25% more pods per CPU-second), and so do
// its longer windows (filterPass.runWindow). A pass over every node of a
// large cluster still runs in parallel.
const minParallelFilterBlocks = 64

// minParallelSampledBlocks is the fewest blocks a window of a sampled
// pass filters in parallel (4096 nodes): the first window of a pod in a
// cluster of 100,000 nodes (5000) is filtered on both CPUs, one of a
// 5000-node cluster (500) still on the calling goroutine. On 2 CPUs the
// 100,000-node dry-run (hack/gensnap Mixed, 20,000 pending pods) filters
// about 8 CPU-seconds, nearly all in such windows, which ran on one CPU.
const minParallelSampledBlocks = 256

func (a *Algorithm) advance(rotate bool, processed, all int) {
	if !rotate || all == 0 {
		return
	}
	a.mu.Lock()
	a.nextStartNodeIndex = (a.nextStartNodeIndex + processed) % all
	a.mu.Unlock()
}
