package runtime

import "github.com/kubectl-sched/kubectl-sched/schedcore"

// scorePin is a score memo's table that a cycle's view pins.
type scorePin struct {
	memo  *schedcore.VerdictMemo
	table *schedcore.VerdictTable
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
	out []schedcore.NodePluginScores
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
	views   []schedcore.VerdictView
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
func (b *scoreBuffers) get(f *Framework, idx []int, nodes int, clearOut bool) []schedcore.NodePluginScores {
	np := len(idx)
	if cap(b.out) < nodes {
		b.out = make([]schedcore.NodePluginScores, nodes)
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
func (b *scoreBuffers) pluginScores(i int, rs, ws []schedcore.PluginScore) ([]schedcore.PluginScore, []schedcore.PluginScore) {
	for j, name := range b.names {
		rs[j] = schedcore.PluginScore{Name: name, Score: b.raw[j][i]}
		ws[j] = schedcore.PluginScore{Name: name, Score: b.normalized(j, i) * b.weights[j]}
	}
	return rs, ws
}

// releaseScoreBuffers gives the framework's score buffers back, if state
// holds them.
func releaseScoreBuffers(state *schedcore.CycleState) {
	cr := peekRun(state)
	if f := cr.scoreBufs; f != nil {
		cr.scoreBufs = nil
		f.scoreBufMu.Unlock()
	}
}

// detachScores copies the entries chosen and runnerUp (-1: none) of
// scores, the framework's buffers that state holds, with (plugins) their
// per-plugin scores, which RunScorePlugins left in the buffers' columns.
func detachScores(state *schedcore.CycleState, scores []schedcore.NodePluginScores, chosen, runnerUp int, plugins bool) []schedcore.NodePluginScores {
	b := &peekRun(state).scoreBufs.scoreBuf
	keep := [2]int{chosen, runnerUp}
	k := 1
	if runnerUp >= 0 {
		k = 2
	}
	out := make([]schedcore.NodePluginScores, k)
	for j, i := range keep[:k] {
		// Name and TotalScore only: the buffers' lists may be a past
		// cycle's (get does not clear them); set below when asked for.
		out[j] = schedcore.NodePluginScores{Name: scores[i].Name, TotalScore: scores[i].TotalScore}
	}
	if !plugins {
		return out
	}
	np := len(b.names)
	rs, ws := make([]schedcore.PluginScore, k*np), make([]schedcore.PluginScore, k*np)
	for j, i := range keep[:k] {
		out[j].RawScores, out[j].Scores = b.pluginScores(i, rs[j*np:(j+1)*np:(j+1)*np], ws[j*np:(j+1)*np:(j+1)*np])
	}
	return out
}
