package runtime

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

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// RunPreScorePlugins runs PreScore plugins; Skip marks the plugin's Score
// skipped, anything else but Success fails the cycle.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodes []*schedcore.NodeInfo) *schedcore.Status {
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
			st := schedcore.AsStatus(fmt.Errorf("running PreScore plugin %q: %w", pl.Name(), s.AsError()))
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
// scores into the framework's buffers (CycleOptions.ReuseScoreBuffers).
func (f *Framework) RunScorePlugins(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodes []*schedcore.NodeInfo) ([]schedcore.NodePluginScores, *schedcore.Status) {
	start := time.Now()
	var b *scoreBuffers
	lazy := false
	if cr := peekRun(state); cr.opts.ReuseScoreBuffers && cr.scoreBufs == nil && f.scoreBufMu.TryLock() {
		cr.scoreBufs = f
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
			out[i] = schedcore.NodePluginScores{Name: n.Name(), RawScores: []schedcore.PluginScore{}, Scores: []schedcore.PluginScore{}}
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
	pos := peekRun(state).listed.positions(snap, nodes)
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
				gens[k], out[i].Name = snap.ListedAt(ps[k])
			} else {
				n := nodes[i]
				ps[k], gens[k], out[i].Name = n.ListIndex(), n.Generation, n.Name()
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
					if sc, ok := v.GetAt(ps[k], gens[k]); ok {
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
				var s *schedcore.Status
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
					views[j].PutAt(ps[k], gens[k], uint16(sc))
				}
				col[k] = sc
			}
		}
	})
	if firstErr != nil {
		st := schedcore.AsStatus(fmt.Errorf("running Score plugins: %w", firstErr))
		f.observe(ExtScore, st, start)
		return nil, st
	}
	if err := ctx.Err(); err != nil {
		// Until stopped early: the nodes it did not reach have no scores.
		st := schedcore.AsStatus(err)
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
			st := schedcore.AsStatus(fmt.Errorf("running Normalize on Score plugins: plugin %q failed with: %w", f.score[pi].Name(), s.AsError()))
			f.observe(ExtScore, st, start)
			return nil, st
		}
	}
	// Totals plugin by plugin, a column at a time, summed in a dense
	// column and then set once per node.
	totals := b.totals[:len(out)]
	clear(totals)
	lo, hi := int64(schedcore.MinNodeScore), int64(schedcore.MaxNodeScore)
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
	valid := lo >= schedcore.MinNodeScore && hi <= schedcore.MaxNodeScore
	if !valid {
		// The first invalid score in node order, as a per-node pass finds it.
		for i := range out {
			for j, pi := range idx {
				if sc := b.normalized(j, i); sc > schedcore.MaxNodeScore || sc < schedcore.MinNodeScore {
					st := schedcore.AsStatus(fmt.Errorf("applying score defaultWeights on Score plugins: plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing",
						f.score[pi].Name(), sc, schedcore.MinNodeScore, schedcore.MaxNodeScore))
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
func (f *Framework) uniformScores(state *schedcore.CycleState, pod *v1.Pod, idx []int, b *scoreBuffers) []bool {
	b.uniform = resetSlice(b.uniform, len(idx))
	uniform := b.uniform
	if state.RecordPluginMetrics {
		return uniform
	}
	for j, pi := range idx {
		u, ok := f.score[pi].(schedcore.UniformScorer)
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
func (f *Framework) scoreViews(state *schedcore.CycleState, pod *v1.Pod, idx []int, b *scoreBuffers) ([]schedcore.VerdictView, []bool) {
	b.views, b.memo = resetSlice(b.views, len(idx)), resetSlice(b.memo, len(idx))
	views, memo := b.views, b.memo
	snap := f.handle.Snapshot()
	if state.RecordPluginMetrics || snap == nil || snap.NumNodes() == 0 {
		return views, memo
	}
	k := schedcore.GetScratchKey()
	defer schedcore.PutScratchKey(k)
	for j, pi := range idx {
		if pi >= len(f.scoreMemo) || f.scoreMemo[pi] == nil {
			continue
		}
		k.Reset()
		if f.score[pi].(schedcore.NodeLocalScorer).ScoreKey(state, pod, k) {
			var t *schedcore.VerdictTable
			views[j], t = f.scoreMemo[pi].PinnedView(k, snap.NumNodes())
			memo[j] = true
			b.pins = append(b.pins, scorePin{f.scoreMemo[pi], t})
		}
	}
	return views, memo
}
