package noderesources

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ErrReasonResourcesNotFound is the Error status of a scorer without
// resources (kube's "resources not found"; defaulting makes it unreachable
// through the factories).
const ErrReasonResourcesNotFound = "resources not found"

// maxStackResources is how many scored resources Score handles without
// allocating; more is allowed, it just allocates.
const maxStackResources = 8

// strategy selects the function that scores a node from, per configured
// resource, the requested amount with the pod (allocated + pod), the
// allocated amount without it and the allocatable amount; an allocatable of
// 0 marks a resource to skip. A switch rather than a func value keeps the
// vectors on the stack.
type strategy int

const (
	leastAllocated strategy = iota
	mostAllocated
	requestedToCapacityRatio
	balancedAllocation
)

// resourceAllocationScorer is kube's resourceAllocationScorer: it turns a
// pod and a node into the three per-resource vectors a scoreFunc reads.
type resourceAllocationScorer struct {
	// useRequested selects nodeInfo.Requested for cpu and memory, and the
	// pod's plain requests; otherwise NonZeroRequested and the pod's
	// requests with the non-zero defaults for containers that set none.
	useRequested bool
	strategy     strategy
	// shape is RequestedToCapacityRatio's, scores already scaled.
	shape     []shapePoint
	resources []configv1.ResourceSpec
	names     []v1.ResourceName
	scalar    []bool // IsScalarResourceName per resource
	// podOpts computes the incoming pod's requests.
	podOpts resourcehelper.PodResourcesOptions
	// dra counts the devices backing DRA extended resources (nil when
	// DRAExtendedResource is off).
	dra *draScoring
}

func newScorer(st strategy, resources []configv1.ResourceSpec, useRequested bool, podOpts resourcehelper.PodResourcesOptions) *resourceAllocationScorer {
	s := &resourceAllocationScorer{useRequested: useRequested, strategy: st, resources: resources, podOpts: podOpts}
	s.names = make([]v1.ResourceName, len(resources))
	s.scalar = make([]bool, len(resources))
	for i := range resources {
		s.names[i] = v1.ResourceName(resources[i].Name)
		s.scalar[i] = schedcore.IsScalarResourceName(s.names[i])
	}
	if !useRequested {
		s.podOpts.NonMissingContainerRequests = v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(schedcore.DefaultMilliCPURequest, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(schedcore.DefaultMemoryRequest, resource.DecimalSI),
		}
	}
	return s
}

// podRequests is kube's calculatePodResourceRequestList: the pod's request
// of each configured resource, milli-units for cpu, plain values otherwise;
// from the spec without PodRequests' maps for the usual pod.
func (r *resourceAllocationScorer) podRequests(pod *v1.Pod) []int64 {
	out := make([]int64, len(r.names))
	if schedcore.SpecPodRequests(pod, !r.useRequested, r.names, out) {
		return out
	}
	reqs := resourcehelper.PodRequests(pod, r.podOpts)
	for i, name := range r.names {
		q := reqs[name]
		if name == v1.ResourceCPU {
			out[i] = q.MilliValue()
		} else {
			out[i] = q.Value()
		}
	}
	return out
}

// draTotals is what PreScore counts of the DRA-backed extended resources
// the pod requests (kube's getDRAPreScoredParams, for every node).
func (r *resourceAllocationScorer) draTotals(ctx context.Context, podRequests []int64, nodes []*schedcore.NodeInfo) *draTotals {
	return r.dra.totals(ctx, r.names, podRequests, nodes)
}

// requestsKey writes a pod's requests, in the order of the configured
// resources, into a memo key.
func requestsKey(k *schedcore.MemoKey, podRequests []int64) {
	for _, q := range podRequests {
		k.Int(q)
	}
}

// isBestEffort reports whether the pod requests none of the resources.
func isBestEffort(podRequests []int64) bool {
	for _, r := range podRequests {
		if r != 0 {
			return false
		}
	}
	return true
}

// nodeScore is kube's resourceAllocationScorer.score: it fills the vectors
// (a scalar resource the pod does not request, or one the node has none of,
// is left at zero so the score function skips it) and scores them. dra is
// the devices of the classes backing requested extended resources (nil when
// there are none).
func (r *resourceAllocationScorer) nodeScore(nodeInfo *schedcore.NodeInfo, podRequests []int64, dra *draTotals) (int64, *schedcore.Status) {
	n := len(r.resources)
	if n == 0 {
		return 0, schedcore.NewStatus(schedcore.Error, ErrReasonResourcesNotFound)
	}
	var reqBuf, allocBuf, capBuf [maxStackResources]int64
	var requested, allocated, allocatable []int64
	if n <= maxStackResources {
		requested, allocated, allocatable = reqBuf[:n], allocBuf[:n], capBuf[:n]
	} else {
		requested, allocated, allocatable = make([]int64, n), make([]int64, n), make([]int64, n)
	}
	r.nodeVectors(nodeInfo, podRequests, dra, requested, allocated, allocatable)
	return r.scoreVectors(requested, allocated, allocatable), nil
}

// nodeVectors is kube's calculateNodeAllocatableRequest: per resource, what
// the node has allocated and can allocate, and what is requested with the
// pod; a scalar resource the pod does not request, or one the node has
// none of, stays at zero. A resource of which the node has no allocatable
// (no device plugin) but a DeviceClass backs counts the node's devices of
// that class and those allocated (dra, nil when the pod requests no such
// resource), as kube's calculateResourceAllocatableRequest does.
func (r *resourceAllocationScorer) nodeVectors(nodeInfo *schedcore.NodeInfo, podRequests []int64, dra *draTotals, requested, allocated, allocatable []int64) {
	for i := range requested {
		if podRequests[i] == 0 && r.scalar[i] {
			continue
		}
		capacity, used := r.nodeResource(nodeInfo, r.names[i])
		if capacity == 0 && dra != nil {
			if c, backed := dra.node(i, nodeInfo.Name()); backed {
				capacity, used = c.capacity, c.allocated
			}
		}
		if capacity == 0 {
			continue
		}
		allocatable[i] = capacity
		allocated[i] = used
		requested[i] = used + podRequests[i]
	}
}

func (r *resourceAllocationScorer) scoreVectors(requested, allocated, allocatable []int64) int64 {
	switch r.strategy {
	case mostAllocated:
		return mostAllocatedScore(r.resources, requested, allocatable)
	case requestedToCapacityRatio:
		return requestedToCapacityRatioScore(r.resources, r.shape, requested, allocatable)
	case balancedAllocation:
		return balancedResourceScorer(requested, allocated, allocatable)
	default:
		return leastAllocatedScore(r.resources, requested, allocatable)
	}
}

// nodeResource is kube's calculateResourceAllocatableRequest without DRA
// (nodeScore adds it): the node's allocatable and allocated amount of one
// resource. cpu and memory read NonZeroRequested unless useRequested;
// ephemeral storage and scalar resources always read Requested; a scalar
// resource the node does not list (and "pods") gives 0, 0. A scalar
// resource of which the node has no allocatable but a DeviceClass backs
// counts the node's devices of that class and those allocated instead
// (nodeVectors).
func (r *resourceAllocationScorer) nodeResource(nodeInfo *schedcore.NodeInfo, name v1.ResourceName) (allocatable, allocated int64) {
	requested := &nodeInfo.NonZeroRequested
	if r.useRequested {
		requested = &nodeInfo.Requested
	}
	switch name {
	case v1.ResourceCPU:
		return nodeInfo.Allocatable.MilliCPU, requested.MilliCPU
	case v1.ResourceMemory:
		return nodeInfo.Allocatable.Memory, requested.Memory
	case v1.ResourceEphemeralStorage:
		return nodeInfo.Allocatable.EphemeralStorage, nodeInfo.Requested.EphemeralStorage
	default:
		if a, ok := nodeInfo.Allocatable.ScalarResources[name]; ok {
			return a, nodeInfo.Requested.ScalarResources[name]
		}
	}
	return 0, 0
}

// leastAllocatedScore is the LeastAllocated strategy: per resource
// (allocatable-requested)*MaxNodeScore/allocatable (0 when over), then the
// weighted integer average over the resources the node has.
func leastAllocatedScore(resources []configv1.ResourceSpec, requested, allocatable []int64) int64 {
	var nodeScore, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		w := resources[i].Weight
		nodeScore += leastRequestedScore(requested[i], allocatable[i]) * w
		weightSum += w
	}
	if weightSum == 0 {
		return 0
	}
	return nodeScore / weightSum
}

func leastRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 || requested > capacity {
		return 0
	}
	return ((capacity - requested) * schedcore.MaxNodeScore) / capacity
}

// mostAllocatedScore is the MostAllocated strategy: per resource
// requested*MaxNodeScore/allocatable (requested capped at allocatable, since
// non-zero defaults can exceed it), then the weighted integer average.
func mostAllocatedScore(resources []configv1.ResourceSpec, requested, allocatable []int64) int64 {
	var nodeScore, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		w := resources[i].Weight
		nodeScore += mostRequestedScore(requested[i], allocatable[i]) * w
		weightSum += w
	}
	if weightSum == 0 {
		return 0
	}
	return nodeScore / weightSum
}

func mostRequestedScore(requested, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	if requested > capacity {
		requested = capacity
	}
	return (requested * schedcore.MaxNodeScore) / capacity
}

// shapePoint is a point of a broken-linear function (kube's
// helper.FunctionShapePoint).
type shapePoint struct {
	utilization int64
	score       int64
}

// brokenLinear is kube's helper.BuildBrokenLinearFunction evaluated at p:
// shape[0].score up to the first point, the last score past the last point,
// linear (integer division) in between. The shape is sorted by utilization
// (validated) and not empty.
func brokenLinear(shape []shapePoint, p int64) int64 {
	for i := range shape {
		if p <= shape[i].utilization {
			if i == 0 {
				return shape[0].score
			}
			return shape[i-1].score + (shape[i].score-shape[i-1].score)*(p-shape[i-1].utilization)/(shape[i].utilization-shape[i-1].utilization)
		}
	}
	return shape[len(shape)-1].score
}

// maxUtilization is the utilization of a full (or overfull) node.
const maxUtilization = 100

// scaledShape converts a RequestedToCapacityRatio shape, scaling its scores
// by MaxNodeScore/MaxCustomPriorityScore (10) to the scheduler's range.
func scaledShape(shape []configv1.UtilizationShapePoint) []shapePoint {
	points := make([]shapePoint, 0, len(shape))
	for _, p := range shape {
		points = append(points, shapePoint{utilization: int64(p.Utilization), score: int64(p.Score) * (schedcore.MaxNodeScore / MaxCustomPriorityScore)})
	}
	return points
}

// requestedToCapacityRatioScore is the RequestedToCapacityRatio strategy:
// each resource scores f(requested*100/allocatable), f(100) when over or
// with no allocatable; resources scoring 0 are left out of the weighted
// average, which is rounded.
func requestedToCapacityRatioScore(resources []configv1.ResourceSpec, shape []shapePoint, requested, allocatable []int64) int64 {
	var nodeScore, weightSum int64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		var s int64
		if requested[i] > allocatable[i] {
			s = brokenLinear(shape, maxUtilization)
		} else {
			s = brokenLinear(shape, requested[i]*maxUtilization/allocatable[i])
		}
		if s > 0 {
			w := resources[i].Weight
			nodeScore += s * w
			weightSum += w
		}
	}
	if weightSum == 0 {
		return 0
	}
	return int64(math.Round(float64(nodeScore) / float64(weightSum)))
}
