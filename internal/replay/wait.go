package replay

import (
	"math"
	"sort"
)

// windowedQuantiles returns, for each sample time, the nearest-rank p50
// and p99 of the waits of the pods placed in (t-window, t]; 0 when none.
// A window of 0 or less takes every pod placed up to t. Exact: the waits
// are ranked once and counted in a Fenwick tree as pods enter and leave
// the window, O((samples + pods) log pods).
func windowedQuantiles(times []float64, placed []placedWait, window float64) (p50, p99 []float64) {
	p50, p99 = make([]float64, len(times)), make([]float64, len(times))
	if len(placed) == 0 {
		return p50, p99
	}
	sort.SliceStable(placed, func(i, j int) bool { return placed[i].at < placed[j].at })
	vals := make([]float64, len(placed))
	for i, p := range placed {
		vals[i] = p.wait
	}
	sort.Float64s(vals)
	rank := func(w float64) int { return sort.SearchFloat64s(vals, w) } // first index with that value
	f := newFenwick(len(vals))
	in, out, n := 0, 0, 0
	for i, t := range times {
		for in < len(placed) && placed[in].at <= t {
			f.add(rank(placed[in].wait), 1)
			in++
			n++
		}
		for window > 0 && out < in && placed[out].at <= t-window {
			f.add(rank(placed[out].wait), -1)
			out++
			n--
		}
		if n == 0 {
			continue
		}
		p50[i] = vals[f.kth(nearestRank(0.5, n))]
		p99[i] = vals[f.kth(nearestRank(0.99, n))]
	}
	return p50, p99
}

// nearestRank is the 1-based rank of quantile q among n values.
func nearestRank(q float64, n int) int {
	// The epsilon keeps 0.99*100 = 99.00000000000001 at rank 99.
	k := int(math.Ceil(q*float64(n) - 1e-9))
	return min(max(k, 1), n)
}

// fenwick counts values by rank.
type fenwick struct {
	t    []int
	step int
}

func newFenwick(n int) *fenwick {
	step := 1
	for step*2 <= n {
		step *= 2
	}
	return &fenwick{t: make([]int, n+1), step: step}
}

func (f *fenwick) add(i, d int) {
	for i++; i < len(f.t); i += i & -i {
		f.t[i] += d
	}
}

// kth returns the 0-based rank holding the k-th (1-based) counted value.
func (f *fenwick) kth(k int) int {
	pos := 0
	for s := f.step; s > 0; s /= 2 {
		if pos+s < len(f.t) && f.t[pos+s] < k {
			pos += s
			k -= f.t[pos]
		}
	}
	return pos
}
