package fgd

import (
	"fmt"
	"math"
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/plugins/gpushare"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
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

type event struct {
	arrived, used int64
	frag          float64
}

// nodeState is one node as the measurement replays it.
type nodeState struct {
	gpus    *gpushare.NodeGPUs
	cpuLeft int64
	frag    float64
	pods    int
}

// measure replays the run's placements in arrival order on the nodes,
// with the GPUs GpuShare recorded for each pod, and logs the artifact's
// events.
func measure(nodeList []*v1.Node, capacityMilli int64, pods []*v1.Pod, placed map[string]string, gpusOf func(types.UID) (string, []int, bool), model *gpushare.FragModel) (Metrics, error) {
	var m Metrics
	nodes := make(map[string]*nodeState, len(nodeList))
	order := make([]*nodeState, len(nodeList))
	for i, n := range nodeList {
		q := n.Status.Allocatable[openb.GPUResource]
		g := &gpushare.NodeGPUs{Model: n.Labels[openb.LabelGPUModel], Free: make([]int64, q.Value())}
		for j := range g.Free {
			g.Free[j] = gpushare.MilliPerGPU
		}
		s := &nodeState{gpus: g, cpuLeft: n.Status.Allocatable.Cpu().MilliValue()}
		s.frag = model.Frag(s.gpus, s.cpuLeft)
		nodes[n.Name], order[i] = s, s
	}
	fragSum := func() float64 {
		var f float64
		for _, s := range order {
			f += s.frag
		}
		return f
	}
	events := make([]event, 0, len(pods)+1)
	events = append(events, event{frag: fragSum()})
	var arrived, used int64
	for _, p := range pods {
		r, err := gpushare.ParseRequest(p)
		if err != nil {
			return m, fmt.Errorf("pod %s: %w", p.Name, err)
		}
		arrived += r.TotalMilli()
		node, ok := placed[schedcore.PodName(p)]
		if !ok {
			m.Failed++
			events = append(events, event{arrived: arrived, used: used, frag: events[len(events)-1].frag})
			continue
		}
		s := nodes[node]
		if s == nil {
			return m, fmt.Errorf("pod %s placed on unknown node %s", p.Name, node)
		}
		s.cpuLeft -= schedcore.ComputePodRequests(p, schedcore.DefaultFeatures).MilliCPU
		s.pods++
		if r.IsGPU() {
			at, ids, ok := gpusOf(p.UID)
			if !ok || at != node {
				return m, fmt.Errorf("pod %s on %s: GpuShare recorded no GPUs for it", p.Name, node)
			}
			s.gpus = s.gpus.Take(r, ids)
			for _, id := range ids {
				if s.gpus.Free[id] < 0 {
					return m, fmt.Errorf("pod %s overcommits GPU %d of node %s", p.Name, id, node)
				}
			}
			used += r.TotalMilli()
		}
		if s.cpuLeft < 0 {
			return m, fmt.Errorf("pod %s overcommits the CPU of node %s", p.Name, node)
		}
		s.frag = model.Frag(s.gpus, s.cpuLeft)
		events = append(events, event{arrived: arrived, used: used, frag: fragSum()})
	}
	for _, s := range order {
		m.MaxPodsPerNode = max(m.MaxPodsPerNode, s.pods)
	}
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
	return m, nil
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

// podUID is the UID the harness gives a pod, so GpuShare's record of its
// GPUs can be found.
func podUID(p *v1.Pod) types.UID { return types.UID("openb-" + p.Name) }
