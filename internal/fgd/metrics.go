package fgd

import (
	"math"
	"strconv"

	"github.com/kubectl-sched/kubectl-sched/plugins/gpushare"
)

// MaxPct is the last arrived-demand percentage measured (130%).
const MaxPct = 130

// Metrics are the artifact's measures of one run (its analysis.py and
// experiments/analysis/merge_*_discrete.py). After each pod's attempt (and
// once before the first) the artifact logs the arrived GPU demand and the
// allocated GPU thousandths; an event's arrived percentage is
// round(arrived/capacity*100) (half to even, as Python rounds). The value
// at X% is the mean over the events at X% (or within X±1 when there are
// none) of round(allocated/capacity*100, 2), rounded to 2 decimals.
type Metrics struct {
	// Alloc[X] is the GPU allocation ratio (%) at X% arrived demand; NaN
	// where no event is near X.
	Alloc [MaxPct + 1]float64
	// Frag[X] is the fragmented GPU capacity, % of the cluster's: the
	// FGD model's expected fragmentation (gpushare.FragModel.Frag) summed
	// over the nodes, mean at X% as above, as round(100*frag/1000/GPUs, 2).
	Frag [MaxPct + 1]float64
	// UnallocatedAt130 is the GPUs' worth of thousandths left unallocated
	// at 130% (capacity minus the mean allocation there), in GPUs.
	UnallocatedAt130 float64
	// Failed counts the pods that found no node.
	Failed int
	// MaxPodsPerNode is the most pods any node held at the end.
	MaxPodsPerNode int
}

// event is one line of the artifact's log: the GPU thousandths arrived
// and allocated, and the nodes' summed fragmentation, after a pod's
// attempt.
type event struct {
	arrived, used int64
	frag          float64
}

// measure computes the metrics of a run's events: Alloc, Frag and
// UnallocatedAt130 (the caller fills the counts).
func measure(events []event, capacityMilli int64) Metrics {
	// No event at 130% (a small trace): unknown, as the figures are.
	m := Metrics{UnallocatedAt130: math.NaN()}
	gpus := float64(capacityMilli / gpushare.MilliPerGPU)
	pct := make([]float64, len(events))
	for i, e := range events {
		pct[i] = math.RoundToEven(float64(e.arrived) / gpus / 10)
	}
	for x := 0; x <= MaxPct; x++ {
		sel := selectAt(pct, float64(x))
		if len(sel) == 0 {
			m.Alloc[x], m.Frag[x] = math.NaN(), math.NaN()
			continue
		}
		var a, f, u float64
		for _, i := range sel {
			a += round2(float64(events[i].used) / gpus / 10)
			f += events[i].frag
			u += float64(events[i].used)
		}
		n := float64(len(sel))
		m.Alloc[x] = round2(a / n)
		m.Frag[x] = round2(100 * (f / n) / 1000 / gpus)
		if x == MaxPct {
			m.UnallocatedAt130 = (float64(capacityMilli) - u/n) / gpushare.MilliPerGPU
		}
	}
	return m
}

// selectAt returns the events at percentage x, else those within x±1.
func selectAt(pct []float64, x float64) []int {
	var sel []int
	for i, p := range pct {
		if p == x {
			sel = append(sel, i)
		}
	}
	if len(sel) > 0 {
		return sel
	}
	for i, p := range pct {
		if p >= x-1 && p <= x+1 {
			sel = append(sel, i)
		}
	}
	return sel
}

// round2 rounds to 2 decimals as Python's round(x, 2) does: the exact
// binary value, ties to even.
func round2(x float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 2, 64), 64)
	return v
}
