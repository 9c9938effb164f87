package helper

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The framework hands ColumnNormalizers a column of scores instead of a
// list: the column must come out as the list does.
func TestDefaultNormalizeColumnIsDefaultNormalizeScore(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for n := range 200 {
		scores := make([]int64, rng.Intn(20))
		for i := range scores {
			if n%5 != 0 { // every fifth column is all zero
				scores[i] = rng.Int63n([]int64{3, 100, 1 << 20}[n%3])
			}
		}
		for _, reverse := range []bool{false, true} {
			list := make(schedcore.NodeScoreList, len(scores))
			for i, s := range scores {
				list[i] = schedcore.NodeScore{Name: fmt.Sprint("node", i), Score: s}
			}
			col := make([]int64, len(scores))
			copy(col, scores)
			if s := DefaultNormalizeScore(schedcore.MaxNodeScore, reverse, list); s != nil {
				t.Fatal(s)
			}
			if s := DefaultNormalizeColumn(schedcore.MaxNodeScore, reverse, col); s != nil {
				t.Fatal(s)
			}
			want := make([]int64, len(list))
			for i := range list {
				want[i] = list[i].Score
			}
			if diff := cmp.Diff(want, col); diff != "" {
				t.Fatalf("scores %v, reverse %v (-list +column):\n%s", scores, reverse, diff)
			}
		}
	}
}
