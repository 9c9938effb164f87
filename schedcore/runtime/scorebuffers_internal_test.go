package runtime

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

type constScorer string

func (c constScorer) Name() string { return string(c) }
func (constScorer) Score(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo) (int64, *schedcore.Status) {
	return 1, nil
}

// A cycle scoring with more plugins than the last, after a cycle with
// fewer, reuses the columns made before for the plugins past the fewer:
// each (cycles, nodes) step lists the columns it must find already made.
func TestScoreBuffersKeepColumnsPastFewerPlugins(t *testing.T) {
	f := &Framework{}
	for _, n := range []string{"A", "B", "C"} {
		f.score = append(f.score, constScorer(n))
		f.scoreNorm = append(f.scoreNorm, nil)
		f.scoreWeight = append(f.scoreWeight, 1)
	}
	b := &scoreBuffers{}
	made := map[*int64]bool{}
	for i, tc := range []struct {
		idx   []int
		nodes int
		fresh int // columns made in this step
	}{
		{idx: []int{0, 1, 2}, nodes: 10, fresh: 3},
		{idx: []int{0}, nodes: 10},
		{idx: []int{0, 1, 2}, nodes: 10},
		{idx: []int{1, 2}, nodes: 8},
		{idx: []int{0, 1, 2}, nodes: 10},
		{idx: []int{0, 1, 2}, nodes: 12, fresh: 3},
	} {
		b.get(f, tc.idx, tc.nodes, true)
		if len(b.raw) != len(tc.idx) {
			t.Fatalf("step %d: %d columns for %d plugins", i, len(b.raw), len(tc.idx))
		}
		fresh := 0
		for j, col := range b.raw {
			if len(col) != tc.nodes {
				t.Fatalf("step %d: column %d has %d rows for %d nodes", i, j, len(col), tc.nodes)
			}
			if p := &col[:1][0]; !made[p] {
				made[p] = true
				fresh++
			}
		}
		if fresh != tc.fresh {
			t.Errorf("step %d: %d columns made, want %d", i, fresh, tc.fresh)
		}
	}
}
