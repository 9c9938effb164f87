package top

import (
	"math"
	"testing"
)

// fromSamples builds cumulative buckets of observations with the given
// upper bounds, plus the +Inf bucket. Like component-base's
// samples2Histogram, whose expected values the kube cases below are, it
// counts a sample strictly below a bound.
func fromSamples(samples, bounds []float64) []Bucket {
	var out []Bucket
	for _, ub := range bounds {
		n := 0.0
		for _, s := range samples {
			if s < ub {
				n++
			}
		}
		out = append(out, Bucket{UpperBound: ub, Count: n})
	}
	if !math.IsInf(bounds[len(bounds)-1], +1) {
		out = append(out, Bucket{UpperBound: math.Inf(+1), Count: float64(len(samples))})
	}
	return out
}

// TestBucketQuantileOnKubesHistograms: the cases of component-base's
// metrics/testutil TestHistogramQuantile, whose expected values are what
// kube-scheduler's perf tests and Prometheus compute.
func TestBucketQuantileOnKubesHistograms(t *testing.T) {
	for _, tc := range []struct {
		name          string
		samples       []float64
		bounds        []float64
		p50, p90, p99 float64
	}{
		{"repeating numbers interpolate inside their buckets",
			[]float64{0.5, 0.5, 0.5, 0.5, 1.5, 1.5, 1.5, 1.5, 3, 3, 3, 3, 6, 6, 6, 6}, []float64{1, 2, 4, 8}, 2, 6.4, 7.84},
		{"random numbers",
			[]float64{11, 67, 61, 21, 40, 36, 52, 63, 8, 3, 67, 35, 61, 1, 36, 58}, []float64{10, 20, 40, 80}, 40, 72, 79.2},
		{"an empty last bucket",
			[]float64{6, 34, 30, 10, 20, 18, 26, 31, 4, 2, 33, 17, 30, 1, 18, 29}, []float64{10, 20, 40, 80}, 20, 36, 39.6},
		{"a rank in the +Inf bucket gives the highest finite bound",
			[]float64{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 500}, []float64{10, 20, 40, math.Inf(1)}, 5.3125, 9.5625, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fromSamples(tc.samples, tc.bounds)
			for _, q := range []struct{ q, want float64 }{{0.5, tc.p50}, {0.9, tc.p90}, {0.99, tc.p99}} {
				if got := BucketQuantile(q.q, b); math.Abs(got-q.want) > 1e-9 {
					t.Errorf("q%v = %v, want %v", q.q, got, q.want)
				}
			}
			if got, last := BucketQuantile(0.999999, b), tc.bounds[len(tc.bounds)-1]; !(got <= last) {
				t.Errorf("q0.999999 = %v, want at most %v", got, last)
			}
		})
	}
}

// TestBucketQuantilePromQLSpecialCases: histogram_quantile's documented
// special cases (promql/quantile.go bucketQuantile).
func TestBucketQuantilePromQLSpecialCases(t *testing.T) {
	inf := math.Inf(+1)
	std := []Bucket{{0.1, 10}, {0.2, 30}, {0.4, 40}, {inf, 40}}
	for _, tc := range []struct {
		name    string
		q       float64
		buckets []Bucket
		want    float64
	}{
		{"the median interpolates linearly within its bucket", 0.5, std, 0.1 + 0.1*(10.0/20)},
		{"the lowest bucket interpolates from zero", 0.1, std, 0.1 * 4 / 10},
		{"q=0 is the natural lower bound zero", 0, std, 0},
		{"q=1 is the bound of the last bucket holding observations", 1, std, 0.4},
		{"unsorted buckets are sorted first", 0.5, []Bucket{{inf, 40}, {0.4, 40}, {0.1, 10}, {0.2, 30}}, 0.15},
		{"buckets with the same bound are merged", 0.5, []Bucket{{0.1, 5}, {0.1, 5}, {0.2, 30}, {0.4, 40}, {inf, 40}}, 0.15},
		{"non-monotonic counts are evened out to their running maximum", 0.5, []Bucket{{0.1, 10}, {0.2, 30}, {0.3, 20}, {0.4, 40}, {inf, 40}}, 0.15},
		{"a rank in the +Inf bucket gives the second highest bound", 0.99, []Bucket{{1, 1}, {2, 2}, {inf, 100}}, 2},
		{"a lowest bucket with a bound <= 0 gives that bound", 0.1, []Bucket{{-1, 5}, {1, 10}, {inf, 10}}, -1},
		{"q<0 is -Inf", -0.1, std, math.Inf(-1)},
		{"q>1 is +Inf", 1.1, std, inf},
		{"q=NaN is NaN", math.NaN(), std, math.NaN()},
		{"no observations is NaN", 0.5, []Bucket{{0.1, 0}, {inf, 0}}, math.NaN()},
		{"no +Inf bucket is NaN", 0.5, []Bucket{{0.1, 1}, {0.2, 2}}, math.NaN()},
		{"only the +Inf bucket is NaN", 0.5, []Bucket{{inf, 3}}, math.NaN()},
		{"no buckets is NaN", 0.5, nil, math.NaN()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]Bucket(nil), tc.buckets...)
			got := BucketQuantile(tc.q, tc.buckets)
			if !(got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want) || math.Abs(got-tc.want) < 1e-12) {
				t.Errorf("BucketQuantile(%v) = %v, want %v", tc.q, got, tc.want)
			}
			for i := range in {
				if in[i] != tc.buckets[i] {
					t.Fatalf("the input buckets were modified: %v, was %v", tc.buckets, in)
				}
			}
		})
	}
}
