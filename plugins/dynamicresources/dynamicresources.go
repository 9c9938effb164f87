package dynamicresources

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.DynamicResources

// Reasons and messages, word for word kube-scheduler v1.37's. Every
// rejection is UnschedulableAndUnresolvable.
const (
	// ErrReasonCannotAllocate is the Filter reason when the node's devices
	// cannot satisfy all of the pod's unallocated claims.
	ErrReasonCannotAllocate = "cannot allocate all claims"
	// ErrReasonNotAvailable is the Filter reason when an allocated claim's
	// node selector excludes the node (or its binding failed or timed out).
	ErrReasonNotAvailable = "resourceclaim not available on the node"
	// ErrReasonInUse is the PreFilter reason for an allocated claim that
	// cannot be reserved for one more consumer.
	ErrReasonInUse = "resourceclaim in use"
	// ErrReasonExtendedStale is the Filter reason for a special claim of
	// extended resources left over by an earlier cycle.
	ErrReasonExtendedStale = "cannot schedule extended resource claim"
	// ErrReasonCannotFit is the Filter reason for an extended resource that
	// neither the node nor any DeviceClass provides.
	ErrReasonCannotFit = "cannot fit resource"
	// MsgDeallocated is PostFilter's message after deallocating a claim.
	MsgDeallocated = "deallocation of ResourceClaim completed"
	// MsgDeleted is PostFilter's message after deleting a stale special claim.
	MsgDeleted = "deletion of ResourceClaim completed"
)

const stateKey schedcore.StateKey = Name

// DynamicResources allocates devices to a pod's ResourceClaims with the
// structured allocator of k8s.io/dynamic-resource-allocation, as
// kube-scheduler v1.37.2's plugin of the same name does.
type DynamicResources struct {
	enabled        bool
	features       schedcore.Features
	allocFeatures  structured.Features
	filterTimeout  time.Duration
	bindingTimeout time.Duration
	handle         *schedcore.Handle
	dra            *schedcore.DRAManager
	celCache       *cel.Cache
	allocated      *allocatedStates
	memo           *allocationMemo
	// reuse are the last allocators built (reuse.go).
	reuse reusedAllocators
	// explain is what explanations keep (ExplainFilter).
	explain explainCache
}

var (
	_ schedcore.PreEnqueuePlugin       = (*DynamicResources)(nil)
	_ schedcore.PreFilterPlugin        = (*DynamicResources)(nil)
	_ schedcore.FilterPlugin           = (*DynamicResources)(nil)
	_ schedcore.PostFilterPlugin       = (*DynamicResources)(nil)
	_ schedcore.ScorePlugin            = (*DynamicResources)(nil)
	_ schedcore.NormalizeScorePlugin   = (*DynamicResources)(nil)
	_ schedcore.ReservePlugin          = (*DynamicResources)(nil)
	_ schedcore.PreBindPreFlightPlugin = (*DynamicResources)(nil)
	_ schedcore.EnqueueExtensions      = (*DynamicResources)(nil)
)

// New builds the plugin from DynamicResourcesArgs (nil: defaults). With
// the DynamicResourceAllocation gate off it does nothing.
func New(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	f := schedcore.DefaultFeatures
	if h != nil {
		f = h.Features()
	}
	if !f.DynamicResourceAllocation {
		return &DynamicResources{}, nil
	}
	a, err := args(obj, f)
	if err != nil {
		return nil, err
	}
	if h == nil {
		h = schedcore.NewHandle(nil, 0)
	}
	dra := h.DRA()
	if dra == nil {
		dra = schedcore.NewDRAManager()
	}
	pl := &DynamicResources{
		enabled:       true,
		features:      f,
		allocFeatures: helper.AllocatorFeatures(f),
		filterTimeout: ptr.Deref(a.FilterTimeout, metav1.Duration{}).Duration,
		handle:        h,
		dra:           dra,
		// kube's LRU of compiled CEL expressions holds 10; a cluster
		// with more distinct selectors recompiles them every cycle there.
		// Compiling is deterministic (failures are never kept), so the
		// size changes no answer, only the time.
		celCache:  cel.NewCache(celCacheSize, cel.Features{EnableConsumableCapacity: f.DRAConsumableCapacity}),
		allocated: &allocatedStates{m: dra},
		memo:      newAllocationMemo(),
	}
	// The memo's own CEL cache: its few evaluations do not evict the
	// allocator's compiled expressions.
	pl.memo.sel = &selection{class: dra.Class, cel: cel.NewCache(64, cel.Features{EnableConsumableCapacity: f.DRAConsumableCapacity})}
	if a.BindingTimeout != nil {
		pl.bindingTimeout = a.BindingTimeout.Duration
	}
	return pl, nil
}

// celCacheSize bounds the compiled CEL expressions kept (classes,
// requests' and explanations' selectors).
const celCacheSize = 256

// Name returns the plugin's name.
func (pl *DynamicResources) Name() string { return Name }

// stateData is the cycle state, written in PreFilter and updated in
// place later (kube's stateData).
type stateData struct {
	claims             claimStore
	podScalarResources map[v1.ResourceName]int64
	// extNames (with extDRA: isDRAExtendedResourceName of each),
	// extVariants: the special claim's node variants (extended.go).
	extOnce     sync.Once
	extNames    []v1.ResourceName
	extDRA      []bool
	extMu       sync.Mutex
	extVariants map[string]*extendedVariant
	// toAllocate are the claims to allocate on nodes without a variant
	// of the special claim (claimsToAllocate).
	toAllocateOnce sync.Once
	toAllocate     []*resourceapi.ResourceClaim
	allocator      structured.Allocator
	// allocInputs are the memo's inputs of this cycle.
	allocInputs *memoInputs
	// allocated and slices are what the allocator was built from, for
	// ExplainFilter (the allocated state is updated in place by the next
	// PreFilter: explanations run before it).
	allocated *structured.AllocatedState
	slices    []*resourceapi.ResourceSlice
	// specs are the specs of the claims to allocate when they are the
	// pod's own (no node-specific special claim), written out once.
	specsOnce sync.Once
	specs     string
	specsErr  error
	mu        sync.Mutex
	// unavailableClaims are indices of allocated claims that were not
	// available on some node (PostFilter may deallocate one).
	unavailableClaims    sets.Set[int]
	informationsForClaim []informationForClaim
	nodeAllocations      map[string]nodeAllocation
}

func (d *stateData) Clone() schedcore.StateData { return d }

type informationForClaim struct {
	availableOnNodes *nodeaffinity.NodeSelector
	// allocation is set by Reserve, written by PreBind; nil if nothing had
	// to be allocated.
	allocation *resourceapi.AllocationResult
}

type nodeAllocation struct {
	allocationResults                []resourceapi.AllocationResult
	extendedResourceClaim            *resourceapi.ResourceClaim
	containerResourceRequestMappings []v1.ContainerExtendedResourceRequest
}

// claimsState returns the cycle's state when the plugin has claims to
// handle; otherwise nil and the status to return (nil, or the error of a
// missing state).
func (pl *DynamicResources) claimsState(cs *schedcore.CycleState) (*stateData, *schedcore.Status) {
	if !pl.enabled {
		return nil, nil
	}
	state, err := getStateData(cs)
	if err != nil {
		return nil, schedcore.AsStatus(err)
	}
	if state.claims.empty() {
		return nil, nil
	}
	return state, nil
}

func getStateData(cs *schedcore.CycleState) (*stateData, error) {
	return schedcore.ReadAs[*stateData](cs, stateKey)
}

// statusUnschedulable is every rejection of the plugin.
func statusUnschedulable(reason string) *schedcore.Status {
	return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, reason)
}

// Filter's rejections without details, one for every node that gets them
// (NewSharedStatus).
var (
	statusCannotAllocate = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonCannotAllocate)
	statusNotAvailable   = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonNotAvailable)
	statusCannotFit      = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonCannotFit)
)

// EventsToRegister lists the events that may make a rejected pod
// schedulable, with kube's hints.
func (pl *DynamicResources) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	if !pl.enabled {
		return nil, nil
	}
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeLabel | schedcore.UpdateNodeAllocatable}},
		{Event: schedcore.ClusterEvent{Resource: schedcore.ResourceClaim, ActionType: schedcore.Add | schedcore.Update | schedcore.Delete}, QueueingHintFn: pl.isSchedulableAfterClaimChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodGeneratedResourceClaim}, QueueingHintFn: pl.isSchedulableAfterTargetPodUpdate},
		{Event: schedcore.ClusterEvent{Resource: schedcore.DeviceClass, ActionType: schedcore.Add | schedcore.Update}},
		{Event: schedcore.ClusterEvent{Resource: schedcore.ResourceSlice, ActionType: schedcore.Add | schedcore.Update}},
	}, nil
}

// PreEnqueue holds a pod until each of its claims exists (and, for a
// template claim, was made for it).
func (pl *DynamicResources) PreEnqueue(_ context.Context, pod *v1.Pod) *schedcore.Status {
	if !pl.enabled {
		return nil
	}
	if err := pl.foreachPodResourceClaim(pod, nil); err != nil {
		return statusUnschedulable(err.Error())
	}
	return nil
}

// PreFilter gathers the pod's claims, checks the allocated ones can be
// reserved and the unallocated ones' device classes exist, and prepares
// the allocator over the current ResourceSlices and allocations.
func (pl *DynamicResources) PreFilter(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	if !pl.enabled {
		return nil, schedcore.Skipped()
	}
	s := &stateData{nodeAllocations: map[string]nodeAllocation{}}
	state.Write(stateKey, s)
	if len(pod.Spec.ResourceClaims) == 0 && !pl.mayHaveExtendedResources(pod) {
		return nil, schedcore.Skipped()
	}
	userClaims, err := pl.podResourceClaims(pod)
	if err != nil {
		return nil, statusUnschedulable(err.Error())
	}
	extended, st := pl.preFilterExtendedResources(pod, s)
	if st != nil {
		return nil, st
	}
	claims := newClaimStore(userClaims, extended)
	if claims.empty() {
		return nil, schedcore.Skipped()
	}
	numClaimsToAllocate := 0
	s.informationsForClaim = make([]informationForClaim, claims.len())
	for index, claim := range claims.all() {
		if claim.Status.Allocation != nil && !resourceclaim.CanBeReserved(claim) && !resourceclaim.IsReservedForPod(pod, claim, false) {
			return nil, statusUnschedulable(ErrReasonInUse)
		}
		if claim.Status.Allocation != nil {
			sel, err := nodeSelectorFromAllocation(claim.Status.Allocation)
			if err != nil {
				return nil, schedcore.AsStatus(err)
			}
			s.informationsForClaim[index].availableOnNodes = sel
			continue
		}
		numClaimsToAllocate++
		// An allocation in flight (Reserve done, PreBind not yet): wait
		// for it.
		if pl.dra.PendingAllocation(claim.UID) != nil {
			return nil, statusUnschedulable(fmt.Sprintf("resource claim %s/%s is in the process of being allocated", claim.Namespace, claim.Name))
		}
		if claim == extended {
			continue
		}
		for _, request := range claim.Spec.Devices.Requests {
			switch {
			case request.Exactly != nil:
				if st := pl.validateDeviceClass(request.Exactly.DeviceClassName, request.Name); st != nil {
					return nil, st
				}
			case len(request.FirstAvailable) > 0:
				if !pl.features.DRAPrioritizedList {
					return nil, statusUnschedulable(fmt.Sprintf("resource claim %s/%s, request %s: has subrequests, but the DRAPrioritizedList feature is disabled", claim.Namespace, claim.Name, request.Name))
				}
				for _, sub := range request.FirstAvailable {
					if st := pl.validateDeviceClass(sub.DeviceClassName, strings.Join([]string{request.Name, sub.Name}, "/")); st != nil {
						return nil, st
					}
				}
			default:
				return nil, statusUnschedulable(fmt.Sprintf("resource claim %s/%s, request %s: unknown request type", claim.Namespace, claim.Name, request.Name))
			}
		}
	}
	s.claims = claims
	if numClaimsToAllocate > 0 {
		allocated, poolVer, poolItems := pl.allocated.get(pl.features.DRAConsumableCapacity)
		slices := pl.dra.Slices()
		s.allocInputs = pl.memo.inputs(pl.dra, poolVer, poolItems)
		if s.allocInputs != nil {
			s.allocInputs.changes = pl.allocated.changeLog()
		}
		allocator, err := pl.allocator(ctx, allocated, pl.slicesFor(ctx, s, slices), pl.allocated.counteredChanges())
		if err != nil {
			return nil, schedcore.AsStatus(err)
		}
		s.allocator = allocator
		s.allocated, s.slices = allocated, slices
	}
	return nil, nil
}

// slicesFor are the slices for the cycle's allocator: without the pools
// the pod's claims cannot use (prune.go) when every node gets the same
// claims.
func (pl *DynamicResources) slicesFor(ctx context.Context, s *stateData, slices []*resourceapi.ResourceSlice) []*resourceapi.ResourceSlice {
	if s.allocInputs == nil || s.claims.extendedResourceClaim() != nil {
		return slices
	}
	claims := s.claimsToAllocate(nil)
	spec, err := s.userSpecs(claims)
	if err != nil {
		return slices
	}
	return pl.memo.prunedSlices(ctx, s.allocInputs, slices, spec, claims)
}

func (pl *DynamicResources) validateDeviceClass(className, requestName string) *schedcore.Status {
	if className == "" {
		return schedcore.AsStatus(fmt.Errorf("request %s: unsupported request type", requestName))
	}
	if _, ok := pl.dra.Class(className); !ok {
		return statusUnschedulable(fmt.Sprintf("request %s: device class %s does not exist", requestName, className))
	}
	return nil
}

// Filter checks that the pod's allocated claims are available on the node
// and that the unallocated ones can be allocated from its devices; the
// allocation is kept for Reserve.
func (pl *DynamicResources) Filter(ctx context.Context, cs *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	state, st := pl.claimsState(cs)
	if state == nil {
		return st
	}
	node := nodeInfo.Node()
	nodeExtended, mappings, st := pl.filterExtendedResources(state, pod, nodeInfo)
	if st != nil {
		return st
	}
	if nodeExtended == nil && state.claims.noUserClaim() {
		return nil
	}
	var unavailable []int
	for index, claim := range state.claims.all() {
		if sel := state.informationsForClaim[index].availableOnNodes; sel != nil && !sel.Match(node) {
			unavailable = append(unavailable, index)
			continue
		}
		if allocationRequiresOptionalNodeOperations(claim.Status.Allocation) && !slices.Contains(node.Status.DeclaredFeatures, optionalNodeOperationsFeature) {
			unavailable = append(unavailable, index)
			continue
		}
		if claim.Status.Allocation != nil && pl.bindingConditions() {
			ready, err := isClaimReadyForBinding(claim)
			if err != nil || (!ready && pl.isClaimTimeout(claim)) {
				unavailable = append(unavailable, index)
			}
		}
	}
	var allocations []resourceapi.AllocationResult
	if state.allocator != nil {
		claimsToAllocate := state.claimsToAllocate(nodeExtended)
		result, err := pl.allocate(ctx, state, nodeInfo.ListIndex(), node, claimsToAllocate)
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			return schedcore.AsStatus(fmt.Errorf("node %s: timed out trying to allocate devices", node.Name))
		case errors.Is(err, structured.ErrFailedAllocationOnNode):
			return statusUnschedulable(err.Error())
		case ctx.Err() != nil:
			return statusUnschedulable(fmt.Sprintf("asked by caller to stop allocating devices: %v", context.Cause(ctx)))
		case err != nil:
			return schedcore.AsStatus(err)
		}
		if len(result) != len(claimsToAllocate) {
			return statusCannotAllocate
		}
		allocations = result
	}
	if state.allocator != nil || len(unavailable) > 0 {
		state.mu.Lock()
		defer state.mu.Unlock()
	}
	if len(unavailable) > 0 {
		if state.unavailableClaims == nil {
			state.unavailableClaims = sets.New[int]()
		}
		state.unavailableClaims.Insert(unavailable...)
		return statusNotAvailable
	}
	if state.allocator != nil {
		state.nodeAllocations[node.Name] = nodeAllocation{allocationResults: allocations, extendedResourceClaim: nodeExtended, containerResourceRequestMappings: mappings}
	}
	return nil
}

// claimsToAllocate are the claims without an allocation, the special
// claim replaced by the node's variant (nil: kept), made once per cycle
// and variant: the allocator and the memo only read them.
func (d *stateData) claimsToAllocate(nodeExtended *resourceapi.ResourceClaim) []*resourceapi.ResourceClaim {
	build := func() []*resourceapi.ResourceClaim {
		out := make([]*resourceapi.ResourceClaim, 0, d.claims.len())
		extended := d.claims.extendedResourceClaim()
		for _, claim := range d.claims.toAllocate() {
			if claim == extended && nodeExtended != nil {
				claim = nodeExtended
			}
			out = append(out, claim)
		}
		return out
	}
	if nodeExtended == nil {
		d.toAllocateOnce.Do(func() { d.toAllocate = build() })
		return d.toAllocate
	}
	if v := d.variantOf(nodeExtended); v != nil {
		v.claimsOnce.Do(func() { v.claims = build() })
		return v.claims
	}
	return build()
}

// allocate runs the allocator for the node, within the filter timeout,
// reusing an earlier identical answer when the memo has one.
func (pl *DynamicResources) allocate(ctx context.Context, state *stateData, pos int, node *v1.Node, claims []*resourceapi.ResourceClaim) ([]resourceapi.AllocationResult, error) {
	specs := func() (string, error) { return state.specsOf(claims) }
	return pl.memo.allocate(ctx, state.allocInputs, pos, node, claims, specs, func(ctx context.Context) ([]resourceapi.AllocationResult, error) {
		if pl.features.DRASchedulerFilterTimeout && pl.filterTimeout > 0 {
			c, cancel := context.WithTimeout(ctx, pl.filterTimeout)
			defer cancel()
			ctx = c
		}
		return state.allocator.Allocate(ctx, node, claims)
	})
}

// specsOf returns the specs of claims, the claims to allocate on some
// node (claimsToAllocate), written out once per cycle and variant of the
// special claim.
func (d *stateData) specsOf(claims []*resourceapi.ResourceClaim) (string, error) {
	if !d.userClaimsOnly(claims) {
		// The node's variant of the special claim, last: nodes sharing
		// it share the specs.
		if v := d.variantOf(claims[len(claims)-1]); v != nil {
			v.specOnce.Do(func() { v.spec, v.specErr = claimSpecs(claims) })
			return v.spec, v.specErr
		}
		return claimSpecs(claims)
	}
	return d.userSpecs(claims)
}

// PodBlind: PreFilter and PostFilter of a pod without claims or extended
// resources DRA may serve skip without reading anything (with them, they
// read the claims and their allocations).
func (pl *DynamicResources) PodBlind(pod *v1.Pod) schedcore.PodBlindness {
	if !pl.enabled || len(pod.Spec.ResourceClaims) == 0 && !pl.mayHaveExtendedResources(pod) {
		return schedcore.BlindPreFilter | schedcore.BlindPostFilter
	}
	return 0
}

var _ schedcore.PodBlindPlugin = (*DynamicResources)(nil)
