package helper

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// kube's TestDefaultNormalizeScore cases, on a column.
func TestDefaultNormalizeColumn(t *testing.T) {
	tests := []struct {
		reverse      bool
		scores, want []int64
	}{
		{scores: []int64{1, 2, 3, 4}, want: []int64{25, 50, 75, 100}},
		{reverse: true, scores: []int64{1, 2, 3, 4}, want: []int64{75, 50, 25, 0}},
		{scores: []int64{1000, 10, 20, 30}, want: []int64{100, 1, 2, 3}},
		{reverse: true, scores: []int64{1000, 10, 20, 30}, want: []int64{0, 99, 98, 97}},
		{scores: []int64{1, 1, 1, 1}, want: []int64{100, 100, 100, 100}},
		{scores: []int64{1000, 1, 1, 1}, want: []int64{100, 0, 0, 0}},
		{reverse: true, scores: []int64{0, 1, 1, 1}, want: []int64{100, 0, 0, 0}},
		{scores: []int64{0, 0, 0, 0}, want: []int64{0, 0, 0, 0}},
		{reverse: true, scores: []int64{0, 0, 0, 0}, want: []int64{100, 100, 100, 100}},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("case %d", i), func(t *testing.T) {
			got := slices.Clone(tt.scores)
			if s := DefaultNormalizeColumn(schedcore.MaxNodeScore, tt.reverse, got); s != nil {
				t.Fatal(s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
