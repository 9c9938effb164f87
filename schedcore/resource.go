package schedcore

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Default non-zero requests used for scoring containers that request
// nothing (kube-scheduler's pkg/scheduler/util).
const (
	DefaultMilliCPURequest int64 = 100               // 0.1 core
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024 // 200 MiB
)

// Resource is a set of compute resources as plain integers: milli-CPU,
// bytes of memory and ephemeral storage, a pod count, and scalar
// (extended, hugepages, prefixed native) resources.
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int
	ScalarResources  map[v1.ResourceName]int64
}

// NewResource builds a Resource from a ResourceList.
func NewResource(rl v1.ResourceList) *Resource {
	r := &Resource{}
	r.Add(rl)
	return r
}

// Add adds a ResourceList to r.
func (r *Resource) Add(rl v1.ResourceList) {
	if r == nil {
		return
	}
	for name, q := range rl {
		r.addQuantity(name, q)
	}
}

// AddScalar adds quantity to a scalar resource.
func (r *Resource) AddScalar(name v1.ResourceName, quantity int64) {
	r.SetScalar(name, r.ScalarResources[name]+quantity)
}

// SetScalar sets a scalar resource, allocating the map lazily.
func (r *Resource) SetScalar(name v1.ResourceName, quantity int64) {
	if r.ScalarResources == nil {
		r.ScalarResources = map[v1.ResourceName]int64{}
	}
	r.ScalarResources[name] = quantity
}

// Clone returns a deep copy.
func (r *Resource) Clone() *Resource {
	c := &Resource{MilliCPU: r.MilliCPU, Memory: r.Memory, EphemeralStorage: r.EphemeralStorage, AllowedPodNumber: r.AllowedPodNumber}
	if r.ScalarResources != nil {
		c.ScalarResources = make(map[v1.ResourceName]int64, len(r.ScalarResources))
		for k, v := range r.ScalarResources {
			c.ScalarResources[k] = v
		}
	}
	return c
}

// Get returns the amount of a named resource in the unit the scheduler uses
// (milli-CPU for cpu, the plain value otherwise).
func (r *Resource) Get(name v1.ResourceName) int64 {
	switch name {
	case v1.ResourceCPU:
		return r.MilliCPU
	case v1.ResourceMemory:
		return r.Memory
	case v1.ResourceEphemeralStorage:
		return r.EphemeralStorage
	case v1.ResourcePods:
		return int64(r.AllowedPodNumber)
	default:
		return r.ScalarResources[name]
	}
}

// IsScalarResourceName reports whether the resource is tracked in
// ScalarResources: extended, hugepages, prefixed native or attachable volumes.
func IsScalarResourceName(name v1.ResourceName) bool {
	return IsExtendedResourceName(name) || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix) ||
		strings.Contains(string(name), v1.ResourceDefaultNamespacePrefix) ||
		strings.HasPrefix(string(name), v1.ResourceAttachableVolumesPrefix)
}

// IsExtendedResourceName reports whether name is an extended resource
// (fully qualified, outside the kubernetes.io namespace, not requests.*).
func IsExtendedResourceName(name v1.ResourceName) bool {
	s := string(name)
	if !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix) || strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix) {
		return false
	}
	return len(validation.IsQualifiedName(v1.DefaultResourceRequestsPrefix+s)) == 0
}

// PodResource is what a pod occupies on a node: its requests, and the cpu and
// memory requests with the non-zero defaults applied (used for scoring).
type PodResource struct {
	Resource Resource
	Non0CPU  int64
	Non0Mem  int64
}

// Features are the feature gates the engine honours, as a plain struct. The
// zero value is not the default: use DefaultFeatures.
type Features struct {
	PodLevelResources                       bool
	InPlacePodVerticalScaling               bool
	InPlacePodLevelResourcesVerticalScaling bool
	InterPodAffinityHostnameFastPath        bool
	// TaintTolerationComparisonOperators lets tolerations use Lt and Gt
	// (alpha and off in v1.37); TaintToleration, NodeUnschedulable and
	// PodTopologySpread's nodeTaintsPolicy all read it.
	TaintTolerationComparisonOperators bool
	// StorageCapacityScoring gives VolumeBinding its Score (beta and on in
	// v1.37): the args' shape applies, and static bindings or provisioning
	// capacities score nodes.
	StorageCapacityScoring bool

	// DynamicResourceAllocation turns the DynamicResources plugin on (GA
	// and locked on since v1.35); the DRA* gates below are its features
	// as the structured allocator and the plugin honour them.
	DynamicResourceAllocation    bool
	DRAAdminAccess               bool
	DRAPrioritizedList           bool
	DRAPartitionableDevices      bool
	DRADeviceTaints              bool
	DRADeviceTaintRules          bool
	DRADeviceBindingConditions   bool
	DRAResourceClaimDeviceStatus bool
	DRAConsumableCapacity        bool
	DRAFractionalCapacityRange   bool
	DRAExtendedResource          bool
	DRASchedulerFilterTimeout    bool
	// NodeDeclaredFeatures turns the NodeDeclaredFeatures plugin on (GA
	// and locked on in v1.37).
	NodeDeclaredFeatures bool

	// GenericWorkload is kube's Workload API gate (beta and off in v1.37:
	// the scheduling.k8s.io/v1beta1 Workload and PodGroup kinds, pods'
	// spec.schedulingGroup, and the GangScheduling plugin kube adds to the
	// default profile). TopologyAwareWorkloadScheduling (alpha, off; it
	// needs GenericWorkload) is topology-aware placement of pod groups.
	// They add GangScheduling, and TopologyPlacementGenerator and
	// PodGroupPodsCount, to the default profile (plugins.DefaultPluginsFor),
	// turn Coscheduling's native-PodGroup mapping off and give
	// NodeResourcesFit its placement scorer; the pod-group cycle itself is
	// not run yet (members are scheduled pod by pod).
	GenericWorkload                 bool
	TopologyAwareWorkloadScheduling bool
}

// DefaultFeatures are kube-scheduler v1.37.2's defaults for the gates above.
var DefaultFeatures = Features{
	PodLevelResources:                       true,
	InPlacePodVerticalScaling:               true,
	InPlacePodLevelResourcesVerticalScaling: true,
	StorageCapacityScoring:                  true,
	DynamicResourceAllocation:               true,
	DRAAdminAccess:                          true,
	DRAPrioritizedList:                      true,
	DRAPartitionableDevices:                 true,
	DRADeviceTaints:                         true,
	DRADeviceTaintRules:                     true,
	DRADeviceBindingConditions:              true,
	DRAResourceClaimDeviceStatus:            true,
	DRAConsumableCapacity:                   true,
	DRAExtendedResource:                     true,
	DRASchedulerFilterTimeout:               true,
	NodeDeclaredFeatures:                    true,
}

// ComputePodResource computes what an assigned pod occupies on a node, as
// kube-scheduler's PodInfo.CalculateResource does: component-helpers'
// PodRequests with status resources (in-place resize), pod-level resources,
// overhead, and the non-zero defaults for cpu and memory.
func ComputePodResource(pod *v1.Pod, f Features) PodResource {
	if pr, ok := specOnlyPodResource(pod); ok {
		return pr
	}
	return podRequestsResource(pod, f)
}

// podRequestsResource is ComputePodResource through PodRequests, for any
// pod.
func podRequestsResource(pod *v1.Pod, f Features) PodResource {
	opts := resourcehelper.PodResourcesOptions{
		UseStatusResources: f.InPlacePodVerticalScaling,
		InPlacePodLevelResourcesVerticalScalingEnabled: f.InPlacePodLevelResourcesVerticalScaling,
		SkipPodLevelResources:                          !f.PodLevelResources,
	}
	requests := resourcehelper.PodRequests(pod, opts)
	podLevelSet := f.PodLevelResources && resourcehelper.IsPodLevelRequestsSet(pod)
	nonMissing := nonMissingContainerRequests(requests, podLevelSet)
	non0 := requests
	if len(nonMissing) > 0 {
		opts.NonMissingContainerRequests = nonMissing
		non0 = resourcehelper.PodRequests(pod, opts)
	}
	var pr PodResource
	pr.Resource.Add(requests)
	c, m := non0[v1.ResourceCPU], non0[v1.ResourceMemory]
	pr.Non0CPU = c.MilliValue()
	pr.Non0Mem = m.Value()
	return pr
}

// ComputePodRequests computes the requests of a pod being scheduled, as
// NodeResourcesFit's computePodResourceRequest does: component-helpers'
// PodRequests on the spec only (no status resources: the pod is not running
// yet), with pod-level resources when the gate is on, init containers and
// sidecars by the max rule, and overhead. Like kube it folds the list in with
// SetMaxResource, so a "pods" entry is ignored and nothing goes below zero.
func ComputePodRequests(pod *v1.Pod, f Features) *Resource {
	if r, ok := specOnlyPodRequests(pod, f); ok {
		return r
	}
	return podRequests(pod, f)
}

// podRequests is ComputePodRequests through PodRequests, for any pod.
func podRequests(pod *v1.Pod, f Features) *Resource {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		SkipPodLevelResources: !f.PodLevelResources,
	})
	r := &Resource{}
	r.SetMaxResource(reqs)
	return r
}

// SetMaxResource raises each resource of r to the quantity in rl when that is
// larger, as kube-scheduler's Resource.SetMaxResource does: cpu, memory,
// ephemeral storage and scalar resources; other names (such as "pods") are
// ignored.
func (r *Resource) SetMaxResource(rl v1.ResourceList) {
	if r == nil {
		return
	}
	for name, q := range rl {
		r.setMaxQuantity(name, q)
	}
}

// setMaxQuantity is SetMaxResource for one entry.
func (r *Resource) setMaxQuantity(name v1.ResourceName, q apiresource.Quantity) {
	switch name {
	case v1.ResourceMemory:
		r.Memory = max(r.Memory, q.Value())
	case v1.ResourceCPU:
		r.MilliCPU = max(r.MilliCPU, q.MilliValue())
	case v1.ResourceEphemeralStorage:
		r.EphemeralStorage = max(r.EphemeralStorage, q.Value())
	default:
		if IsScalarResourceName(name) {
			r.SetScalar(name, max(r.ScalarResources[name], q.Value()))
		}
	}
}

func nonMissingContainerRequests(requests v1.ResourceList, podLevelSet bool) v1.ResourceList {
	cpu := *apiresource.NewMilliQuantity(DefaultMilliCPURequest, apiresource.DecimalSI)
	mem := *apiresource.NewQuantity(DefaultMemoryRequest, apiresource.DecimalSI)
	if !podLevelSet {
		return v1.ResourceList{v1.ResourceCPU: cpu, v1.ResourceMemory: mem}
	}
	out := v1.ResourceList{}
	if _, ok := requests[v1.ResourceCPU]; !ok {
		out[v1.ResourceCPU] = cpu
	}
	if _, ok := requests[v1.ResourceMemory]; !ok {
		out[v1.ResourceMemory] = mem
	}
	return out
}
