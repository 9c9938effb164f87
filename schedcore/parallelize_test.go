package schedcore

import (
	"context"
	"sync/atomic"
	"testing"
)

// TestUntilAtLeastRunsEveryPieceOnce checks UntilAtLeast below and above
// its minimum: every piece runs exactly once, on the calling goroutine
// when there are fewer pieces than the minimum (their order is then the
// pieces' order).
func TestUntilAtLeastRunsEveryPieceOnce(t *testing.T) {
	par := NewParallelizer(4)
	for _, pieces := range []int{0, 1, 5, 7, 8, 9, 100} {
		runs := make([]atomic.Int32, pieces)
		var order []int
		var concurrent atomic.Int32
		par.UntilAtLeast(context.Background(), pieces, 8, func(i int) {
			runs[i].Add(1)
			if pieces < 8 {
				if concurrent.Add(1) != 1 {
					t.Errorf("%d pieces: piece %d ran beside another", pieces, i)
				}
				order = append(order, i)
				concurrent.Add(-1)
			}
		})
		for i := range runs {
			if n := runs[i].Load(); n != 1 {
				t.Errorf("%d pieces: piece %d ran %d times", pieces, i, n)
			}
		}
		for k, i := range order {
			if i != k {
				t.Errorf("%d pieces: piece %d ran %d-th", pieces, i, k)
			}
		}
	}
}
