package schedcore

import (
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	apiresource "k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// specOnlyPodResource must give what PodRequests gives, for every pod it
// accepts (init containers, sidecars and overhead included), under every
// combination of the gates that matter; and it must turn down the pods
// whose requests are not their spec's alone (pod-level resources, status
// resources, a resize condition, node-allocatable claim statuses), which
// random pods here have now and then. specOnlyPodRequests must give what
// ComputePodRequests gives through PodRequests, and SpecPodRequests what
// NodeResources' scorers read from PodRequests.
func TestSpecOnlyPodResourceIsPodRequests(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	quantities := map[v1.ResourceName][]string{
		v1.ResourceCPU:              {"0", "1m", "0.5m", "100m", "250m", "1", "1.5", "2500m", "0.0001"},
		v1.ResourceMemory:           {"0", "1", "100Mi", "1Gi", "1.5Gi", "1e3", "200M", "0.5"},
		v1.ResourceEphemeralStorage: {"1Gi", "10G"},
		v1.ResourcePods:             {"1"},
		"nvidia.com/gpu":            {"1", "2"},
		"hugepages-2Mi":             {"2Mi", "4Mi"},
		"example.com/foo":           {"3", "1k"},
	}
	names := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, v1.ResourcePods, "nvidia.com/gpu", "hugepages-2Mi", "example.com/foo"}
	requests := func() v1.ResourceList {
		rl := v1.ResourceList{}
		for _, name := range names {
			if rng.Intn(3) == 0 || (name == v1.ResourceCPU || name == v1.ResourceMemory) && rng.Intn(3) > 0 {
				qs := quantities[name]
				rl[name] = apiresource.MustParse(qs[rng.Intn(len(qs))])
			}
		}
		return rl
	}
	accepted, declined := 0, 0
	for round := 0; round < 3000; round++ {
		pod := &v1.Pod{}
		for i := range rng.Intn(4) {
			pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: fmt.Sprint("c", i), Resources: v1.ResourceRequirements{Requests: requests()}})
		}
		// Init containers and sidecars (restartable init containers), in
		// any order, and overhead.
		for i := range rng.Intn(4) {
			ic := v1.Container{Name: fmt.Sprint("i", i), Resources: v1.ResourceRequirements{Requests: requests()}}
			if rng.Intn(2) == 0 {
				always := v1.ContainerRestartPolicyAlways
				ic.RestartPolicy = &always
			}
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, ic)
		}
		if rng.Intn(3) == 0 {
			pod.Spec.Overhead = requests()
		}
		switch rng.Intn(16) {
		case 0:
			pod.Status.NodeAllocatableResourceClaimStatuses = []v1.NodeAllocatableResourceClaimStatus{{
				Mapping: []v1.NodeAllocatableMappedResources{{Name: v1.ResourceCPU, Quantity: ptrTo(apiresource.MustParse("1"))}},
			}}
		case 1:
			if len(pod.Spec.InitContainers) > 0 {
				pod.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "i0", AllocatedResources: requests()}}
			}
		case 2:
			pod.Spec.Resources = &v1.ResourceRequirements{Requests: requests()}
		case 3:
			if len(pod.Spec.Containers) > 0 {
				pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", AllocatedResources: requests()}}
			}
		case 4:
			if len(pod.Spec.Containers) > 0 {
				pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", Resources: &v1.ResourceRequirements{Requests: requests()}}}
			}
		case 5:
			pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodResizePending, Reason: v1.PodReasonInfeasible}}
		case 6:
			pod.Status.Resources = &v1.ResourceRequirements{Requests: requests()}
			pod.Status.AllocatedResources = requests()
		case 7:
			pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0"}}
		case 8:
			// component-helpers looks a container's status up among the
			// init containers' too when the containers' lack it.
			if len(pod.Spec.Containers) > 0 {
				pod.Status.InitContainerStatuses = []v1.ContainerStatus{{Name: "c0", AllocatedResources: requests()}}
			}
		}
		for _, f := range []Features{DefaultFeatures, {}, {PodLevelResources: true, InPlacePodVerticalScaling: true, InPlacePodLevelResourcesVerticalScaling: true}} {
			if got, ok := specOnlyPodRequests(pod, f); ok {
				if want := podRequests(pod, f); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("round %d, gates %+v: requests %+v from the spec, %+v from PodRequests, for %+v", round, f, got, want, pod)
				}
			}
			for _, withDefaults := range []bool{false, true} {
				checkSpecPodRequests(t, pod, f, withDefaults, names)
			}
			want := podRequestsResource(pod, f)
			got, ok := specOnlyPodResource(pod)
			if !ok {
				declined++
				continue
			}
			accepted++
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("round %d, gates %+v: %+v from the spec, %+v from PodRequests, for %+v", round, f, got, want, pod)
			}
		}
	}
	if accepted < 3000 || declined < 1000 {
		t.Errorf("%d pods accepted, %d declined: the rounds do not cover both", accepted, declined)
	}
}

// checkSpecPodRequests compares SpecPodRequests, when it accepts the pod,
// with kube's calculatePodResourceRequest: PodRequests with the scorers'
// options (BalancedAllocation's gates, Fit's SkipPodLevelResources) and the
// non-zero defaults when withDefaults.
func checkSpecPodRequests(t *testing.T, pod *v1.Pod, f Features, withDefaults bool, names []v1.ResourceName) {
	t.Helper()
	got := make([]int64, len(names))
	if !SpecPodRequests(pod, withDefaults, names, got) {
		return
	}
	for _, skipPodLevel := range []bool{!f.PodLevelResources, true} {
		opts := resourcehelper.PodResourcesOptions{
			UseStatusResources: f.InPlacePodVerticalScaling,
			InPlacePodLevelResourcesVerticalScalingEnabled: f.InPlacePodLevelResourcesVerticalScaling,
			SkipPodLevelResources:                          skipPodLevel,
		}
		if withDefaults {
			opts.NonMissingContainerRequests = v1.ResourceList{
				v1.ResourceCPU:    *apiresource.NewMilliQuantity(DefaultMilliCPURequest, apiresource.DecimalSI),
				v1.ResourceMemory: *apiresource.NewQuantity(DefaultMemoryRequest, apiresource.DecimalSI),
			}
		}
		reqs := resourcehelper.PodRequests(pod, opts)
		for i, name := range names {
			q := reqs[name]
			want := q.Value()
			if name == v1.ResourceCPU {
				want = q.MilliValue()
			}
			if got[i] != want {
				t.Fatalf("gates %+v, defaults %v, skip pod-level %v: %s is %d from the spec, %d from PodRequests, for %+v", f, withDefaults, skipPodLevel, name, got[i], want, pod)
			}
		}
	}
}

func ptrTo[T any](v T) *T { return &v }
