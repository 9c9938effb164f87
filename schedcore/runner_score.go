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
func (f *Framework) RunScorePlugins(ctx context.Context, state *CycleState, pod *v1.Pod, nodes []*NodeInfo) ([]NodePluginScores, *Status) {
	start := time.Now()
	idx := make([]int, 0, len(f.score))
	for i, pl := range f.score {
		if !state.SkipScorePlugins.Has(pl.Name()) {
			idx = append(idx, i)
		}
	}
	np := len(idx)
	var out []NodePluginScores
	var raw, weighted []PluginScore
	var lists []NodeScoreList
	if state.ReuseScoreBuffers && state.scoreBufs == nil && f.scoreBufMu.TryLock() {
		state.scoreBufs = f
		out, raw, weighted, lists = f.scoreBuf.get(len(nodes), np)
	} else {
		// One backing array for every node's score slices: two allocations
		// per cycle rather than two per node.
		out = make([]NodePluginScores, len(nodes))
		raw = make([]PluginScore, len(nodes)*np)
		weighted = make([]PluginScore, len(nodes)*np)
		lists = make([]NodeScoreList, np)
		for j := range lists {
			lists[j] = make(NodeScoreList, len(nodes))
		}
	}
	if np == 0 {
		for i, n := range nodes {
			out[i] = NodePluginScores{Name: n.Name(), RawScores: []PluginScore{}, Scores: []PluginScore{}}
		}
		return out, nil
	}
	views, memo := f.scoreViews(state, pod, idx)
	// The plugins' names, read once rather than per node.
	names := make([]string, np)
	for j, pi := range idx {
		names[j] = f.score[pi].Name()
	}
	var errOnce sync.Once
	var firstErr error
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	f.handle.Parallelizer().Until(cctx, len(nodes), func(i int) {
		n := nodes[i]
		name := n.Name()
		rs := raw[i*np : (i+1)*np : (i+1)*np]
		for j, pi := range idx {
			pl := f.score[pi]
			if memo[j] {
				if v, ok := views[j].Get(n); ok {
					rs[j] = PluginScore{Name: names[j], Score: int64(v)}
					lists[j][i] = NodeScore{Name: name, Score: int64(v)}
					continue
				}
			}
			var sc int64
			var s *Status
			if state.RecordPluginMetrics && f.recorder != nil {
				t := time.Now()
				sc, s = pl.Score(cctx, state, pod, n)
				f.recorder.Plugin(pl.Name(), ExtScore, s.Code(), time.Since(t))
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
				views[j].Put(n, uint16(sc))
			}
			rs[j] = PluginScore{Name: names[j], Score: sc}
			lists[j][i] = NodeScore{Name: name, Score: sc}
		}
		out[i] = NodePluginScores{Name: name, RawScores: rs}
	})
	if firstErr != nil {
		st := AsStatus(fmt.Errorf("running Score plugins: %w", firstErr))
		f.observe(ExtScore, st, start)
		return nil, st
	}
	for j, pi := range idx {
		norm := f.scoreNorm[pi]
		if norm == nil {
			continue
		}
		if s := norm.NormalizeScore(ctx, state, pod, lists[j]); !s.IsSuccess() {
			st := AsStatus(fmt.Errorf("running Normalize on Score plugins: plugin %q failed with: %w", f.score[pi].Name(), s.AsError()))
			f.observe(ExtScore, st, start)
			return nil, st
		}
	}
	for i := range nodes {
		ws := weighted[i*np : (i+1)*np : (i+1)*np]
		var total int64
		for j, pi := range idx {
			sc := lists[j][i].Score
			if sc > MaxNodeScore || sc < MinNodeScore {
				st := AsStatus(fmt.Errorf("applying score defaultWeights on Score plugins: plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing",
					f.score[pi].Name(), sc, MinNodeScore, MaxNodeScore))
				f.observe(ExtScore, st, start)
				return nil, st
			}
			w := sc * f.scoreWeight[pi]
			ws[j] = PluginScore{Name: names[j], Score: w}
			total += w
		}
		out[i].Scores = ws
		out[i].TotalScore = total
	}
	f.observe(ExtScore, nil, start)
	return out, nil
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

// scoreBuffers are RunScorePlugins' slices, kept between cycles.
type scoreBuffers struct {
	out           []NodePluginScores
	raw, weighted []PluginScore
	lists         []NodeScoreList
}

// get returns the buffers sized for nodes × plugins, growing them when
// needed; their contents are stale and overwritten by the caller.
func (b *scoreBuffers) get(nodes, plugins int) ([]NodePluginScores, []PluginScore, []PluginScore, []NodeScoreList) {
	if cap(b.out) < nodes {
		b.out = make([]NodePluginScores, nodes)
	}
	if cap(b.raw) < nodes*plugins {
		b.raw = make([]PluginScore, nodes*plugins)
		b.weighted = make([]PluginScore, nodes*plugins)
	}
	for len(b.lists) < plugins {
		b.lists = append(b.lists, nil)
	}
	for j := 0; j < plugins; j++ {
		if cap(b.lists[j]) < nodes {
			b.lists[j] = make(NodeScoreList, nodes)
		}
		b.lists[j] = b.lists[j][:nodes]
	}
	out := b.out[:nodes]
	for i := range out {
		out[i] = NodePluginScores{}
	}
	return out, b.raw[:nodes*plugins], b.weighted[:nodes*plugins], b.lists[:plugins]
}

// releaseScoreBuffers gives the framework's score buffers back, if state
// holds them.
func releaseScoreBuffers(state *CycleState) {
	if f := state.scoreBufs; f != nil {
		state.scoreBufs = nil
		f.scoreBufMu.Unlock()
	}
}

// detachScores copies the first n entries of scores (and their per-plugin
// slices) out of reused buffers.
func detachScores(scores []NodePluginScores, n int) []NodePluginScores {
	n = min(n, len(scores))
	out := make([]NodePluginScores, n)
	for i := 0; i < n; i++ {
		out[i] = scores[i]
		out[i].RawScores = append([]PluginScore(nil), scores[i].RawScores...)
		out[i].Scores = append([]PluginScore(nil), scores[i].Scores...)
	}
	return out
}
