package top

import (
	"math"
	"sort"
)

// Bucket is one cumulative histogram bucket: the count of observations less
// than or equal to UpperBound.
type Bucket struct {
	UpperBound float64
	Count      float64
}

// BucketQuantile is Prometheus' histogram_quantile over classic buckets
// (promql bucketQuantile): the buckets are sorted by upper bound, buckets
// with equal bounds merged, tiny float errors and non-monotonic counts
// evened out; the quantile is interpolated linearly inside the bucket that
// holds rank q*count, from 0 (or the previous bound) to its upper bound. A
// rank in the +Inf bucket gives the highest finite bound; a lowest bucket
// with a bound <= 0 gives that bound.
//
// NaN is returned for a NaN q, fewer than two buckets, no +Inf bucket or no
// observations; -Inf for q < 0 and +Inf for q > 1, as in PromQL. The input
// slice is not modified.
func BucketQuantile(q float64, in []Bucket) float64 {
	switch {
	case math.IsNaN(q):
		return math.NaN()
	case q < 0:
		return math.Inf(-1)
	case q > 1:
		return math.Inf(+1)
	}
	if len(in) == 0 {
		return math.NaN()
	}
	b := append([]Bucket(nil), in...)
	sort.SliceStable(b, func(i, j int) bool { return b[i].UpperBound < b[j].UpperBound })
	if !math.IsInf(b[len(b)-1].UpperBound, +1) {
		return math.NaN()
	}
	b = coalesce(b)
	evenOutPrecision(b, 1e-12)
	forceMonotonic(b)
	if len(b) < 2 {
		return math.NaN()
	}
	total := b[len(b)-1].Count
	if total == 0 {
		return math.NaN()
	}
	rank := q * total
	i := sort.Search(len(b)-1, func(i int) bool { return b[i].Count >= rank })
	if i == len(b)-1 {
		return b[len(b)-2].UpperBound
	}
	if i == 0 && b[0].UpperBound <= 0 {
		return b[0].UpperBound
	}
	start, end, count := 0.0, b[i].UpperBound, b[i].Count
	if i > 0 {
		start = b[i-1].UpperBound
		count -= b[i-1].Count
		rank -= b[i-1].Count
	}
	return start + (end-start)*(rank/count)
}

// coalesce merges sorted buckets with the same upper bound.
func coalesce(b []Bucket) []Bucket {
	out := b[:1]
	for _, x := range b[1:] {
		if last := &out[len(out)-1]; x.UpperBound == last.UpperBound {
			last.Count += x.Count
		} else {
			out = append(out, x)
		}
	}
	return out
}

// evenOutPrecision sets a count that differs from the previous one by a
// relative error within tolerance to the previous one.
func evenOutPrecision(b []Bucket, tolerance float64) {
	prev := b[0].Count
	for i := 1; i < len(b); i++ {
		cur := b[i].Count
		d := math.Abs(cur - prev)
		if d == 0 {
			continue
		}
		if d/cur <= tolerance {
			b[i].Count = prev
		} else {
			prev = cur
		}
	}
}

// forceMonotonic removes decreases between successive buckets.
func forceMonotonic(b []Bucket) {
	m := b[0].Count
	for i := 1; i < len(b); i++ {
		if b[i].Count > m {
			m = b[i].Count
		} else {
			b[i].Count = m
		}
	}
}
