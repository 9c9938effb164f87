package top

import (
	"math"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Sample is one scrape of a scheduler's metrics.
type Sample struct {
	// Time is when the scrape was taken.
	Time time.Time
	// Families are the parsed metric families by name.
	Families map[string]*dto.MetricFamily
	// Warnings name the malformed lines that were skipped.
	Warnings []string
}

// hist is one histogram series: cumulative buckets ending with +Inf.
type hist struct {
	buckets []Bucket
	count   float64
	sum     float64
}

// series is one time series of a family: a counter's, gauge's or untyped
// value, or a histogram.
type series struct {
	labels map[string]string
	value  float64
	hist   *hist
}

// seriesOf returns the series of a family, keyed by their label signature;
// nil when the sample does not have the family.
func seriesOf(s *Sample, name string) map[string]series {
	if s == nil {
		return nil
	}
	mf := s.Families[name]
	if mf == nil {
		return nil
	}
	out := make(map[string]series, len(mf.GetMetric()))
	for _, m := range mf.GetMetric() {
		if m == nil {
			continue
		}
		labels := make(map[string]string, len(m.GetLabel()))
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		x := series{labels: labels}
		switch {
		case m.Histogram != nil:
			x.hist = histOf(m.Histogram)
		case m.Counter != nil:
			x.value = m.Counter.GetValue()
		case m.Gauge != nil:
			x.value = m.Gauge.GetValue()
		case m.Untyped != nil:
			x.value = m.Untyped.GetValue()
		default:
			continue
		}
		if x.hist == nil && (math.IsNaN(x.value) || math.IsInf(x.value, 0)) {
			continue
		}
		out[signature(labels)] = x
	}
	return out
}

func histOf(h *dto.Histogram) *hist {
	count := float64(h.GetSampleCount()) + h.GetSampleCountFloat()
	out := &hist{count: count, sum: h.GetSampleSum()}
	for _, b := range h.GetBucket() {
		if b == nil || math.IsNaN(b.GetUpperBound()) {
			continue
		}
		out.buckets = append(out.buckets, Bucket{UpperBound: b.GetUpperBound(), Count: float64(b.GetCumulativeCount()) + b.GetCumulativeCountFloat()})
	}
	sort.SliceStable(out.buckets, func(i, j int) bool { return out.buckets[i].UpperBound < out.buckets[j].UpperBound })
	if n := len(out.buckets); n == 0 || !math.IsInf(out.buckets[n-1].UpperBound, +1) {
		out.buckets = append(out.buckets, Bucket{UpperBound: math.Inf(+1), Count: count})
	}
	return out
}

// signature is a stable key for a label set.
func signature(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}

// groupKey joins the values of the by labels.
func groupKey(labels map[string]string, by []string) string {
	parts := make([]string, len(by))
	for i, l := range by {
		parts[i] = labels[l]
	}
	return strings.Join(parts, "\x00")
}

// splitKey is the inverse of groupKey.
func splitKey(key string, by []string) map[string]string {
	parts := strings.Split(key, "\x00")
	out := make(map[string]string, len(by))
	for i, l := range by {
		if i < len(parts) {
			out[l] = parts[i]
		}
	}
	return out
}

// restarted reports whether the scraped process restarted between two
// samples (process_start_time_seconds changed): every counter starts over.
func restarted(prev, cur *Sample) bool {
	a, b := seriesOf(prev, "process_start_time_seconds"), seriesOf(cur, "process_start_time_seconds")
	if len(a) != 1 || len(b) != 1 {
		return false
	}
	for _, x := range a {
		for _, y := range b {
			return x.value != y.value
		}
	}
	return false
}

// counterIncrease is how much each series of a counter family grew from
// prev to cur, summed by the by labels, as Prometheus' increase() over two
// points: a value that went down (a reset) counts from zero, and a series
// that appeared counts from zero too (kube creates series on first use).
func counterIncrease(prev, cur *Sample, name string, by []string) map[string]float64 {
	p, c := seriesOf(prev, name), seriesOf(cur, name)
	reset := restarted(prev, cur)
	out := map[string]float64{}
	for sig, x := range c {
		d := x.value
		if old, ok := p[sig]; ok && !reset && x.value >= old.value {
			d = x.value - old.value
		}
		out[groupKey(x.labels, by)] += d
	}
	return out
}

// histIncrease is the per-bucket increase of each series of a histogram
// family from prev to cur, summed by the by labels. A series whose count or
// any bucket went down restarted: its current buckets are the increase.
// Series with different bucket layouts in one group are merged by bound.
func histIncrease(prev, cur *Sample, name string, by []string) map[string]*hist {
	p, c := seriesOf(prev, name), seriesOf(cur, name)
	reset := restarted(prev, cur)
	out := map[string]*hist{}
	for sig, x := range c {
		if x.hist == nil {
			continue
		}
		d := x.hist
		if old, ok := p[sig]; ok && old.hist != nil && !reset {
			if inc, ok := subtract(x.hist, old.hist); ok {
				d = inc
			}
		}
		k := groupKey(x.labels, by)
		out[k] = addHist(out[k], d)
	}
	return out
}

// subtract returns cur-prev bucket by bucket; false when the layouts differ
// or anything decreased (a reset).
func subtract(cur, prev *hist) (*hist, bool) {
	if len(cur.buckets) != len(prev.buckets) || cur.count < prev.count {
		return nil, false
	}
	out := &hist{count: cur.count - prev.count, sum: cur.sum - prev.sum, buckets: make([]Bucket, len(cur.buckets))}
	for i := range cur.buckets {
		if cur.buckets[i].UpperBound != prev.buckets[i].UpperBound || cur.buckets[i].Count < prev.buckets[i].Count {
			return nil, false
		}
		out.buckets[i] = Bucket{UpperBound: cur.buckets[i].UpperBound, Count: cur.buckets[i].Count - prev.buckets[i].Count}
	}
	return out, true
}

// addHist adds b to a (nil a: a copy of b), bucket by matching bound.
func addHist(a, b *hist) *hist {
	if a == nil {
		return &hist{count: b.count, sum: b.sum, buckets: append([]Bucket(nil), b.buckets...)}
	}
	a.count += b.count
	a.sum += b.sum
	if sameBounds(a.buckets, b.buckets) {
		for i := range b.buckets {
			a.buckets[i].Count += b.buckets[i].Count
		}
		return a
	}
	// Different layouts: histogram_quantile over the union of the buckets
	// coalesces equal bounds, so appending is enough.
	a.buckets = append(a.buckets, b.buckets...)
	return a
}

func sameBounds(a, b []Bucket) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].UpperBound != b[i].UpperBound {
			return false
		}
	}
	return true
}

// gaugeSum is the current value of a gauge family summed by the by labels.
func gaugeSum(s *Sample, name string, by []string) map[string]float64 {
	out := map[string]float64{}
	for _, x := range seriesOf(s, name) {
		if x.hist == nil {
			out[groupKey(x.labels, by)] += x.value
		}
	}
	return out
}

// counterTotal is the current value of a counter family summed by labels.
func counterTotal(s *Sample, name string, by []string) map[string]float64 {
	return gaugeSum(s, name, by)
}
