package schedcore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// RunPreScorePlugins runs PreScore plugins; Skip marks the plugin's Score
// skipped, anything else but Success fails the cycle.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*NodeInfo) *Status {
	start := time.Now()
	// The names of the plugins that skip, in the profile's order.
	var skipBuf [16]string
	skipped := skipBuf[:0]
	defer func() { state.SkipScorePlugins = f.skipScores(skipped) }()
	for _, pl := range f.preScore {
		s := pl.PreScore(ctx, state, pod, nodes)
		if s.IsSkip() {
			skipped = append(skipped, pl.Name())
			continue
		}
		if !s.IsSuccess() {
			st := AsStatus(fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), s.AsError()))
			f.observe(ExtPreScore, st, start)
			return st
		}
	}
	f.observe(ExtPreScore, nil, start)
	return nil
}

// scoreSkips are the score plugins a cycle's PreScore skips: their names
// (in the profile's order) and set. It is read only, shared by the cycles
// whose PreScore plugins skip the same ones, as filterSet is.
type scoreSkips struct {
	skipped []string
	skip    sets.Set[string]
}

// skipScores returns the set of the plugins named skipped: the last
// cycle's when it skipped the same plugins, else a new one, kept for the
// next cycles. Cycles share it: read it, never change it.
func (f *Framework) skipScores(skipped []string) sets.Set[string] {
	if ss := f.lastScoreSkips.Load(); ss != nil && slices.Equal(ss.skipped, skipped) {
		return ss.skip
	}
	ss := &scoreSkips{skipped: slices.Clone(skipped), skip: sets.New(skipped...)}
	f.lastScoreSkips.Store(ss)
	return ss.skip
}

// RunScorePlugins scores every node with every non-skipped score plugin in
// parallel over nodes, normalizes per plugin, applies the weights and sums,
// exactly as kube's RunScorePlugins. Raw scores are kept for diagnosis.
//
// The scores are kept by plugin, one column of raw scores each, and a
// node's per-plugin lists (RawScores, Scores) are built from the columns:
// for every node when the cycle keeps every node's scores (Explain), and
// only for the nodes SchedulePod keeps (detachScores) when the cycle
// scores into the framework's buffers (ReuseScoreBuffers).
func (f *Framework) RunScorePlugins(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*NodeInfo) ([]NodePluginScores, *Status) {
	start := time.Now()
	var b *scoreBuffers
	lazy := false
	if state.ReuseScoreBuffers && state.scoreBufs == nil && f.scoreBufMu.TryLock() {
		state.scoreBufs = f
		b, lazy = &f.scoreBuf, true
	} else {
		b = getSpareScoreBuffers()
		defer putSpareScoreBuffers(b)
	}
	idx := b.idx[:0]
	for i, pl := range f.score {
		if !state.SkipScorePlugins.Has(pl.Name()) {
			idx = append(idx, i)
		}
	}
	b.idx = idx
	np := len(idx)
	out := b.get(f, idx, len(nodes), !lazy)
	if np == 0 {
		for i, n := range nodes {
			out[i] = NodePluginScores{Name: n.Name(), RawScores: []PluginScore{}, Scores: []PluginScore{}}
		}
		return out, nil
	}
	views, memo := f.scoreViews(state, pod, idx, b)
	defer b.unpinScoreViews()
	uniform := f.uniformScores(state, pod, idx, b)
	raw := b.raw
	// The first error stops the loop: the blocks not started yet return
	// at once (no context of its own: making and cancelling one costs
	// each cycle more than the flag).
	var errOnce sync.Once
	var firstErr error
	var failed atomic.Bool
	// The feasible nodes that findNodesThatPassFilters found in the
	// snapshot's list: their names and generations are read from the
	// snapshot's columns, and a node whose scores are all remembered is
	// never reached.
	snap := f.handle.Snapshot()
	pos := state.listed.positions(snap, nodes)
	// The nodes are scored a block at a time, and within a block plugin
	// by plugin: the remembered scores of a block are read in one tight
	// pass over each plugin's column, and Score runs only on the nodes
	// whose score is not remembered. Each Score is independent of the
	// others, so the order they run in changes nothing.
	blocks := (len(nodes) + scoreBlock - 1) / scoreBlock
	f.handle.Parallelizer().UntilAtLeast(ctx, blocks, minParallelScoreBlocks, func(blk int) {
		if failed.Load() {
			return
		}
		lo, hi := blk*scoreBlock, min(len(nodes), (blk+1)*scoreBlock)
		var ps [scoreBlock]int
		var gens [scoreBlock]int64
		var todo [scoreBlock]uint8
		for i := lo; i < hi; i++ {
			k := i - lo
			if pos != nil {
				ps[k] = int(pos[i])
				gens[k], out[i].Name = snap.listedAt(ps[k])
			} else {
				n := nodes[i]
				ps[k], gens[k], out[i].Name = n.listIndex(), n.Generation, n.Name()
			}
		}
		for j, pi := range idx {
			if uniform[j] {
				continue
			}
			col := raw[j][lo:hi]
			nt := 0
			if memo[j] {
				v := views[j]
				for k := range col {
					if sc, ok := v.getAt(ps[k], gens[k]); ok {
						col[k] = int64(sc)
					} else {
						todo[nt] = uint8(k)
						nt++
					}
				}
			} else {
				for k := range col {
					todo[k] = uint8(k)
				}
				nt = len(col)
			}
			pl := f.score[pi]
			for _, k := range todo[:nt] {
				n := nodes[lo+int(k)]
				var sc int64
				var s *Status
				if state.RecordPluginMetrics && f.recorder != nil {
					t := time.Now()
					sc, s = pl.Score(ctx, state, pod, n)
					f.recorder.Plugin(pl.Name(), ExtScore, s.Code(), time.Since(t))
				} else {
					sc, s = pl.Score(ctx, state, pod, n)
				}
				if !s.IsSuccess() {
					errOnce.Do(func() {
						firstErr = fmt.Errorf("plugin %q failed with: %w", pl.Name(), s.AsError())
						failed.Store(true)
					})
					return
				}
				if memo[j] && sc >= 0 && sc <= math.MaxUint16 {
					views[j].putAt(ps[k], gens[k], uint16(sc))
				}
				col[k] = sc
			}
		}
	})
	if firstErr != nil {
		st := AsStatus(fmt.Errorf("running Score plugins: %w", firstErr))
		f.observe(ExtScore, st, start)
		return nil, st
	}
	if err := ctx.Err(); err != nil {
		// Until stopped early: the nodes it did not reach have no scores.
		st := AsStatus(err)
		f.observe(ExtScore, st, start)
		return nil, st
	}
	for j, pi := range idx {
		norm := f.scoreNorm[pi]
		if norm == nil {
			continue
		}
		col := b.cols[j]
		copy(col, raw[j])
		if s := norm.NormalizeColumn(ctx, state, pod, col); !s.IsSuccess() {
			st := AsStatus(fmt.Errorf("running Normalize on Score plugins: plugin %q failed with: %w", f.score[pi].Name(), s.AsError()))
			f.observe(ExtScore, st, start)
			return nil, st
		}
	}
	// Totals plugin by plugin, a column at a time, summed in a dense
	// column and then set once per node.
	totals := b.totals[:len(out)]
	clear(totals)
	lo, hi := int64(MinNodeScore), int64(MaxNodeScore)
	for j, pi := range idx {
		w := f.scoreWeight[pi]
		col := raw[j]
		if len(b.cols[j]) != 0 {
			col = b.cols[j]
		}
		for i, sc := range col {
			lo, hi = min(lo, sc), max(hi, sc)
			totals[i] += sc * w
		}
	}
	for i := range out {
		out[i].TotalScore = totals[i]
	}
	valid := lo >= MinNodeScore && hi <= MaxNodeScore
	if !valid {
		// The first invalid score in node order, as a per-node pass finds it.
		for i := range out {
			for j, pi := range idx {
				if sc := b.normalized(j, i); sc > MaxNodeScore || sc < MinNodeScore {
					st := AsStatus(fmt.Errorf("applying score defaultWeights on Score plugins: plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing",
						f.score[pi].Name(), sc, MinNodeScore, MaxNodeScore))
					f.observe(ExtScore, st, start)
					return nil, st
				}
			}
		}
	}
	if !lazy {
		b.listScores(out)
	}
	f.observe(ExtScore, nil, start)
	return out, nil
}

// scoreBlock is how many nodes RunScorePlugins scores as one piece of
// parallel work (at most 256: a block's node indexes are bytes).
const scoreBlock = 64

// minParallelScoreBlocks is the fewest blocks RunScorePlugins scores in
// parallel (1024 nodes): as for the filter windows
// (minParallelFilterBlocks), fewer nodes cost more CPU for the parallel
// step than they give the other worker (the 500 feasible nodes of a
// sampled cycle in a 5000-node cluster).
const minParallelScoreBlocks = 16

// uniformScores fills the raw score column of each plugin of idx whose
// Score is, this cycle, the same on every node (UniformScorer) and
// reports which they are. As with the memos, a sampled cycle that times
// every plugin calls Score on every node.
func (f *Framework) uniformScores(state *CycleState, pod *v1.Pod, idx []int, b *scoreBuffers) []bool {
	b.uniform = resetSlice(b.uniform, len(idx))
	uniform := b.uniform
	if state.RecordPluginMetrics {
		return uniform
	}
	for j, pi := range idx {
		u, ok := f.score[pi].(UniformScorer)
		if !ok {
			continue
		}
		if v, ok := u.UniformScore(state, pod); ok {
			uniform[j] = true
			col := b.raw[j]
			for i := range col {
				col[i] = v
			}
		}
	}
	return uniform
}

// scoreViews returns, for each plugin of idx, the view of the raw scores
// remembered for this cycle's key, and whether there is one: only
// NodeLocalScorers whose ScoreKey accepts the cycle have one. A remembered
// score is the plugin's own for the same key and the same node contents, so
// using it changes no decision. As with the filters' (filterViews), a
// sampled cycle that times every plugin remembers nothing, so its timings
// cover every node. The lists are b's, for the cycle holding b.
func (f *Framework) scoreViews(state *CycleState, pod *v1.Pod, idx []int, b *scoreBuffers) ([]VerdictView, []bool) {
	b.views, b.memo = resetSlice(b.views, len(idx)), resetSlice(b.memo, len(idx))
	views, memo := b.views, b.memo
	snap := f.handle.Snapshot()
	if state.RecordPluginMetrics || snap == nil || snap.NumNodes() == 0 {
		return views, memo
	}
	k := getScratchKey()
	defer putScratchKey(k)
	for j, pi := range idx {
		if pi >= len(f.scoreMemo) || f.scoreMemo[pi] == nil {
			continue
		}
		k.b = k.b[:0]
		if f.score[pi].(NodeLocalScorer).ScoreKey(state, pod, k) {
			var t *verdictTable
			views[j], t = f.scoreMemo[pi].PinnedView(k, snap.NumNodes())
			memo[j] = true
			b.pins = append(b.pins, scorePin{f.scoreMemo[pi], t})
		}
	}
	return views, memo
}

// scorePin is a score memo's table that a cycle's view pins.
type scorePin struct {
	memo  *VerdictMemo
	table *verdictTable
}

// unpinScoreViews ends the views scoreViews handed out: RunScorePlugins
// reads and writes them only until it returns.
func (b *scoreBuffers) unpinScoreViews() {
	for _, p := range b.pins {
		p.memo.Unpin(p.table)
	}
	clear(b.pins)
	b.pins = b.pins[:0]
	clear(b.views)
}

// scoreBuffers are RunScorePlugins' columns: a cycle's scores by plugin
// (the plugins of that cycle, in order) and node (the index in the
// feasible list).
type scoreBuffers struct {
	out []NodePluginScores
	// raw[j][i] is plugin j's raw score on node i.
	raw [][]int64
	// cols[j] is plugin j's normalized column when the plugin is a
	// NormalizeScorePlugin, empty otherwise (its raw score is final).
	cols [][]int64
	// The cycle's plugins' names and weights.
	names   []string
	weights []int64
	// totals[i] is node i's weighted sum, before it is set in out.
	totals []int64
	// pins are the memo tables of the cycle's views (scoreViews), until
	// RunScorePlugins returns.
	pins []scorePin
	// The cycle's plugins (positions in Framework.score), their memo
	// views (memo[j]: plugin j has one) and which are uniform.
	idx     []int
	views   []VerdictView
	memo    []bool
	uniform []bool
}

// resetSlice returns s with length n, cleared, reusing its memory when it
// has room.
func resetSlice[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

// get sizes the buffers for the cycle's plugins (idx, positions in
// f.score) and nodes, growing them when needed, and returns the per-node
// results, cleared if clearOut; the columns' contents are stale and
// overwritten by the caller.
//
// The framework's own buffers (a lazy cycle's) need no clearing: such a
// cycle sets every node's Name and TotalScore, and its RawScores and
// Scores are never read (detachScores sets its copies' own); clearing
// 72 bytes a node with pointers costs a cycle about as much as its
// totals.
func (b *scoreBuffers) get(f *Framework, idx []int, nodes int, clearOut bool) []NodePluginScores {
	np := len(idx)
	if cap(b.out) < nodes {
		b.out = make([]NodePluginScores, nodes)
	}
	if cap(b.totals) < nodes {
		b.totals = make([]int64, nodes)
	}
	// The columns past the last cycle's plugins are kept (cut off, not
	// dropped): a cycle with more plugins than the last, after one with
	// fewer, reuses them instead of making new ones.
	b.raw, b.cols = b.raw[:cap(b.raw)], b.cols[:cap(b.cols)]
	for len(b.raw) < np {
		b.raw = append(b.raw, nil)
	}
	for len(b.cols) < np {
		b.cols = append(b.cols, nil)
	}
	b.raw, b.cols = b.raw[:np], b.cols[:np]
	b.names, b.weights = b.names[:0], b.weights[:0]
	for j, pi := range idx {
		b.names = append(b.names, f.score[pi].Name())
		b.weights = append(b.weights, f.scoreWeight[pi])
		if cap(b.raw[j]) < nodes {
			b.raw[j] = make([]int64, nodes)
		}
		b.raw[j] = b.raw[j][:nodes]
		b.cols[j] = b.cols[j][:0]
		if f.scoreNorm[pi] == nil {
			continue
		}
		if cap(b.cols[j]) < nodes {
			b.cols[j] = make([]int64, nodes)
		}
		b.cols[j] = b.cols[j][:nodes]
	}
	out := b.out[:nodes]
	if clearOut {
		clear(out)
	}
	return out
}

// normalized is plugin j's normalized score on node i.
func (b *scoreBuffers) normalized(j, i int) int64 {
	if len(b.cols[j]) != 0 {
		return b.cols[j][i]
	}
	return b.raw[j][i]
}

// pluginScores fills rs and ws with node i's raw and weighted scores.
func (b *scoreBuffers) pluginScores(i int, rs, ws []PluginScore) ([]PluginScore, []PluginScore) {
	for j, name := range b.names {
		rs[j] = PluginScore{Name: name, Score: b.raw[j][i]}
		ws[j] = PluginScore{Name: name, Score: b.normalized(j, i) * b.weights[j]}
	}
	return rs, ws
}

// releaseScoreBuffers gives the framework's score buffers back, if state
// holds them.
func releaseScoreBuffers(state *CycleState) {
	if f := state.scoreBufs; f != nil {
		state.scoreBufs = nil
		f.scoreBufMu.Unlock()
	}
}

// detachScores copies the entries chosen and runnerUp (-1: none) of
// scores, the framework's buffers that state holds, with (plugins) their
// per-plugin scores, which RunScorePlugins left in the buffers' columns.
func detachScores(state *CycleState, scores []NodePluginScores, chosen, runnerUp int, plugins bool) []NodePluginScores {
	b := &state.scoreBufs.scoreBuf
	keep := [2]int{chosen, runnerUp}
	k := 1
	if runnerUp >= 0 {
		k = 2
	}
	out := make([]NodePluginScores, k)
	for j, i := range keep[:k] {
		// Name and TotalScore only: the buffers' lists may be a past
		// cycle's (get does not clear them); set below when asked for.
		out[j] = NodePluginScores{Name: scores[i].Name, TotalScore: scores[i].TotalScore}
	}
	if !plugins {
		return out
	}
	np := len(b.names)
	rs, ws := make([]PluginScore, k*np), make([]PluginScore, k*np)
	for j, i := range keep[:k] {
		out[j].RawScores, out[j].Scores = b.pluginScores(i, rs[j*np:(j+1)*np:(j+1)*np], ws[j*np:(j+1)*np:(j+1)*np])
	}
	return out
}
