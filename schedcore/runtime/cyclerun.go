package runtime

import (
	"sync"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// cycleRun is what the runner keeps for one scheduling cycle, carried by
// the cycle's CycleState (CycleState.Runner) but private to the runtime:
// the filter set RunPreFilterPlugins computed, the filter loop's list
// positions, the score buffers the cycle holds and the caller's options.
// A clone of the state (preemption's, nominated pods' "what if") carries
// the filter set only (CloneRunnerState).
type cycleRun struct {
	// filters are the profile's filter plugins minus SkipFilterPlugins,
	// computed once after PreFilter so the per-node loop does no lookups.
	filters    []schedcore.FilterPlugin
	filtersFor *Framework
	// filterViews are the remembered passes of the NodeLocalFilters among
	// filters (aligned with them; remembered[i] says whether filters[i]
	// has a view this cycle).
	filterViews []schedcore.VerdictView
	remembered  []bool
	// filterRejects are the remembered rejections' statuses of those
	// filters (aligned with filters, as filterViews).
	filterRejects []*schedcore.RejectTable
	// listed says where the feasible nodes findNodesThatPassFilters
	// found are in the snapshot's list, for RunScorePlugins.
	listed listedNodes
	// noNominatedPods is set when no pod is nominated anywhere this cycle,
	// so the per-node nominated-pods check is skipped.
	noNominatedPods bool
	// opts are the options of the SchedulePod call running this cycle.
	opts CycleOptions
	// scoreBufs is the framework whose buffers this cycle holds.
	scoreBufs *Framework
}

// CycleOptions are how a caller of SchedulePod runs the cycle, kept in
// the cycle's private runner state.
type CycleOptions struct {
	// ReuseScoreBuffers lets RunScorePlugins score into the framework's
	// buffers of the previous cycle instead of allocating; SchedulePod
	// then keeps only the chosen and runner-up nodes' scores (copied) in
	// its result. The scheduler loop sets it; Explain, which keeps every
	// node's scores, does not.
	ReuseScoreBuffers bool
	// DiagnoseFailuresOnly says that the caller reads a successful
	// cycle's Diagnosis for nothing but the nodes evaluated
	// (ScheduleResult.EvaluatedNodes): a filter pass that finds some
	// node then counts the rejected nodes instead of recording each one's
	// status and plugin (most of the cost of a node rejected by a
	// remembered verdict); a pass that finds none filters the nodes
	// again, recording them, so that a failure's diagnosis is kube's.
	// The scheduler loop sets it (it releases a successful cycle's
	// diagnosis unread); Explain, which shows every node's status, does
	// not.
	DiagnoseFailuresOnly bool
}

// runOf returns the runner state state carries, setting an empty one
// first if it has none.
func runOf(state *schedcore.CycleState) *cycleRun {
	if r, ok := state.Runner().(*cycleRun); ok {
		return r
	}
	r := new(cycleRun)
	state.SetRunner(r)
	return r
}

// peekRun returns the runner state state carries, or an empty one (not
// set on state) when it has none: for the readers of the filter set.
func peekRun(state *schedcore.CycleState) *cycleRun {
	if r, ok := state.Runner().(*cycleRun); ok {
		return r
	}
	return &emptyRun
}

var emptyRun cycleRun

// ListedPositions answers CycleState.ListedPositions.
func (r *cycleRun) ListedPositions(snap *schedcore.Snapshot, nodes []*schedcore.NodeInfo) []int32 {
	return r.listed.positions(snap, nodes)
}

// CloneRunnerState returns the filter set for a clone of the state.
func (r *cycleRun) CloneRunnerState() schedcore.RunnerState {
	return &cycleRun{filters: r.filters, filtersFor: r.filtersFor, filterViews: r.filterViews, remembered: r.remembered, filterRejects: r.filterRejects, noNominatedPods: r.noNominatedPods}
}

// reset empties r for another cycle.
func (r *cycleRun) reset() { *r = cycleRun{} }

// sameList reports whether a and b are the same slice (not only equal).
func sameList(a, b []*schedcore.NodeInfo) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// listedNodes are a cycle's feasible nodes (nodes) with their positions
// in the snapshot's list (pos), as findNodesThatPassFilters found them,
// so that RunScorePlugins reads their names and generations from the
// snapshot's columns. They hold for that snapshot at that generation.
type listedNodes struct {
	nodes []*schedcore.NodeInfo
	pos   *[]int32
	snap  *schedcore.Snapshot
	gen   int64
}

var listedPositions = sync.Pool{New: func() any { return new([]int32) }}

// start forgets earlier nodes and returns an empty list of positions in
// snap, with room for n.
func (l *listedNodes) start(snap *schedcore.Snapshot, n int) *[]int32 {
	l.release()
	p := listedPositions.Get().(*[]int32)
	if cap(*p) < n {
		*p = make([]int32, 0, n)
	}
	*l = listedNodes{pos: p, snap: snap, gen: snap.Generation()}
	return p
}

// positions returns the positions of nodes in snap's list, if nodes are
// the listed nodes and snap has not changed since; nil otherwise.
func (l *listedNodes) positions(snap *schedcore.Snapshot, nodes []*schedcore.NodeInfo) []int32 {
	if l.pos == nil || snap == nil || l.snap != snap || l.gen != snap.Generation() || !sameList(nodes, l.nodes) {
		return nil
	}
	return *l.pos
}

// release gives the positions back for later cycles.
func (l *listedNodes) release() {
	if l.pos != nil {
		*l.pos = (*l.pos)[:0]
		listedPositions.Put(l.pos)
	}
	*l = listedNodes{}
}
