package gpushare

import (
	"context"
	"math"
	"sort"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// FGDScore is the paper's Fragmentation Gradient Descent. A node's
// fragmentation is the GPU capacity that the workload's typical pods,
// weighted by how often they occur, could not use there (FragModel.Frag);
// FGD places a pod where, and on the GPU where, it increases that
// fragmentation least: score = int(100 * sigmoid((frag before - frag
// after) / 1000)). A share is tried on every GPU that holds it and keeps
// the best (the lowest index among equal scores); whole GPUs are taken as
// the artifact's NodeResource.Sub packs them, and the first fully free
// GPUs by index are the ones Reserve records. Pair it with GpuShare's
// gpuSelection: FGDScore.
type FGDScore struct {
	model *FragModel
	h     *schedcore.Handle

	// base remembers each node's fragmentation, by node name, for as long
	// as the node is unchanged (its generation): most cycles change one
	// node.
	mu   sync.Mutex
	base map[string]fragAt
}

// fragAt is a node's fragmentation with the node generation it was
// computed at.
type fragAt struct {
	gen  int64
	frag float64
}

var (
	_ schedcore.PreScorePlugin = (*FGDScore)(nil)
	_ schedcore.ScorePlugin    = (*FGDScore)(nil)
	_ GPUSelector              = (*FGDScore)(nil)
)

// NewFGD builds FGDScore from FGDScoreArgs (typicalPods required).
func NewFGD(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	a, err := fgdArgs(obj)
	if err != nil {
		return nil, err
	}
	return &FGDScore{model: NewFragModel(a.TypicalPods, *a.PopularityThreshold), h: h, base: map[string]fragAt{}}, nil
}

// Name returns the plugin's name.
func (pl *FGDScore) Name() string { return FGDName }

// Model returns the plugin's fragmentation model (its typical pods).
func (pl *FGDScore) Model() *FragModel { return pl.model }

type fgdState struct {
	noRequests bool
	base       *schedcore.NodeValues[fragAt]
}

func (s *fgdState) Clone() schedcore.StateData { return s }

const fgdStateKey = schedcore.StateKey("PreScore" + FGDName)

// PreScore brings the fragmentation of the changed feasible nodes up to
// date and hands this cycle's values to Score.
func (pl *FGDScore) PreScore(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, nodes []*schedcore.NodeInfo) *schedcore.Status {
	gs, st := readState(state)
	if st != nil {
		return st
	}
	s := &fgdState{noRequests: noRequests(pod), base: schedcore.NewNodeValues[fragAt](pl.h.Snapshot())}
	pl.mu.Lock()
	for _, ni := range nodes {
		g, ok := gs.cached(ni)
		if !ok {
			continue
		}
		b, ok := pl.base[ni.Name()]
		if !ok || b.gen != ni.Generation {
			b = fragAt{gen: ni.Generation, frag: pl.model.Frag(g, ni.Allocatable.MilliCPU-ni.Requested.MilliCPU)}
			pl.base[ni.Name()] = b
		}
		// This cycle's value, stamped with the node's generation: Score
		// tells the node from a modified copy by it.
		s.base.Set(ni, fragAt{gen: ni.Generation, frag: b.frag})
	}
	pl.mu.Unlock()
	state.Write(fgdStateKey, s)
	return nil
}

// noRequests reports whether the pod requests nothing at all (the
// artifact then scores every node 100).
func noRequests(pod *v1.Pod) bool {
	if len(pod.Spec.Overhead) > 0 {
		return false
	}
	for i := range pod.Spec.Containers {
		if len(pod.Spec.Containers[i].Resources.Requests) > 0 {
			return false
		}
	}
	for i := range pod.Spec.InitContainers {
		if len(pod.Spec.InitContainers[i].Resources.Requests) > 0 {
			return false
		}
	}
	return true
}

// Score is the fragmentation gradient score of the node's best GPU choice.
func (pl *FGDScore) Score(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) (int64, *schedcore.Status) {
	r, g, cpuLeft, st := nodeInputs(state, ni)
	if st != nil {
		return 0, st
	}
	s, err := schedcore.ReadAs[*fgdState](state, fgdStateKey)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	if s.noRequests {
		return schedcore.MaxNodeScore, nil
	}
	var base float64
	if b, ok := s.base.Get(ni); ok && b.gen == ni.Generation {
		base = b.frag
	} else {
		base = pl.model.Frag(g, cpuLeft)
	}
	sc, _ := pl.model.Gradient(r, g, cpuLeft, base)
	return sc, nil
}

// SelectGPUs returns the GPU(s) FGD's score chose on the node.
func (pl *FGDScore) SelectGPUs(r Request, g *NodeGPUs, cpuLeft int64) []int {
	_, ids := pl.model.Gradient(r, g, cpuLeft, pl.model.Frag(g, cpuLeft))
	return ids
}

// Fragmentation classes of a typical pod on a node, in the artifact's
// order (FragRatioDataMap): lacking both CPU and GPU, lacking GPU,
// satisfied, lacking CPU, CPU-only pod satisfied, CPU-only pod lacking
// CPU, GPU model not accessible.
const (
	q1LackBoth = iota
	q2LackGPU
	q3Satisfied
	q4LackCPU
	xlSatisfied
	xrLackCPU
	noAccess
	numClasses
)

// typical is one typical pod with its normalized frequency.
type typical struct {
	cpu    int64
	milli  int64
	count  int
	model  string
	models []string
	freq   float64
}

// FragModel is the workload's typical pods and their frequencies: the most
// frequent shapes covering the popularity threshold of the weight,
// renormalized (the artifact's GetTypicalPods).
type FragModel struct{ pods []typical }

// NewFragModel selects the typical pods from weighted shapes: sorted by
// weight, most frequent first (ties: the larger shape first, by CPU, GPU
// thousandths, GPU count, model), the shapes are taken one at a time until
// they reach threshold percent of the total weight; their frequencies are
// then divided by the share they cover, so they sum to 1.
func NewFragModel(shapes []TypicalPod, threshold int32) *FragModel {
	list := append([]TypicalPod(nil), shapes...)
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Weight != b.Weight {
			return a.Weight > b.Weight
		}
		if a.MilliCPU != b.MilliCPU {
			return a.MilliCPU > b.MilliCPU
		}
		if a.GPUMilli != b.GPUMilli {
			return a.GPUMilli > b.GPUMilli
		}
		if a.GPUCount != b.GPUCount {
			return a.GPUCount > b.GPUCount
		}
		return a.GPUModel > b.GPUModel
	})
	var total float64
	for _, s := range list {
		total += s.Weight
	}
	expected := float64(threshold) * total / 100.0
	freq := make([]float64, len(list))
	var cum float64
	i := 0
	for cum < expected && i < len(list) {
		cum += list[i].Weight
		freq[i] = list[i].Weight / total
		i++
	}
	if i < len(list) {
		for j := 0; j < i; j++ {
			freq[j] /= cum / total
		}
		list, freq = list[:i], freq[:i]
	}
	m := &FragModel{}
	for j, s := range list {
		t := typical{cpu: s.MilliCPU, milli: s.GPUMilli, count: s.GPUCount, model: s.GPUModel, freq: freq[j]}
		for _, x := range strings.Split(s.GPUModel, "|") {
			if x != "" {
				t.models = append(t.models, x)
			}
		}
		m.pods = append(m.pods, t)
	}
	return m
}

// TypicalPods returns the selected shapes with their frequencies (as
// Weight), most frequent first.
func (m *FragModel) TypicalPods() []TypicalPod {
	out := make([]TypicalPod, len(m.pods))
	for i, t := range m.pods {
		out[i] = TypicalPod{MilliCPU: t.cpu, GPUMilli: t.milli, GPUCount: t.count, GPUModel: t.model, Weight: t.freq}
	}
	return out
}

func (t *typical) accepts(model string) bool {
	return (Request{Models: t.models}).AcceptsModel(model)
}

// Frag is a node's expected GPU fragmentation in thousandths: for each
// typical pod, weighted by its frequency, the free GPU thousandths it could
// not use on the node. A pod the node cannot host at all (too little CPU,
// no GPU that holds its share, a model it does not accept) cannot use any;
// a CPU-only pod uses no GPU, so all free thousandths count; a pod that
// fits cannot use the GPUs with less free than its share. This is the
// artifact's NodeGpuShareFragAmountScore, computed in its floating-point
// order.
func (m *FragModel) Frag(g *NodeGPUs, cpuLeft int64) float64 {
	return m.frag(g.Free, g.Model, cpuLeft)
}

func (m *FragModel) frag(free []int64, model string, cpuLeft int64) float64 {
	var data [numClasses]float64
	var total int64
	for _, f := range free {
		total += f
	}
	add := func(c int, amount float64) {
		if amount >= 0 {
			data[c] += amount
		}
	}
	for k := range m.pods {
		t := &m.pods[k]
		if t.freq < 0 || t.freq > 1 {
			continue
		}
		cpuFits := cpuLeft >= t.cpu
		var c int
		switch {
		case t.milli == 0:
			c = xrLackCPU
			if cpuFits {
				c = xlSatisfied
			}
		case !t.accepts(model):
			c = noAccess
		case canHost(free, t):
			c = q4LackCPU
			if cpuFits {
				c = q3Satisfied
			}
		default:
			c = q1LackBoth
			if cpuFits {
				c = q2LackGPU
			}
		}
		if c == q3Satisfied {
			var unusable int64
			for _, f := range free {
				if f < t.milli {
					unusable += f
				}
			}
			add(q2LackGPU, t.freq*float64(unusable))
			add(q3Satisfied, t.freq*float64(total-unusable))
		} else {
			add(c, t.freq*float64(total))
		}
	}
	var out float64
	for c := 0; c < numClasses; c++ {
		if c != q3Satisfied {
			out += data[c]
		}
	}
	return out
}

// canHost reports whether t.count GPUs have t.milli free each (the
// artifact's CanNodeHostPodOnGpuMemory).
func canHost(free []int64, t *typical) bool {
	need := t.count
	for _, f := range free {
		if f >= t.milli {
			if need--; need <= 0 {
				return true
			}
		}
	}
	return false
}

func sigmoid(x float64) float64 { return 1.0 / (1.0 + math.Exp(-x)) }

// gradientScore is int(100 * sigmoid((before-after)/1000)).
func gradientScore(before, after float64) int64 {
	return int64(sigmoid((before-after)/1000) * float64(schedcore.MaxNodeScore))
}

// Gradient scores r on a node with GPUs g, cpuLeft free millicores and
// fragmentation base, and returns the GPUs r would take (nil for a pod
// without GPUs, or when it does not fit).
func (m *FragModel) Gradient(r Request, g *NodeGPUs, cpuLeft int64, base float64) (int64, []int) {
	var buf [16]int64
	free := buf[:0]
	if len(g.Free) > len(buf) {
		free = make([]int64, 0, len(g.Free))
	}
	free = free[:len(g.Free)]
	if r.Count == 1 && r.Milli < MilliPerGPU {
		score, best := int64(0), -1
		for i, f := range g.Free {
			if f < r.Milli || seenBefore(g.Free, i) {
				// A GPU with the same free thousandths as an earlier one
				// leads to the same state, so to the same score: the
				// earlier one wins ties.
				continue
			}
			copy(free, g.Free)
			free[i] -= r.Milli
			if s := gradientScore(base, m.frag(free, g.Model, cpuLeft-r.CPU)); best == -1 || s > score {
				score, best = s, i
			}
		}
		if best < 0 {
			return schedcore.MinNodeScore, nil
		}
		return score, []int{best}
	}
	copy(free, g.Free)
	cpu := cpuLeft
	if cpuLeft >= r.CPU && len(free) >= r.Count {
		cpu -= r.CPU
		packInto(free, r)
	}
	var ids []int
	if r.IsGPU() {
		ids = g.Exclusive(r.Count)
	}
	return gradientScore(base, m.frag(free, g.Model, cpu)), ids
}

func seenBefore(free []int64, i int) bool {
	for j := 0; j < i; j++ {
		if free[j] == free[i] {
			return true
		}
	}
	return false
}

// TypicalPodsOf counts the pod shapes of a workload (NonZeroCPU, GPU
// thousandths, GPU count, model), as FGDScoreArgs.typicalPods takes them:
// one entry per shape, its weight the number of pods, in order of first
// appearance. Pods with an invalid GPU request are left out.
func TypicalPodsOf(pods []*v1.Pod) []TypicalPod {
	idx := map[TypicalPod]int{}
	var out []TypicalPod
	for _, p := range pods {
		r, err := ParseRequest(p)
		if err != nil {
			continue
		}
		k := TypicalPod{MilliCPU: NonZeroCPU(p), GPUMilli: r.Milli, GPUCount: r.Count, GPUModel: r.Model}
		if i, ok := idx[k]; ok {
			out[i].Weight++
			continue
		}
		idx[k] = len(out)
		k.Weight = 1
		out = append(out, k)
	}
	return out
}
