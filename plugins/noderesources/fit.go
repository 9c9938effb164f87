package noderesources

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	resourcehelper "k8s.io/component-helpers/resource"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Reasons of the Filter, word for word kube-scheduler v1.37's. A scalar
// (extended, hugepages, ...) resource gets ErrReasonInsufficientPrefix
// followed by its name, as InsufficientReason builds it.
const (
	ErrReasonTooManyPods                  = "Too many pods"
	ErrReasonInsufficientCPU              = "Insufficient cpu"
	ErrReasonInsufficientMemory           = "Insufficient memory"
	ErrReasonInsufficientEphemeralStorage = "Insufficient ephemeral-storage"
	ErrReasonInsufficientPrefix           = "Insufficient "
)

// InsufficientReason returns the Filter reason for a resource:
// "Insufficient <name>" ("Too many pods" for pods).
func InsufficientReason(name v1.ResourceName) string {
	if name == v1.ResourcePods {
		return ErrReasonTooManyPods
	}
	return ErrReasonInsufficientPrefix + string(name)
}

const (
	preFilterStateKey schedcore.StateKey = "PreFilter" + names.NodeResourcesFit
	preScoreStateKey  schedcore.StateKey = "PreScore" + names.NodeResourcesFit
)

// Fit checks that a node has room for the pod's requests and scores nodes by
// the configured strategy.
type Fit struct {
	ignoredResources      sets.Set[string]
	ignoredResourceGroups sets.Set[string]
	features              schedcore.Features
	scorer                *resourceAllocationScorer
	// dra, with DRAExtendedResource, backs extended resources with
	// DeviceClasses: a node without such a resource in its allocatable
	// leaves it to DynamicResources.
	dra *schedcore.DRAManager
	// placementScorer scores pod groups' placements (MostAllocated), only
	// with TopologyAwareWorkloadScheduling on.
	placementScorer *resourceAllocationScorer
}

var (
	_ schedcore.PreFilterPlugin   = (*Fit)(nil)
	_ schedcore.FilterPlugin      = (*Fit)(nil)
	_ schedcore.EnqueueExtensions = (*Fit)(nil)
	_ schedcore.PreScorePlugin    = (*Fit)(nil)
	_ schedcore.ScorePlugin       = (*Fit)(nil)
	_ schedcore.NodeLocalPlugin   = (*Fit)(nil)
	_ schedcore.FilterExplainer   = (*Fit)(nil)
	_ schedcore.NodeLocalScorer   = (*Fit)(nil)
	_ schedcore.NodeLocalFilter   = (*Fit)(nil)
)

// NodeLocal is true: the verdict reads the node's own allocatable and
// requested resources.
func (pl *Fit) NodeLocal(*v1.Pod) bool { return true }

// NewFit builds NodeResourcesFit from NodeResourcesFitArgs (nil means the
// defaults: LeastAllocated over cpu and memory).
//
// The scoring requests deliberately match kube v1.37 exactly: kube builds the
// strategy's scorer without the plugin's feature flags, so the pod's
// scoring requests ignore pod-level resources and status resources, and
// containers without cpu/memory requests count the non-zero defaults
// (100m, 200Mi); nodes contribute NonZeroRequested for cpu and memory.
func NewFit(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	args, err := fitArgs(obj)
	if err != nil {
		return nil, err
	}
	s := args.ScoringStrategy
	var st strategy
	switch s.Type {
	case configv1.LeastAllocated:
		st = leastAllocated
	case configv1.MostAllocated:
		st = mostAllocated
	case configv1.RequestedToCapacityRatio:
		st = requestedToCapacityRatio
	default:
		return nil, fmt.Errorf("scoring strategy %s is not supported", s.Type)
	}
	scorer := newScorer(st, s.Resources, false, resourcehelper.PodResourcesOptions{SkipPodLevelResources: true})
	if st == requestedToCapacityRatio {
		scorer.shape = scaledShape(s.RequestedToCapacityRatio.Shape)
	}
	scorer.dra = newDRAScoring(h)
	pl := &Fit{
		ignoredResources:      sets.New(args.IgnoredResources...),
		ignoredResourceGroups: sets.New(args.IgnoredResourceGroups...),
		features:              features(h),
		scorer:                scorer,
		dra:                   draManager(h),
	}
	if pl.features.TopologyAwareWorkloadScheduling {
		pl.placementScorer = newPlacementScorer(s.Resources, scorer)
	}
	return pl, nil
}

// draManager returns the handle's DRA manager when DRA-backed extended
// resources are on.
func draManager(h *schedcore.Handle) *schedcore.DRAManager {
	if h == nil || !h.Features().DRAExtendedResource {
		return nil
	}
	return h.DRA()
}

func features(h *schedcore.Handle) schedcore.Features {
	if h == nil {
		return schedcore.DefaultFeatures
	}
	return h.Features()
}

// Name returns NodeResourcesFit.
func (pl *Fit) Name() string { return names.NodeResourcesFit }

// scalarRequest is one scalar resource the Filter checks.
type scalarRequest struct {
	name     v1.ResourceName
	quantity int64
	reason   string
	// dra: a DeviceClass backs the resource (DRAExtendedResource); a node
	// without it in its allocatable hands it to DynamicResources.
	dra bool
}

// preFilterState is the pod's requests, computed once per cycle, with the
// scalar resources to check listed in name order (kube walks a map, in
// random order; sorting makes the order of reasons reproducible).
type preFilterState struct {
	schedcore.Resource
	scalars []scalarRequest
	// scalarStatuses are the shared rejections that name a scalar
	// resource (scalarStatus), made on first use; nil when the pod
	// requests none or too many for the table.
	scalarStatuses []atomic.Pointer[schedcore.Status]
}

// Clone shares the state: it is never modified after PreFilter.
func (s *preFilterState) Clone() schedcore.StateData { return s }

// newPreFilterState computes the pod's requests and the scalar resources to
// check: those with a positive request, minus ignored extended resources.
func newPreFilterState(pod *v1.Pod, f schedcore.Features, ignored, ignoredGroups sets.Set[string], dra *schedcore.DRAManager) *preFilterState {
	s := &preFilterState{Resource: *schedcore.ComputePodRequests(pod, f)}
	for name, q := range s.ScalarResources {
		if q <= 0 {
			continue
		}
		if schedcore.IsExtendedResourceName(name) {
			var prefix string
			if ignoredGroups.Len() > 0 {
				prefix, _, _ = strings.Cut(string(name), "/")
			}
			if ignored.Has(string(name)) || ignoredGroups.Has(prefix) {
				continue
			}
		}
		s.scalars = append(s.scalars, scalarRequest{name: name, quantity: q, reason: InsufficientReason(name), dra: dra.ExtendedResourceClass(name) != nil})
	}
	sort.Slice(s.scalars, func(i, j int) bool { return s.scalars[i].name < s.scalars[j].name })
	s.makeScalarStatuses()
	return s
}

// PreFilter computes the pod's requests (spec only: pod-level resources when
// the gate is on, init containers and sidecars, overhead).
func (pl *Fit) PreFilter(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	state.Write(preFilterStateKey, newPreFilterState(pod, pl.features, pl.ignoredResources, pl.ignoredResourceGroups, pl.dra))
	return nil, nil
}

// Filter rejects a node without room for the pod, with one reason per
// missing resource in kube's order: pods, cpu, memory, ephemeral-storage,
// then scalar resources (by name). The status is UnschedulableAndUnresolvable
// when some request exceeds the node's allocatable outright (preemption
// cannot help), Unschedulable otherwise.
func (pl *Fit) Filter(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	// Room for the usual shortfalls on the stack: Filter allocates
	// nothing on the nodes it rejects for pods, cpu, memory or storage.
	var buf [4]InsufficientResource
	insufficient := appendInsufficient(buf[:0], s, nodeInfo)
	if len(insufficient) == 0 {
		return nil
	}
	return insufficientStatus(s, insufficient)
}

// FilterKey is the requests Filter checks (fitsRequest): cpu, memory,
// ephemeral storage and the scalar resources with whether DRA backs them;
// the rest of the verdict is the node's allocatable, requested resources
// and pod count.
func (pl *Fit) FilterKey(state *schedcore.CycleState, _ *v1.Pod, k *schedcore.MemoKey) bool {
	s, ok := schedcore.Lookup[*preFilterState](state, preFilterStateKey)
	if !ok {
		return false
	}
	k.Int(s.MilliCPU).Int(s.Memory).Int(s.EphemeralStorage).Int(int64(len(s.scalars)))
	for _, r := range s.scalars {
		k.String(string(r.name)).Int(r.quantity)
		if r.dra {
			k.Int(1)
		} else {
			k.Int(0)
		}
	}
	return true
}

// fixedReasons are the reasons of the resources every node has (pods,
// cpu, memory, ephemeral storage), in fitsRequest's order.
var fixedReasons = [...]string{ErrReasonTooManyPods, ErrReasonInsufficientCPU, ErrReasonInsufficientMemory, ErrReasonInsufficientEphemeralStorage}

// fixedStatuses are the rejections for shortfalls of those resources
// only, by code (Unschedulable, UnschedulableAndUnresolvable) and set of
// resources (bit i: fixedReasons[i]): shared statuses, so that Filter
// allocates none and the framework remembers them per node.
var fixedStatuses = func() (out [2][1 << len(fixedReasons)]*schedcore.Status) {
	for c, code := range []schedcore.Code{schedcore.Unschedulable, schedcore.UnschedulableAndUnresolvable} {
		for set := 1; set < len(out[c]); set++ {
			var reasons []string
			for i, r := range fixedReasons {
				if set&(1<<i) != 0 {
					reasons = append(reasons, r)
				}
			}
			out[c][set] = schedcore.NewSharedStatus(code, reasons...)
		}
	}
	return out
}()

func insufficientStatus(s *preFilterState, insufficient []InsufficientResource) *schedcore.Status {
	if st := fixedStatus(insufficient); st != nil {
		return st
	}
	if st := s.scalarStatus(insufficient); st != nil {
		return st
	}
	reasons := make([]string, 0, len(insufficient))
	code := schedcore.Unschedulable
	for i := range insufficient {
		reasons = append(reasons, insufficient[i].Reason)
		if insufficient[i].Unresolvable {
			code = schedcore.UnschedulableAndUnresolvable
		}
	}
	return schedcore.NewStatus(code, reasons...)
}

// ExplainFilter says how much of each resource the node lacks, from the
// requests PreFilter computed: "needs 250m cpu more (free 750m of 4)", or
// that a request exceeds the node's allocatable by itself. The shortfall
// is the largest share of a request that is missing, 1 when a request
// exceeds the allocatable (no room freed on the node can help).
func (pl *Fit) ExplainFilter(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	s, err := schedcore.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return nil
	}
	ins := fitsRequest(s, nodeInfo)
	if len(ins) == 0 {
		return nil
	}
	out := &schedcore.FilterExplanation{}
	for _, r := range ins {
		q := func(v int64) string { return schedcore.FormatQuantity(r.ResourceName, v) }
		var text string
		switch {
		case r.ResourceName == v1.ResourcePods:
			text = fmt.Sprintf("node already runs %d pods, its maximum (allocatable pods %d)", r.Used, r.Capacity)
		case r.Unresolvable:
			text = fmt.Sprintf("requests %s %s, more than the node's allocatable %s (removing pods cannot help)", q(r.Requested), r.ResourceName, q(r.Capacity))
		default:
			text = fmt.Sprintf("needs %s %s more (free %s of %s)", q(r.Missing()), r.ResourceName, q(r.Capacity-r.Used), q(r.Capacity))
		}
		out.Gaps = append(out.Gaps, schedcore.Gap{Text: text})
		out.Shortfall = max(out.Shortfall, r.shortfall())
	}
	return out
}

// InsufficientResource is one resource a node lacks for a pod: what the pod
// requests, what the node's pods already use and what the node can allocate
// (milli-units for cpu).
type InsufficientResource struct {
	ResourceName v1.ResourceName
	// Reason is the Filter reason ("Insufficient cpu", "Too many pods").
	Reason    string
	Requested int64
	Used      int64
	Capacity  int64
	// Unresolvable is set when the request exceeds Capacity by itself, so
	// that evicting pods (preemption) cannot make room.
	Unresolvable bool
}

// Missing is how much would have to be freed or added for the pod to fit:
// Requested - (Capacity - Used).
func (r InsufficientResource) Missing() int64 { return r.Requested - (r.Capacity - r.Used) }

// fitsRequest is kube's fitsRequest. It allocates only when the pod does not
// fit.
func fitsRequest(s *preFilterState, nodeInfo *schedcore.NodeInfo) []InsufficientResource {
	return appendInsufficient(nil, s, nodeInfo)
}

// fixedStatus is the shared status for shortfalls of pods, cpu, memory
// or ephemeral storage only (nil for any other): the same code and
// reasons, in order, as insufficientStatus would make.
func fixedStatus(insufficient []InsufficientResource) *schedcore.Status {
	set, code, next := 0, 0, 0
	for i := range insufficient {
		k := next
		for k < len(fixedReasons) && fixedReasons[k] != insufficient[i].Reason {
			k++
		}
		if k == len(fixedReasons) {
			return nil
		}
		set, next = set|1<<k, k+1
		if insufficient[i].Unresolvable {
			code = 1
		}
	}
	return fixedStatuses[code][set]
}

// appendInsufficient appends to out what fitsRequest returns.
func appendInsufficient(out []InsufficientResource, s *preFilterState, nodeInfo *schedcore.NodeInfo) []InsufficientResource {
	alloc, used := &nodeInfo.Allocatable, &nodeInfo.Requested

	allowedPodNumber := alloc.AllowedPodNumber
	if len(nodeInfo.Pods)+1 > allowedPodNumber {
		out = append(out, InsufficientResource{
			ResourceName: v1.ResourcePods, Reason: ErrReasonTooManyPods,
			Requested: 1, Used: int64(len(nodeInfo.Pods)), Capacity: int64(allowedPodNumber),
		})
	}
	if s.MilliCPU == 0 && s.Memory == 0 && s.EphemeralStorage == 0 && len(s.ScalarResources) == 0 {
		return out
	}
	if s.MilliCPU > 0 && s.MilliCPU > alloc.MilliCPU-used.MilliCPU {
		out = append(out, InsufficientResource{
			ResourceName: v1.ResourceCPU, Reason: ErrReasonInsufficientCPU,
			Requested: s.MilliCPU, Used: used.MilliCPU, Capacity: alloc.MilliCPU,
			Unresolvable: s.MilliCPU > alloc.MilliCPU,
		})
	}
	if s.Memory > 0 && s.Memory > alloc.Memory-used.Memory {
		out = append(out, InsufficientResource{
			ResourceName: v1.ResourceMemory, Reason: ErrReasonInsufficientMemory,
			Requested: s.Memory, Used: used.Memory, Capacity: alloc.Memory,
			Unresolvable: s.Memory > alloc.Memory,
		})
	}
	if s.EphemeralStorage > 0 && s.EphemeralStorage > alloc.EphemeralStorage-used.EphemeralStorage {
		out = append(out, InsufficientResource{
			ResourceName: v1.ResourceEphemeralStorage, Reason: ErrReasonInsufficientEphemeralStorage,
			Requested: s.EphemeralStorage, Used: used.EphemeralStorage, Capacity: alloc.EphemeralStorage,
			Unresolvable: s.EphemeralStorage > alloc.EphemeralStorage,
		})
	}
	for i := range s.scalars {
		r := &s.scalars[i]
		capacity, inUse := alloc.ScalarResources[r.name], used.ScalarResources[r.name]
		if r.dra && capacity == 0 {
			// DynamicResources allocates it from the node's devices.
			continue
		}
		if r.quantity > capacity-inUse {
			out = append(out, InsufficientResource{
				ResourceName: r.name, Reason: r.reason,
				Requested: r.quantity, Used: inUse, Capacity: capacity,
				Unresolvable: r.quantity > capacity,
			})
		}
	}
	return out
}

type preScoreState struct {
	// podRequests are in the order of the strategy's resources.
	podRequests []int64
	// dra is the devices of the classes backing the DRA extended
	// resources the pod requests, nil when it requests none.
	dra *draTotals
}

// Clone shares the state: it is never modified after PreScore.
func (s *preScoreState) Clone() schedcore.StateData { return s }

// PreScore computes the pod's scoring requests once, and the nodes'
// devices for the DRA-backed extended resources among them.
func (pl *Fit) PreScore(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodes []*schedcore.NodeInfo) *schedcore.Status {
	reqs := pl.scorer.podRequests(pod)
	state.Write(preScoreStateKey, &preScoreState{podRequests: reqs, dra: pl.scorer.draTotals(ctx, reqs, nodes)})
	return nil
}

// Score scores the node by the configured strategy; without PreScore state
// the requests (and the node's DRA devices) are computed here.
func (pl *Fit) Score(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	s, ok := schedcore.Lookup[*preScoreState](state, preScoreStateKey)
	if !ok {
		reqs := pl.scorer.podRequests(pod)
		s = &preScoreState{podRequests: reqs, dra: pl.scorer.draTotals(ctx, reqs, []*schedcore.NodeInfo{nodeInfo})}
	}
	return pl.scorer.nodeScore(nodeInfo, s.podRequests, s.dra)
}

// ScoreKey is the pod's scoring requests and, when DRA backs some of them,
// the revisions of the DRA objects and allocations counted: with the
// strategy, fixed for the plugin, they and the node's resources are all
// Score reads.
func (pl *Fit) ScoreKey(state *schedcore.CycleState, _ *v1.Pod, k *schedcore.MemoKey) bool {
	s, ok := schedcore.Lookup[*preScoreState](state, preScoreStateKey)
	if !ok {
		return false
	}
	requestsKey(k, s.podRequests)
	s.dra.key(k)
	return true
}

var (
	_ schedcore.PluginFactory = NewFit
	_ schedcore.PluginFactory = NewBalancedAllocation
)

// PodBlind: PreFilter sums the pod's requests and never rejects (Filter
// reads the node's pods).
func (pl *Fit) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter
}

var _ schedcore.PodBlindPlugin = (*Fit)(nil)
