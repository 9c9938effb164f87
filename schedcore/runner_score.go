package schedcore

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// RunPreScorePlugins runs PreScore plugins; Skip marks the plugin's Score
// skipped, anything else but Success fails the cycle.
func (f *Framework) RunPreScorePlugins(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*NodeInfo) *Status {
	start := time.Now()
	skip := sets.New[string]()
	defer func() { state.SkipScorePlugins = skip }()
	for _, pl := range f.preScore {
		s := pl.PreScore(ctx, state, pod, nodes)
		if s.IsSkip() {
			skip.Insert(pl.Name())
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
	idx := make([]int, 0, len(f.score))
	for i, pl := range f.score {
		if !state.SkipScorePlugins.Has(pl.Name()) {
			idx = append(idx, i)
		}
	}
	np := len(idx)
	var b *scoreBuffers
	lazy := false
	if state.ReuseScoreBuffers && state.scoreBufs == nil && f.scoreBufMu.TryLock() {
		state.scoreBufs = f
		b, lazy = &f.scoreBuf, true
	} else {
		b = getSpareScoreBuffers()
		defer putSpareScoreBuffers(b)
	}
	out := b.get(f, idx, len(nodes))
	if np == 0 {
		for i, n := range nodes {
			out[i] = NodePluginScores{Name: n.Name(), RawScores: []PluginScore{}, Scores: []PluginScore{}}
		}
		return out, nil
	}
	views, memo := f.scoreViews(state, pod, idx)
	uniform := f.uniformScores(state, pod, idx, b)
	raw, listed := b.raw, b.listed
	var errOnce sync.Once
	var firstErr error
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The feasible nodes that findNodesThatPassFilters found in the
	// snapshot's list: their names and generations are read from the
	// snapshot's columns, and a node whose scores are all remembered is
	// never reached.
	snap := f.handle.Snapshot()
	pos := state.listed.positions(snap, nodes)
	f.handle.Parallelizer().Until(cctx, len(nodes), func(i int) {
		n := nodes[i]
		var p int
		var gen int64
		if pos != nil {
			p = int(pos[i])
			gen, out[i].Name = snap.listedAt(p)
		} else {
			p, gen, out[i].Name = n.listIndex(), n.Generation, n.Name()
		}
		for j, pi := range idx {
			if uniform[j] {
				continue
			}
			if memo[j] {
				if v, ok := views[j].getAt(p, gen); ok {
					raw[j][i] = int64(v)
					continue
				}
			}
			pl := f.score[pi]
			var sc int64
			var s *Status
			if state.RecordPluginMetrics && f.recorder != nil {
				t := time.Now()
				sc, s = pl.Score(cctx, state, pod, n)
				f.recorder.Plugin(pl.Name(), ExtScore, s.Code(), time.Since(t))
			} else if ls := listed[j]; ls != nil && pos != nil {
				sc, s = ls.ScoreListed(cctx, state, pod, n, p, gen)
			} else {
				sc, s = pl.Score(cctx, state, pod, n)
			}
			if !s.IsSuccess() {
				errOnce.Do(func() {
					firstErr = fmt.Errorf("plugin %q failed with: %w", pl.Name(), s.AsError())
					cancel()
				})
				return
			}
			if memo[j] && sc >= 0 && sc <= math.MaxUint16 {
				views[j].putAt(p, gen, uint16(sc))
			}
			raw[j][i] = sc
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
		list := b.lists[j]
		for i := range list {
			list[i] = NodeScore{Name: out[i].Name, Score: raw[j][i]}
		}
		if s := norm.NormalizeScore(ctx, state, pod, list); !s.IsSuccess() {
			st := AsStatus(fmt.Errorf("running Normalize on Score plugins: plugin %q failed with: %w", f.score[pi].Name(), s.AsError()))
			f.observe(ExtScore, st, start)
			return nil, st
		}
	}
	// Totals plugin by plugin, a column at a time.
	valid := true
	for j, pi := range idx {
		w := f.scoreWeight[pi]
		for i := range out {
			sc := b.normalized(j, i)
			if sc > MaxNodeScore || sc < MinNodeScore {
				valid = false
			}
			out[i].TotalScore += sc * w
		}
	}
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

// uniformScores fills the raw score column of each plugin of idx whose
// Score is, this cycle, the same on every node (UniformScorer) and
// reports which they are. As with the memos, a sampled cycle that times
// every plugin calls Score on every node.
func (f *Framework) uniformScores(state *CycleState, pod *v1.Pod, idx []int, b *scoreBuffers) []bool {
	uniform := make([]bool, len(idx))
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
// cover every node.
func (f *Framework) scoreViews(state *CycleState, pod *v1.Pod, idx []int) ([]VerdictView, []bool) {
	views, memo := make([]VerdictView, len(idx)), make([]bool, len(idx))
	snap := f.handle.Snapshot()
	if state.RecordPluginMetrics || snap == nil || snap.NumNodes() == 0 {
		return views, memo
	}
	for j, pi := range idx {
		if pi >= len(f.scoreMemo) || f.scoreMemo[pi] == nil {
			continue
		}
		var k MemoKey
		if f.score[pi].(NodeLocalScorer).ScoreKey(state, pod, &k) {
			views[j], memo[j] = f.scoreMemo[pi].View(&k, snap.NumNodes()), true
		}
	}
	return views, memo
}

// scoreBuffers are RunScorePlugins' columns: a cycle's scores by plugin
// (the plugins of that cycle, in order) and node (the index in the
// feasible list).
type scoreBuffers struct {
	out []NodePluginScores
	// raw[j][i] is plugin j's raw score on node i.
	raw [][]int64
	// lists[j] is plugin j's list for NormalizeScore, normalized in place;
	// nil for a plugin without NormalizeScore, whose raw score is final.
	lists []NodeScoreList
	// The cycle's plugins' names and weights.
	names   []string
	weights []int64
	// listed[j] is plugin j as a ListedScorer, nil if it is not one.
	listed []ListedScorer
}

// get sizes the buffers for the cycle's plugins (idx, positions in
// f.score) and nodes, growing them when needed, and returns the cleared
// per-node results; the columns' contents are stale and overwritten by
// the caller.
func (b *scoreBuffers) get(f *Framework, idx []int, nodes int) []NodePluginScores {
	np := len(idx)
	if cap(b.out) < nodes {
		b.out = make([]NodePluginScores, nodes)
	}
	for len(b.raw) < np {
		b.raw = append(b.raw, nil)
		b.lists = append(b.lists, nil)
	}
	b.raw, b.lists = b.raw[:np], b.lists[:np]
	b.names, b.weights, b.listed = b.names[:0], b.weights[:0], b.listed[:0]
	for j, pi := range idx {
		b.names = append(b.names, f.score[pi].Name())
		b.weights = append(b.weights, f.scoreWeight[pi])
		ls, _ := f.score[pi].(ListedScorer)
		b.listed = append(b.listed, ls)
		if cap(b.raw[j]) < nodes {
			b.raw[j] = make([]int64, nodes)
		}
		b.raw[j] = b.raw[j][:nodes]
		if f.scoreNorm[pi] == nil {
			b.lists[j] = b.lists[j][:0]
			continue
		}
		if cap(b.lists[j]) < nodes {
			b.lists[j] = make(NodeScoreList, nodes)
		}
		b.lists[j] = b.lists[j][:nodes]
	}
	out := b.out[:nodes]
	clear(out)
	return out
}

// normalized is plugin j's normalized score on node i.
func (b *scoreBuffers) normalized(j, i int) int64 {
	if len(b.lists[j]) != 0 {
		return b.lists[j][i].Score
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
// scores, the framework's buffers that state holds, with their per-plugin
// scores, which RunScorePlugins left in the buffers' columns.
func detachScores(state *CycleState, scores []NodePluginScores, chosen, runnerUp int) []NodePluginScores {
	b := &state.scoreBufs.scoreBuf
	keep := []int{chosen}
	if runnerUp >= 0 {
		keep = append(keep, runnerUp)
	}
	np := len(b.names)
	out := make([]NodePluginScores, len(keep))
	rs, ws := make([]PluginScore, len(keep)*np), make([]PluginScore, len(keep)*np)
	for k, i := range keep {
		out[k] = scores[i]
		out[k].RawScores, out[k].Scores = b.pluginScores(i, rs[k*np:(k+1)*np:(k+1)*np], ws[k*np:(k+1)*np:(k+1)*np])
	}
	return out
}
