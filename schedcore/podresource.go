package schedcore

import (
	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
)

// specOnlyPodResource is ComputePodResource for the common pod whose
// requests come from its spec alone: no pod-level resources, no resize under
// way or done (no status resources, no resize condition) and no
// node-allocatable claim statuses, whatever the feature gates. Then
// component-helpers' PodRequests is its aggregate of the spec's containers,
// init containers and sidecars, plus the overhead (with status resources,
// the allocated and actuated requests fall back to the spec's, and their
// maximum is the spec's), and with the non-zero defaults, the same aggregate
// with 100m cpu and 200Mi memory for a container that does not request them.
// The quantities are summed and compared as PodRequests does (specAggregate),
// before the conversion to integers (so cpu rounds up once). It allocates
// nothing for the usual resources; ok is false for any other pod (and for
// more than eight distinct resource names), which ComputePodResource
// computes with PodRequests.
func specOnlyPodResource(pod *v1.Pod) (pr PodResource, ok bool) {
	if !requestsFromSpec(pod) {
		return pr, false
	}
	var reqs, non0 quantities
	if !specAggregate(pod, false, &reqs) || !specAggregate(pod, true, &non0) {
		return pr, false
	}
	for _, e := range reqs.e[:reqs.n] {
		pr.Resource.addQuantity(e.name, e.q)
	}
	if i := non0.find(v1.ResourceCPU); i >= 0 {
		pr.Non0CPU = non0.e[i].q.MilliValue()
	}
	if i := non0.find(v1.ResourceMemory); i >= 0 {
		pr.Non0Mem = non0.e[i].q.Value()
	}
	return pr, true
}

// requestsFromSpec reports whether component-helpers' PodRequests of the
// pod is its spec's containers' aggregate plus the overhead whatever the
// options: no pod-level resources, no resize under way or done (no status
// resources, no resize condition) and no node-allocatable claim statuses.
func requestsFromSpec(pod *v1.Pod) bool {
	st := &pod.Status
	if pod.Spec.Resources != nil || st.Resources != nil || st.AllocatedResources != nil ||
		len(st.NodeAllocatableResourceClaimStatuses) > 0 || len(st.InitContainerStatuses) > 0 {
		return false
	}
	for i := range st.ContainerStatuses {
		if cs := &st.ContainerStatuses[i]; cs.Resources != nil || cs.AllocatedResources != nil {
			return false
		}
	}
	for i := range st.Conditions {
		if st.Conditions[i].Type == v1.PodResizePending {
			return false
		}
	}
	return true
}

// SpecPodRequests sets out[i] to the pod's request of names[i] (milli-units
// for cpu, plain values otherwise) as kube's resourceAllocationScorer reads
// it from component-helpers' PodRequests, with the non-zero defaults (100m
// cpu, 200Mi memory for a container that requests none) when withDefaults,
// for any setting of the gates and of SkipPodLevelResources. It allocates
// nothing; false (out untouched) for a pod whose requests are not its
// spec's alone (see requestsFromSpec) or that names more than eight
// resources: the caller then computes them with PodRequests.
func SpecPodRequests(pod *v1.Pod, withDefaults bool, names []v1.ResourceName, out []int64) bool {
	var reqs quantities
	if !requestsFromSpec(pod) || !specAggregate(pod, withDefaults, &reqs) {
		return false
	}
	for i, name := range names {
		out[i] = 0
		j := reqs.find(name)
		switch {
		case j < 0:
		case name == v1.ResourceCPU:
			out[i] = reqs.e[j].q.MilliValue()
		default:
			out[i] = reqs.e[j].q.Value()
		}
	}
	return true
}

// specOnlyPodRequests is ComputePodRequests for a pod without pod-level
// resources when the gate is on (those are ComputePodRequests' to apply);
// the spec alone counts there, whatever the status says.
func specOnlyPodRequests(pod *v1.Pod, f Features) (*Resource, bool) {
	if f.PodLevelResources && pod.Spec.Resources != nil {
		return nil, false
	}
	var reqs quantities
	if !specAggregate(pod, false, &reqs) {
		return nil, false
	}
	r := &Resource{}
	for _, e := range reqs.e[:reqs.n] {
		r.setMaxQuantity(e.name, e.q)
	}
	return r, true
}

// quantities is a resource list of at most eight names, in the order they
// were first added.
type quantities struct {
	n int
	e [8]struct {
		name v1.ResourceName
		q    apiresource.Quantity
	}
}

func (l *quantities) find(name v1.ResourceName) int {
	for i := range l.n {
		if l.e[i].name == name {
			return i
		}
	}
	return -1
}

// put adds name with a copy of q (Add on a shared inf.Dec would change the
// original); false when the list is full.
func (l *quantities) put(name v1.ResourceName, q apiresource.Quantity) bool {
	if l.n == len(l.e) {
		return false
	}
	l.e[l.n].name, l.e[l.n].q = name, q.DeepCopy()
	l.n++
	return true
}

// add is component-helpers' addResourceList for one entry.
func (l *quantities) add(name v1.ResourceName, q apiresource.Quantity) bool {
	if i := l.find(name); i >= 0 {
		l.e[i].q.Add(q)
		return true
	}
	return l.put(name, q)
}

// max is component-helpers' maxResourceList for one entry.
func (l *quantities) max(name v1.ResourceName, q apiresource.Quantity) bool {
	if i := l.find(name); i >= 0 {
		if q.Cmp(l.e[i].q) > 0 {
			l.e[i].q = q.DeepCopy()
		}
		return true
	}
	return l.put(name, q)
}

func (l *quantities) addAll(o *quantities) bool {
	for _, e := range o.e[:o.n] {
		if !l.add(e.name, e.q) {
			return false
		}
	}
	return true
}

func (l *quantities) maxAll(o *quantities) bool {
	for _, e := range o.e[:o.n] {
		if !l.max(e.name, e.q) {
			return false
		}
	}
	return true
}

// containerRequests sets l to the container's requests, with the non-zero
// defaults for a missing cpu or memory when withDefaults (applyNonMissing).
func containerRequests(c *v1.Container, withDefaults bool, l *quantities) bool {
	l.n = 0
	for name, q := range c.Resources.Requests {
		if !l.put(name, q) {
			return false
		}
	}
	if withDefaults {
		if l.find(v1.ResourceCPU) < 0 && !l.put(v1.ResourceCPU, *apiresource.NewMilliQuantity(DefaultMilliCPURequest, apiresource.DecimalSI)) {
			return false
		}
		if l.find(v1.ResourceMemory) < 0 && !l.put(v1.ResourceMemory, *apiresource.NewQuantity(DefaultMemoryRequest, apiresource.DecimalSI)) {
			return false
		}
	}
	return true
}

// specAggregate sets out to component-helpers' aggregate of the spec's
// requests (aggregateContainerResourcesByFn with the spec's requests) plus
// the overhead: the containers' sum, each sidecar (restartable init
// container) added to it, and the result raised to the largest need of an
// init container (its own requests plus the sidecars started before it).
// withDefaults applies the non-zero defaults to every container, as
// NonMissingContainerRequests does. False when more than eight names occur.
func specAggregate(pod *v1.Pod, withDefaults bool, out *quantities) bool {
	var c, sidecars, initMax, cur quantities
	out.n = 0
	for i := range pod.Spec.Containers {
		if !containerRequests(&pod.Spec.Containers[i], withDefaults, &c) || !out.addAll(&c) {
			return false
		}
	}
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		if !containerRequests(ic, withDefaults, &c) {
			return false
		}
		if ic.RestartPolicy != nil && *ic.RestartPolicy == v1.ContainerRestartPolicyAlways {
			if !out.addAll(&c) || !sidecars.addAll(&c) || !initMax.maxAll(&sidecars) {
				return false
			}
			continue
		}
		cur.n = 0
		if !cur.addAll(&c) || !cur.addAll(&sidecars) || !initMax.maxAll(&cur) {
			return false
		}
	}
	if !out.maxAll(&initMax) {
		return false
	}
	for name, q := range pod.Spec.Overhead {
		if !out.add(name, q) {
			return false
		}
	}
	return true
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
