package schedcore

import "testing"

// A SelectorCount keeps the index's non-zero counts as they are only when
// their positions are ascending (sparseAt searches them) and few; the
// counts read back are the ones put in, by position, either way.
func TestSparseCountsNeedAscendingPositions(t *testing.T) {
	for _, tc := range []struct {
		name string
		pos  []int32
		n    int
		want bool
	}{
		{"no counts", nil, 5000, true},
		{"a few ascending", []int32{3, 9, 4000}, 5000, true},
		{"a repeated position", []int32{3, 3}, 5000, false},
		{"out of order", []int32{9, 3}, 5000, false},
		{"too many for the list", make([]int32, 9), 16, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := sparseCounts(tc.pos, tc.n); got != tc.want {
				t.Errorf("sparseCounts(%v, %d) = %v, want %v", tc.pos, tc.n, got, tc.want)
			}
		})
	}
	c := SelectorCount{nzPos: []int32{3, 9, 4000}, nzCount: []int32{1, 2, 3}}
	for pos, want := range map[int]int32{0: 0, 3: 1, 4: 0, 9: 2, 3999: 0, 4000: 3, 4999: 0} {
		if got := c.sparseAt(pos); got != want {
			t.Errorf("sparseAt(%d) = %d, want %d", pos, got, want)
		}
	}
}
