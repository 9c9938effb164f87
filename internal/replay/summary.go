package replay

import (
	"math"
	"sort"
	"time"
)

// The end of a replay: waits, the summary and the busiest nodes.

// finish computes the waits, the summary and the busiest nodes.
func (r *recorder) finish(end time.Time, window time.Duration) *Result {
	res := &Result{Events: r.events, NodeEvents: r.nodeEvents, Series: r.series, Placements: map[string]string{}}
	if res.Events == nil {
		res.Events = []Event{}
	}
	if res.NodeEvents == nil {
		res.NodeEvents = []NodeEvent{}
	}
	if res.Series.PendingReasons == nil {
		res.Series.PendingReasons = []ReasonSeries{}
	}
	sum := &res.Summary
	sum.Pods, sum.Nodes = len(r.pods), len(r.nodes)
	sum.Start, sum.End = r.start, end
	sum.Placed, sum.Departed, sum.Deleted, sum.Preempted = r.placedN, r.departed, r.deleted, r.preempted
	sum.Attempts, sum.FailedAttempts = r.attempts, r.failed
	sum.Instants = len(r.series.Time)

	var waits []float64
	var placements []placedWait
	res.Pending = []PendingPod{}
	for i := range r.pods {
		p := &r.pods[i]
		switch p.state {
		case psRunning:
			sum.Running++
		case psPending:
			sum.Pending++
			res.Pending = append(res.Pending, PendingPod{Pod: p.name, Since: p.arrive, Attempts: p.attempts, Message: p.lastMsg, Plugins: p.plugins})
		case psNotArrived:
			sum.NotArrived++
		}
		if !p.placedAt.IsZero() {
			w := p.placedAt.Sub(p.arrive).Seconds()
			waits = append(waits, w)
			placements = append(placements, placedWait{at: p.placedAt.Sub(r.start).Seconds(), wait: w})
			if p.node >= 0 {
				res.Placements[p.name] = r.nodes[p.node].name
			}
		}
	}
	sort.Float64s(waits)
	sum.WaitP50Seconds, sum.WaitP99Seconds = quantile(waits, 0.5), quantile(waits, 0.99)
	if len(waits) > 0 {
		sum.WaitMaxSeconds = waits[len(waits)-1]
	}
	res.Series.WaitWindowSeconds = window.Seconds()
	res.Series.WaitP50, res.Series.WaitP99 = windowedQuantiles(res.Series.Time, placements, window.Seconds())

	used := 0
	for i := range r.nodes {
		n := &r.nodes[i]
		r.integrate(n, end)
		if n.placed > 0 {
			used++
		}
	}
	sum.NodesUsed = used
	span := end.Sub(r.start).Seconds()
	for k, name := range r.names {
		rs := &res.Series.Resources[k]
		rsum := ResourceSummary{Name: name, Capacity: r.capacity[k]}
		var area, fragArea float64
		for i := range rs.Capacity {
			ratio, frag := 0.0, 0.0
			if rs.Capacity[i] > 0 {
				ratio = float64(rs.Allocated[i]) / float64(rs.Capacity[i])
				frag = rs.Fragmentation[i] / float64(rs.Capacity[i])
			}
			rsum.PeakAllocation = math.Max(rsum.PeakAllocation, ratio)
			rsum.FinalAllocation = ratio
			if i+1 < len(rs.Capacity) {
				dt := res.Series.Time[i+1] - res.Series.Time[i]
				area += ratio * dt
				fragArea += frag * dt
			} else if last := res.Series.Time[i]; span > last {
				area += ratio * (span - last)
				fragArea += frag * (span - last)
			}
			if span == 0 {
				rsum.MeanAllocation, rsum.MeanFragmentation = ratio, frag
			}
		}
		if span > 0 {
			rsum.MeanAllocation, rsum.MeanFragmentation = area/span, fragArea/span
		}
		rsum.Imbalance = r.imbalance(k)
		sum.Resources = append(sum.Resources, rsum)
	}
	res.Busiest = r.busiest(span)
	return res
}

// imbalance is the standard deviation of the present nodes' allocation of
// resource k, over the nodes that have it.
func (r *recorder) imbalance(k int) float64 {
	var n, s, s2 float64
	for i := range r.nodes {
		nd := &r.nodes[i]
		if !nd.present || nd.alloc[k] <= 0 {
			continue
		}
		x := float64(nd.used[k]) / float64(nd.alloc[k])
		n++
		s += x
		s2 += x * x
	}
	if n == 0 {
		return 0
	}
	m := s / n
	return math.Sqrt(math.Max(s2/n-m*m, 0))
}

func (r *recorder) busiest(span float64) []NodeStat {
	type cand struct {
		i    int
		peak float64
	}
	var cs []cand
	for i := range r.nodes {
		n := &r.nodes[i]
		best := 0.0
		for k := range n.integral {
			v := n.integral[k]
			if span > 0 {
				v /= span
			} else if n.alloc[k] > 0 {
				v = float64(n.used[k]) / float64(n.alloc[k])
			}
			best = math.Max(best, v)
		}
		if best > 0 || n.placed > 0 {
			cs = append(cs, cand{i, best})
		}
	}
	sort.SliceStable(cs, func(a, b int) bool {
		if cs[a].peak != cs[b].peak {
			return cs[a].peak > cs[b].peak
		}
		return r.nodes[cs[a].i].name < r.nodes[cs[b].i].name
	})
	if len(cs) > busiest {
		cs = cs[:busiest]
	}
	out := make([]NodeStat, 0, len(cs))
	for _, c := range cs {
		n := &r.nodes[c.i]
		st := NodeStat{Node: n.name, Placed: n.placed, MeanAllocation: map[string]float64{}}
		for k, name := range r.names {
			if n.alloc[k] <= 0 {
				continue
			}
			v := float64(n.used[k]) / float64(n.alloc[k])
			if span > 0 {
				v = n.integral[k] / span
			}
			st.MeanAllocation[name] = v
		}
		out = append(out, st)
	}
	return out
}

type placedWait struct{ at, wait float64 }

// quantile is the nearest-rank quantile of sorted values (0 when empty).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[nearestRank(q, len(sorted))-1]
}
