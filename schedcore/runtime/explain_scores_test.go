package runtime

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// listScores gives every node the lists a list of its own would hold, and
// nodes share lists only when all their raw and normalized scores are
// equal: also when the rows' hashes collide (here, all of them or half), and when a node differs from the one before it.
func TestListScoresSharesOnlyEqualRows(t *testing.T) {
	rng := rand.New(rand.NewSource(4))
	for round := 0; round < 60; round++ {
		nodes, np := 1+rng.Intn(60), 1+rng.Intn(4)
		b := &scoreBuffers{}
		for j := 0; j < np; j++ {
			b.names = append(b.names, fmt.Sprint("P", j))
			b.weights = append(b.weights, int64(1+rng.Intn(3)))
			col := make([]int64, nodes)
			// A plugin's normalized scores are a column (NormalizeColumn)
			// or its raw scores.
			var norm []int64
			if rng.Intn(2) == 0 {
				norm = make([]int64, nodes)
			}
			for i := range col {
				col[i] = int64(rng.Intn(3))
				// The normalized score tells apart nodes of equal raw scores.
				if norm != nil {
					norm[i] = col[i]*10 + int64(rng.Intn(2))
				}
			}
			b.raw, b.cols = append(b.raw, col), append(b.cols, norm)
		}
		each := func(f func(i int) uint64) func(h []uint64) {
			return func(h []uint64) {
				for i := range h {
					h[i] = f(i)
				}
			}
		}
		hashes := map[string]func(h []uint64){
			"rowHashes": b.rowHashes,
			"constant":  each(func(int) uint64 { return 7 }),
			"one bit":   each(func(i int) uint64 { return b.rowHash(i) & 1 }),
		}
		// The column-wise hashes are the row-wise ones.
		h := make([]uint64, nodes)
		b.rowHashes(h)
		for i := range h {
			if h[i] != b.rowHash(i) {
				t.Fatalf("round %d: node %d: rowHashes %x, rowHash %x", round, i, h[i], b.rowHash(i))
			}
		}
		for name, h := range hashes {
			out := make([]schedcore.NodePluginScores, nodes)
			b.listScoresBy(out, h)
			for i := range out {
				rs, ws := b.pluginScores(i, make([]schedcore.PluginScore, np), make([]schedcore.PluginScore, np))
				if !slices.Equal(out[i].RawScores, rs) || !slices.Equal(out[i].Scores, ws) {
					t.Fatalf("round %d, %s: node %d has %v %v, want %v %v", round, name, i, out[i].RawScores, out[i].Scores, rs, ws)
				}
				for k := range i {
					shared := &out[k].RawScores[0] == &out[i].RawScores[0]
					if shared != (&out[k].Scores[0] == &out[i].Scores[0]) {
						t.Fatalf("round %d, %s: nodes %d and %d share one list of two", round, name, k, i)
					}
					if equal := b.sameRow(k, i); shared != equal {
						t.Fatalf("round %d, %s: nodes %d and %d: shared %v, equal rows %v", round, name, k, i, shared, equal)
					}
				}
			}
		}
	}
}
