package gpushare

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Plugin names. The score plugins keep the FGD artifact's names, so a
// configuration of the paper reads the same here.
const (
	Name               = names.GpuShare
	RandomName         = names.RandomScore
	DotProductName     = names.DotProductScore
	GpuClusteringName  = names.GpuClusteringScore
	GpuPackingName     = names.GpuPackingScore
	BestFitName        = names.BestFitScore
	FGDName            = names.FGDScore
	stateKey           = schedcore.StateKey("PreFilter" + Name)
	errReasonInvalid   = "invalid GPU-share request"
	errNoGpuShareState = "the GpuShare plugin must be enabled (PreFilter, Filter and Reserve) in the profile"
)

// Filter reasons; explain and the FitError message quote them.
const (
	// ErrReasonNoGPU: the node has no GPUs (UnschedulableAndUnresolvable).
	ErrReasonNoGPU = "node(s) had no GPU"
	// ErrReasonGPUModel: the node's GPU model is not one the pod accepts
	// (UnschedulableAndUnresolvable).
	ErrReasonGPUModel = "node(s) didn't have the requested GPU model"
	// ErrReasonInsufficientGPU: no GPU (or not enough whole GPUs) has the
	// thousandths the pod asks for (Unschedulable: evicting pods may help).
	ErrReasonInsufficientGPU = "node(s) didn't have enough free GPU"
)

var (
	statusNoGPU           = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonNoGPU)
	statusGPUModel        = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonGPUModel)
	statusInsufficientGPU = schedcore.NewSharedStatus(schedcore.Unschedulable, ErrReasonInsufficientGPU)
)

// GpuShare accounts GPUs in thousandths per device on every node and keeps
// pods within them: Filter rejects nodes that cannot hold the pod's share,
// Reserve picks the GPU(s) the pod takes and remembers them.
//
// Its state is each node's NodeGPUs, derived from the node's pods: a pod's
// GPUs are the ones Reserve picked (kept in memory by pod UID), else its
// AnnotationGPUIndex, else the best fit in the node's pod order. The
// derived states are kept per node and recomputed only for nodes whose
// NodeInfo generation changed (most cycles: the last placement), in
// PreFilter, which hands this cycle's states to Filter, Reserve and the
// score plugins through the CycleState.
type GpuShare struct {
	h          *schedcore.Handle
	resource   v1.ResourceName
	modelLabel string
	selection  string

	// mu guards assigned and byNode (written in Reserve/Unreserve and by
	// PreFilter's clean-up, read by fresh computations in Filter) and
	// slots (PreFilter only).
	mu       sync.RWMutex
	assigned map[types.UID]assignment
	byNode   map[string]map[types.UID]bool
	slots    []*NodeGPUs
	slotGens []int64

	selectorOnce sync.Once
	selector     GPUSelector
	selectorErr  error
}

type assignment struct {
	node string
	ids  []int
}

// GPUSelector is a score plugin that picks the GPU(s) of a node as it
// scores it; GpuShare's Reserve asks it when gpuSelection names it.
type GPUSelector interface {
	schedcore.Plugin
	// SelectGPUs returns the device indexes r takes on a node with GPUs g
	// and cpuLeft free millicores, or nil when r does not fit.
	SelectGPUs(r Request, g *NodeGPUs, cpuLeft int64) []int
}

var (
	_ schedcore.PreFilterPlugin   = (*GpuShare)(nil)
	_ schedcore.FilterPlugin      = (*GpuShare)(nil)
	_ schedcore.FilterExplainer   = (*GpuShare)(nil)
	_ schedcore.ReservePlugin     = (*GpuShare)(nil)
	_ schedcore.EnqueueExtensions = (*GpuShare)(nil)
)

// New builds GpuShare from GpuShareArgs (nil: defaults).
func New(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	a, err := gpuShareArgs(obj)
	if err != nil {
		return nil, err
	}
	return &GpuShare{h: h, resource: v1.ResourceName(a.GPUResource), modelLabel: a.ModelLabel, selection: a.GPUSelection,
		assigned: map[types.UID]assignment{}, byNode: map[string]map[types.UID]bool{}}, nil
}

// Name returns the plugin's name.
func (pl *GpuShare) Name() string { return Name }

// cycleState is this cycle's pod request and node GPU states, indexed by
// snapshot list position with the generation they were computed at.
type cycleState struct {
	req  Request
	pl   *GpuShare
	gpus *schedcore.NodeValues[nodeGPUsAt]
}

// nodeGPUsAt is a node's GPU state with the node generation it was
// computed at: a copy of a snapshot node with pods added (nominated pods,
// preemption) matches the node in NodeValues but not its generation.
type nodeGPUsAt struct {
	gen  int64
	gpus *NodeGPUs
}

// Clone shares the state: nothing in it changes after PreFilter (Filter
// computes the states of modified node copies afresh).
func (s *cycleState) Clone() schedcore.StateData { return s }

// PreFilter parses the pod's request, brings the node states up to date
// and stores both for the cycle. A pod without GPUs skips Filter; its state
// is written all the same, for the score plugins.
func (pl *GpuShare) PreFilter(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, nodes []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	req, err := ParseRequest(pod)
	if err != nil {
		return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, errReasonInvalid+": "+err.Error())
	}
	req.CPU = NonZeroCPU(pod)
	state.Write(stateKey, pl.sync(req, pl.h.Snapshot(), nodes))
	if !req.IsGPU() {
		return nil, schedcore.NewStatus(schedcore.Skip)
	}
	return nil, nil
}

// sync recomputes the states of the nodes whose generation changed since
// the last cycle and returns this cycle's states.
func (pl *GpuShare) sync(req Request, snap *schedcore.Snapshot, nodes []*schedcore.NodeInfo) *cycleState {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if len(pl.slots) > len(nodes) {
		clear(pl.slots[len(nodes):])
		pl.slots, pl.slotGens = pl.slots[:len(nodes)], pl.slotGens[:len(nodes)]
	}
	for len(pl.slots) < len(nodes) {
		pl.slots, pl.slotGens = append(pl.slots, nil), append(pl.slotGens, 0)
	}
	s := &cycleState{req: req, pl: pl, gpus: schedcore.NewNodeValues[nodeGPUsAt](snap)}
	for i, ni := range nodes {
		if pl.slots[i] == nil || pl.slotGens[i] != ni.Generation {
			pl.slots[i], pl.slotGens[i] = pl.computeLocked(ni, true), ni.Generation
		}
		s.gpus.Set(ni, nodeGPUsAt{gen: ni.Generation, gpus: pl.slots[i]})
	}
	return s
}

// NodeGPUs returns the GPU state of ni in this cycle: PreFilter's when ni is
// the snapshot's node, computed afresh for a modified copy (a node with
// nominated pods added, or preemption victims removed).
func (s *cycleState) NodeGPUs(ni *schedcore.NodeInfo) *NodeGPUs {
	if g, ok := s.cached(ni); ok {
		return g
	}
	s.pl.mu.RLock()
	defer s.pl.mu.RUnlock()
	return s.pl.computeLocked(ni, false)
}

// cached returns PreFilter's state of ni, ok false for a node from outside
// the snapshot or a modified copy of one.
func (s *cycleState) cached(ni *schedcore.NodeInfo) (*NodeGPUs, bool) {
	e, ok := s.gpus.Get(ni)
	if !ok || e.gen != ni.Generation {
		return nil, false
	}
	return e.gpus, true
}

// computeLocked derives a node's GPU state from its pods. With clean, the
// remembered assignments of pods no longer on the node are dropped (the
// caller holds the write lock); without, it only reads (read lock).
func (pl *GpuShare) computeLocked(ni *schedcore.NodeInfo, clean bool) *NodeGPUs {
	node := ni.Node()
	n := ni.Allocatable.Get(pl.resource)
	if n > maxGPUsPerNode {
		n = maxGPUsPerNode
	}
	g := &NodeGPUs{Free: make([]int64, max(n, 0))}
	if node != nil {
		g.Model = node.Labels[pl.modelLabel]
	}
	for i := range g.Free {
		g.Free[i] = MilliPerGPU
	}
	var present map[types.UID]bool
	if clean && len(pl.byNode[ni.Name()]) > 0 {
		present = make(map[types.UID]bool, len(ni.Pods))
	}
	var rest []Request
	for _, pi := range ni.Pods {
		p := pi.Pod
		if present != nil {
			present[p.UID] = true
		}
		r, err := ParseRequest(p)
		if err != nil || !r.IsGPU() {
			continue
		}
		g.Tags |= tagOf(r)
		ids := parseIndex(p)
		if a, ok := pl.assigned[p.UID]; ok && a.node == ni.Name() {
			ids = a.ids
		}
		if !validIDs(ids, r, len(g.Free)) {
			rest = append(rest, r)
			continue
		}
		for _, id := range ids {
			g.Free[id] -= r.Milli
		}
	}
	// Pods whose GPUs nobody recorded take the best fit, in pod order.
	for _, r := range rest {
		if ids := bestFit(g, r); ids != nil {
			for _, id := range ids {
				g.Free[id] -= r.Milli
			}
		}
	}
	if present != nil {
		for uid := range pl.byNode[ni.Name()] {
			if !present[uid] {
				delete(pl.assigned, uid)
				delete(pl.byNode[ni.Name()], uid)
			}
		}
	}
	return g
}

func validIDs(ids []int, r Request, n int) bool {
	if len(ids) != r.Count {
		return false
	}
	for i, id := range ids {
		if id < 0 || id >= n {
			return false
		}
		for _, prev := range ids[:i] {
			if prev == id {
				return false
			}
		}
	}
	return true
}

// bestFit is the "best" selection: the tightest GPU for a share, the first
// fully free GPUs for whole ones; nil when r does not fit.
func bestFit(g *NodeGPUs, r Request) []int {
	if r.Milli < MilliPerGPU {
		if i := g.BestFit(r.Milli); i >= 0 {
			return []int{i}
		}
		return nil
	}
	return g.Exclusive(r.Count)
}

// RequestOf returns the pod's request GpuShare parsed in this cycle's
// PreFilter, for score plugins of other packages. It is an error when
// GpuShare is not enabled.
func RequestOf(state *schedcore.CycleState) (Request, error) {
	s, st := readState(state)
	if st != nil {
		return Request{}, st.AsError()
	}
	return s.req, nil
}

// NodeGPUsOf returns a node's GPU state in this cycle (see
// cycleState.NodeGPUs), for score plugins of other packages. The value
// must not be modified.
func NodeGPUsOf(state *schedcore.CycleState, ni *schedcore.NodeInfo) (*NodeGPUs, error) {
	s, st := readState(state)
	if st != nil {
		return nil, st.AsError()
	}
	return s.NodeGPUs(ni), nil
}

// readState returns the cycle's GpuShare state.
func readState(state *schedcore.CycleState) (*cycleState, *schedcore.Status) {
	s, err := schedcore.ReadAs[*cycleState](state, stateKey)
	if err != nil {
		return nil, schedcore.AsStatus(fmt.Errorf("%s: %w", errNoGpuShareState, err))
	}
	return s, nil
}

// Filter rejects a node without GPUs, of another model, or without a GPU
// (or enough whole GPUs) that holds the pod's share, in that order, as the
// artifact's Open-Gpu-Share Filter does.
func (pl *GpuShare) Filter(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	s, st := readState(state)
	if st != nil {
		return st
	}
	if !s.req.IsGPU() {
		return nil
	}
	g := s.NodeGPUs(ni)
	switch {
	case g.Count() == 0:
		return statusNoGPU
	case !s.req.AcceptsModel(g.Model):
		return statusGPUModel
	case !g.Fits(s.req):
		return statusInsufficientGPU
	}
	return nil
}

// Reserve picks the GPU(s) the pod takes on the chosen node with the
// configured selection and remembers them until Unreserve or the pod
// leaves the node.
func (pl *GpuShare) Reserve(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeName string) *schedcore.Status {
	s, st := readState(state)
	if st != nil {
		return st
	}
	if !s.req.IsGPU() {
		return nil
	}
	ni, err := pl.h.Snapshot().Get(nodeName)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	g := s.NodeGPUs(ni)
	ids, err := pl.selectGPUs(s.req, g, ni.Allocatable.MilliCPU-ni.Requested.MilliCPU)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if !validIDs(ids, s.req, g.Count()) {
		return schedcore.AsStatus(fmt.Errorf("no GPU of node %s holds %s", nodeName, s.req))
	}
	for _, id := range ids {
		if g.Free[id] < s.req.Milli {
			return schedcore.AsStatus(fmt.Errorf("GPU %d of node %s has %dm free, less than %s", id, nodeName, g.Free[id], s.req))
		}
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.assigned[pod.UID] = assignment{node: nodeName, ids: ids}
	if pl.byNode[nodeName] == nil {
		pl.byNode[nodeName] = map[types.UID]bool{}
	}
	pl.byNode[nodeName][pod.UID] = true
	return nil
}

// Unreserve forgets the pod's GPUs.
func (pl *GpuShare) Unreserve(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, nodeName string) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if a, ok := pl.assigned[pod.UID]; ok && a.node == nodeName {
		delete(pl.assigned, pod.UID)
		delete(pl.byNode[nodeName], pod.UID)
	}
}

// Assignment returns the node and GPUs GpuShare gave a pod, while it holds
// them.
func (pl *GpuShare) Assignment(uid types.UID) (node string, gpus []int, ok bool) {
	pl.mu.RLock()
	defer pl.mu.RUnlock()
	a, ok := pl.assigned[uid]
	return a.node, append([]int(nil), a.ids...), ok
}

// NodeState returns a node's GPU state as GpuShare sees it between
// cycles: its pods' GPUs, the ones Reserve picked where it did. It is for
// observers outside the scheduling cycle (the FGD sweep measures the
// fragmentation with it); plugins read the cycle's state (NodeGPUsOf). The
// value is computed afresh and is the caller's.
func (pl *GpuShare) NodeState(ni *schedcore.NodeInfo) *NodeGPUs {
	pl.mu.RLock()
	defer pl.mu.RUnlock()
	return pl.computeLocked(ni, false)
}
