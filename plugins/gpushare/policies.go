package gpushare

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The artifact's largest node, which normalizes DotProduct and BestFit
// (MaxSpecCpu, MaxSpecGpu).
const (
	maxSpecCPU = 128000
	maxSpecGPU = 8000
)

// nodeInputs reads what every policy scores: the pod's request, the node's
// GPUs and its free millicores (allocatable minus the pods' requests).
func nodeInputs(state *schedcore.CycleState, ni *schedcore.NodeInfo) (Request, *NodeGPUs, int64, *schedcore.Status) {
	s, st := readState(state)
	if st != nil {
		return Request{}, nil, 0, st
	}
	return s.req, s.NodeGPUs(ni), ni.Allocatable.MilliCPU - ni.Requested.MilliCPU, nil
}

// nodeScorer is a policy whose score reads only the pod's request, the
// node's GPUs and its free CPU.
type nodeScorer struct {
	name  string
	score func(r Request, g *NodeGPUs, cpuLeft int64) int64
}

// Name returns the plugin's name.
func (pl *nodeScorer) Name() string { return pl.name }

// Score applies the policy's rule.
func (pl *nodeScorer) Score(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) (int64, *schedcore.Status) {
	r, g, cpuLeft, st := nodeInputs(state, ni)
	if st != nil {
		return 0, st
	}
	return pl.score(r, g, cpuLeft), nil
}

// RandomScore gives 100 to one feasible node picked in PreScore with the
// handle's seeded source, 0 to the others: a uniformly random placement
// (the paper's Random). Pair it with GpuShare's gpuSelection: random.
type RandomScore struct{ h *schedcore.Handle }

var (
	_ schedcore.PreScorePlugin = (*RandomScore)(nil)
	_ schedcore.ScorePlugin    = (*RandomScore)(nil)
)

// NewRandom builds RandomScore (no args).
func NewRandom(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	return &RandomScore{h: h}, nil
}

// Name returns the plugin's name.
func (pl *RandomScore) Name() string { return RandomName }

type randomState struct{ node string }

func (s *randomState) Clone() schedcore.StateData { return s }

const randomStateKey = schedcore.StateKey("PreScore" + RandomName)

// PreScore picks the node.
func (pl *RandomScore) PreScore(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, nodes []*schedcore.NodeInfo) *schedcore.Status {
	if len(nodes) == 0 {
		return schedcore.NewStatus(schedcore.Skip)
	}
	state.Write(randomStateKey, &randomState{node: nodes[pl.h.Rand().Intn(len(nodes))].Name()})
	return nil
}

// Score is 100 for the picked node, 0 for the others.
func (pl *RandomScore) Score(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) (int64, *schedcore.Status) {
	s, err := schedcore.ReadAs[*randomState](state, randomStateKey)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	if ni.Name() == s.node {
		return schedcore.MaxNodeScore, nil
	}
	return schedcore.MinNodeScore, nil
}

// DotProductScore is the paper's DotProd (Tetris-like): with merge, the
// node's free [cpu, GPU thousandths] and the pod's request, each divided
// by the largest node (128 cores, 8000), dotted, halved, and reversed:
// score = int(100 * (1 - dot/2)); 0 when the CPU does not fit. With share,
// each partly used GPU that holds the pod and the node's fully free GPUs
// together are scored as separate [cpu, free] vectors, the best one wins
// (the first among equals) and names the GPU(s) the pod takes.
type DotProductScore struct{ share bool }

var (
	_ schedcore.ScorePlugin = (*DotProductScore)(nil)
	_ GPUSelector           = (*DotProductScore)(nil)
)

// NewDotProduct builds DotProductScore from DotProductScoreArgs.
func NewDotProduct(_ context.Context, obj runtime.Object, _ *schedcore.Handle) (schedcore.Plugin, error) {
	a, err := dotProductArgs(obj)
	if err != nil {
		return nil, err
	}
	return &DotProductScore{share: a.DimExtMethod == DimExtShare}, nil
}

// Name returns the plugin's name.
func (pl *DotProductScore) Name() string { return DotProductName }

// Score is the best virtual node's score.
func (pl *DotProductScore) Score(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) (int64, *schedcore.Status) {
	r, g, cpuLeft, st := nodeInputs(state, ni)
	if st != nil {
		return 0, st
	}
	sc, _ := pl.score(r, g, cpuLeft)
	return sc, nil
}

// SelectGPUs returns the best virtual node's GPUs (share), or the best fit
// (merge, which names none).
func (pl *DotProductScore) SelectGPUs(r Request, g *NodeGPUs, cpuLeft int64) []int {
	if !pl.share {
		return bestFit(g, r)
	}
	_, ids := pl.score(r, g, cpuLeft)
	return ids
}

// dot is one virtual node's value: 1 - (n·p)/2 over [cpu/128000,
// gpu/8000], in the artifact's floating-point order.
func dot(cpuLeft, gpuFree, cpuReq, gpuReq int64) float64 {
	n0, n1 := float64(cpuLeft)/float64(maxSpecCPU), float64(gpuFree)/float64(maxSpecGPU)
	p0, p1 := float64(cpuReq)/float64(maxSpecCPU), float64(gpuReq)/float64(maxSpecGPU)
	var d float64
	d += n0 * p0
	d += n1 * p1
	d /= 2
	return 1 - d
}

func (pl *DotProductScore) score(r Request, g *NodeGPUs, cpuLeft int64) (int64, []int) {
	if cpuLeft < r.CPU {
		return schedcore.MinNodeScore, nil
	}
	req := r.TotalMilli()
	if !pl.share {
		return int64(float64(schedcore.MaxNodeScore) * dot(cpuLeft, g.TotalFree(), r.CPU, req)), nil
	}
	best := -1.0
	var ids []int
	if req < MilliPerGPU {
		for i, f := range g.Free {
			if f >= MilliPerGPU || f < req {
				continue
			}
			if v := dot(cpuLeft, f, r.CPU, req); best < v {
				best, ids = v, []int{i}
			}
		}
	}
	if idle := g.FullyFree(); req <= int64(idle)*MilliPerGPU {
		n := r.Count
		if req < MilliPerGPU {
			n = 1
		}
		if v := dot(cpuLeft, int64(idle)*MilliPerGPU, r.CPU, req); best < v {
			best, ids = v, g.Exclusive(n)
		}
	}
	if best < 0 {
		return schedcore.MinNodeScore, nil
	}
	return int64(float64(schedcore.MaxNodeScore) * best), ids
}

// GpuClusteringScore is the paper's GpuClustering: it keeps pods of one
// kind (GPU-sharing, or k whole GPUs) together. With t = the node's free
// GPU thousandths, base = 25*(8000-t)/8000 (integer arithmetic), a GPU pod
// scores base+75 on a node holding only its kind, base+50 on a node
// holding its kind and others, base+25 on a node without GPU pods, base
// on a node holding other kinds only; a pod without GPUs scores 0
// everywhere.
type GpuClusteringScore struct{ nodeScorer }

var _ schedcore.ScorePlugin = (*GpuClusteringScore)(nil)

// NewGpuClustering builds GpuClusteringScore (no args).
func NewGpuClustering(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
	return &GpuClusteringScore{nodeScorer{GpuClusteringName, func(r Request, g *NodeGPUs, _ int64) int64 { return clusteringScore(r, g) }}}, nil
}

func clusteringScore(r Request, g *NodeGPUs) int64 {
	if !r.IsGPU() {
		return schedcore.MinNodeScore
	}
	base := schedcore.MaxNodeScore / 4 * (maxSpecGPU - g.TotalFree()) / maxSpecGPU
	switch {
	case g.HasTag(r) && g.NumTags() == 1:
		return base + schedcore.MaxNodeScore*3/4
	case g.HasTag(r):
		return base + schedcore.MaxNodeScore*2/4
	case g.NumTags() == 0:
		return base + schedcore.MaxNodeScore/4
	}
	return base
}

// GpuPackingScore is the paper's GpuPacking, from high to low: a share
// that fits on partly used GPUs scores 100 - (sum over the GPUs it would
// take, smallest free first, of free*100/1000)/10, at least 50; a pod that
// must open f fully free GPUs on a used node scores 50-f, at least 33; on
// an unused node with n GPUs, max(33-n, n). A pod without GPUs scores 0.
type GpuPackingScore struct{ nodeScorer }

var _ schedcore.ScorePlugin = (*GpuPackingScore)(nil)

// NewGpuPacking builds GpuPackingScore (no args).
func NewGpuPacking(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
	return &GpuPackingScore{nodeScorer{GpuPackingName, func(r Request, g *NodeGPUs, _ int64) int64 { return packingScore(r, g) }}}, nil
}

func packingScore(r Request, g *NodeGPUs) int64 {
	if !r.IsGPU() {
		return schedcore.MinNodeScore
	}
	free := g.FullyFree()
	if free == g.Count() {
		return max(schedcore.MaxNodeScore/3-int64(free), int64(free))
	}
	need, open := r.Count, 0
	var use []int
	for _, i := range ascending(g.Free) {
		if need == 0 {
			break
		}
		if r.Milli <= g.Free[i] {
			need--
			use = append(use, i)
			if g.Free[i] == MilliPerGPU {
				open++
			}
		}
	}
	if need != 0 {
		return schedcore.MinNodeScore
	}
	if open > 0 {
		return max(schedcore.MaxNodeScore/2-int64(open), schedcore.MaxNodeScore/3)
	}
	var pct int64
	for _, i := range use {
		pct += g.Free[i] * 100 / MilliPerGPU
	}
	return max(schedcore.MaxNodeScore-pct/10, schedcore.MaxNodeScore/2)
}

// BestFitScore is the paper's BestFit: the node's leftover after placing
// the pod, half CPU (per 128 cores) and half GPU (per 8000 thousandths),
// reversed: int(100 * (1 - (0.5*(cpuLeft-cpu)/128000 + 0.5*(gpuFree-gpu)/8000))),
// then rescaled so the feasible nodes span [0, 100] (min-max, integer
// arithmetic; all 0 when they are equal). A node whose free CPU is below
// the pod's non-zero CPU request scores 0 (the artifact fails the cycle
// there, which its trace never reaches).
type BestFitScore struct{ nodeScorer }

var _ schedcore.NormalizeScorePlugin = (*BestFitScore)(nil)

// NewBestFit builds BestFitScore (no args).
func NewBestFit(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
	return &BestFitScore{nodeScorer{BestFitName, func(r Request, g *NodeGPUs, cpuLeft int64) int64 { return bestFitScore(r, g.TotalFree(), cpuLeft) }}}, nil
}

func bestFitScore(r Request, gpuFree, cpuLeft int64) int64 {
	free := [2]float64{float64(cpuLeft), float64(gpuFree)}
	req := [2]float64{float64(r.CPU), float64(r.TotalMilli())}
	spec := [2]float64{maxSpecCPU, maxSpecGPU}
	var s float64
	for i := range free {
		if free[i] < req[i] {
			return schedcore.MinNodeScore
		}
		s += (free[i] - req[i]) / spec[i] * 0.5
	}
	return int64((1.0 - s) * float64(schedcore.MaxNodeScore))
}

// NormalizeColumn rescales to [0, 100] by min and max.
func (pl *BestFitScore) NormalizeColumn(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, scores []int64) *schedcore.Status {
	minMaxNormalize(scores)
	return nil
}

// minMaxNormalize is the artifact's NormalizeScore: (s-lowest)*100/(highest-lowest),
// all 0 when every score is equal.
func minMaxNormalize(scores []int64) {
	hi, lo := int64(-math.MaxInt64), int64(math.MaxInt64)
	for _, s := range scores {
		hi, lo = max(hi, s), min(lo, s)
	}
	for i := range scores {
		if hi == lo {
			scores[i] = schedcore.MinNodeScore
		} else {
			scores[i] = (scores[i]-lo)*(schedcore.MaxNodeScore-schedcore.MinNodeScore)/(hi-lo) + schedcore.MinNodeScore
		}
	}
}
