package schedcore

import (
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
)

// containerOnlyPodResource is ComputePodResource for the common pod whose
// requests are its containers' alone: no init containers, overhead or
// pod-level resources, and no resize under way or done (no status
// resources, no resize condition), whatever the feature gates. Then
// component-helpers' PodRequests is the sum of the containers' requests
// (with status resources, the allocated and actuated requests fall back to
// the spec's, and their maximum is the spec's), and with the non-zero
// defaults, the sum with 100m cpu and 200Mi memory for a container that
// does not request them. The quantities are summed as PodRequests sums
// them, before the conversion to integers (so cpu rounds up once). It
// allocates nothing for the usual resources; ok is false for any other pod
// (and for more than eight distinct resource names), which
// ComputePodResource computes with PodRequests.
func containerOnlyPodResource(pod *v1.Pod) (pr PodResource, ok bool) {
	st := &pod.Status
	if len(pod.Spec.InitContainers) > 0 || pod.Spec.Overhead != nil || pod.Spec.Resources != nil ||
		st.Resources != nil || st.AllocatedResources != nil || len(st.NodeAllocatableResourceClaimStatuses) > 0 ||
		len(st.InitContainerStatuses) > 0 {
		return pr, false
	}
	for i := range st.ContainerStatuses {
		if cs := &st.ContainerStatuses[i]; cs.Resources != nil || cs.AllocatedResources != nil {
			return pr, false
		}
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.PodResizePending {
			return pr, false
		}
	}
	type sum struct {
		name v1.ResourceName
		q    apiresource.Quantity
	}
	var sums [8]sum
	n := 0
	var non0CPU, non0Mem apiresource.Quantity
	defaultCPU := apiresource.NewMilliQuantity(DefaultMilliCPURequest, apiresource.DecimalSI)
	defaultMem := apiresource.NewQuantity(DefaultMemoryRequest, apiresource.DecimalSI)
	for i := range pod.Spec.Containers {
		reqs := pod.Spec.Containers[i].Resources.Requests
		for name, q := range reqs {
			j := 0
			for j < n && sums[j].name != name {
				j++
			}
			switch {
			case j < n:
				sums[j].q.Add(q)
			case n == len(sums):
				return PodResource{}, false
			default:
				// A copy: Add on a copy could change a shared inf.Dec.
				sums[n] = sum{name, q.DeepCopy()}
				n++
			}
		}
		if q, found := reqs[v1.ResourceCPU]; found {
			non0CPU.Add(q)
		} else {
			non0CPU.Add(*defaultCPU)
		}
		if q, found := reqs[v1.ResourceMemory]; found {
			non0Mem.Add(q)
		} else {
			non0Mem.Add(*defaultMem)
		}
	}
	for _, s := range sums[:n] {
		pr.Resource.addQuantity(s.name, s.q)
	}
	if len(pod.Spec.Containers) > 0 {
		pr.Non0CPU, pr.Non0Mem = non0CPU.MilliValue(), non0Mem.Value()
	}
	return pr, true
}

// addQuantity adds one resource's quantity, as Add does for each entry of
// a list.
func (r *Resource) addQuantity(name v1.ResourceName, q apiresource.Quantity) {
	switch name {
	case v1.ResourceCPU:
		r.MilliCPU += q.MilliValue()
	case v1.ResourceMemory:
		r.Memory += q.Value()
	case v1.ResourcePods:
		r.AllowedPodNumber += int(q.Value())
	case v1.ResourceEphemeralStorage:
		r.EphemeralStorage += q.Value()
	default:
		if IsScalarResourceName(name) {
			r.AddScalar(name, q.Value())
		}
	}
}
