package schedcore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func ctr(name string, req v1.ResourceList) v1.Container {
	return v1.Container{Name: name, Resources: v1.ResourceRequirements{Requests: req}}
}

func sidecar(name string, req v1.ResourceList) v1.Container {
	always := v1.ContainerRestartPolicyAlways
	c := ctr(name, req)
	c.RestartPolicy = &always
	return c
}

func TestComputePodRequests(t *testing.T) {
	tests := []struct {
		name     string
		spec     v1.PodSpec
		features Features
		want     *Resource
	}{
		{
			name: "a pod without requests requests nothing",
			spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}},
			want: &Resource{},
		},
		{
			name: "containers are summed",
			spec: v1.PodSpec{Containers: []v1.Container{ctr("a", schedtest.ResourceList("cpu", "1", "memory", "1Gi")), ctr("b", schedtest.ResourceList("cpu", "500m", "memory", "1Gi"))}},
			want: &Resource{MilliCPU: 1500, Memory: 2 << 30},
		},
		{
			name: "init containers count by their max, not their sum",
			spec: v1.PodSpec{
				InitContainers: []v1.Container{ctr("i1", schedtest.ResourceList("cpu", "2", "memory", "1G")), ctr("i2", schedtest.ResourceList("cpu", "2", "memory", "3G"))},
				Containers:     []v1.Container{ctr("c1", schedtest.ResourceList("cpu", "2", "memory", "1G")), ctr("c2", schedtest.ResourceList("cpu", "1", "memory", "1G"))},
			},
			want: &Resource{MilliCPU: 3000, Memory: 3e9},
		},
		{
			name: "sidecars add to the containers and to the init containers after them",
			spec: v1.PodSpec{
				InitContainers: []v1.Container{sidecar("s1", schedtest.ResourceList("cpu", "1")), ctr("i1", schedtest.ResourceList("cpu", "3"))},
				Containers:     []v1.Container{ctr("c1", schedtest.ResourceList("cpu", "1"))},
			},
			want: &Resource{MilliCPU: 4000},
		},
		{
			name: "overhead is added",
			spec: v1.PodSpec{Containers: []v1.Container{ctr("c", schedtest.ResourceList("cpu", "1m", "memory", "1"))}, Overhead: schedtest.ResourceList("cpu", "3m", "memory", "13")},
			want: &Resource{MilliCPU: 4, Memory: 14},
		},
		{
			name:     "pod-level requests replace the containers' cpu and memory when the gate is on",
			spec:     v1.PodSpec{Containers: []v1.Container{ctr("c", schedtest.ResourceList("cpu", "1m", "memory", "1", "example.com/foo", "2"))}, Resources: &v1.ResourceRequirements{Requests: schedtest.ResourceList("cpu", "7m", "memory", "2")}},
			features: Features{PodLevelResources: true},
			want:     &Resource{MilliCPU: 7, Memory: 2, ScalarResources: map[v1.ResourceName]int64{"example.com/foo": 2}},
		},
		{
			name: "pod-level requests are ignored when the gate is off",
			spec: v1.PodSpec{Containers: []v1.Container{ctr("c", schedtest.ResourceList("cpu", "1m", "memory", "1"))}, Resources: &v1.ResourceRequirements{Requests: schedtest.ResourceList("cpu", "7m", "memory", "2")}},
			want: &Resource{MilliCPU: 1, Memory: 1},
		},
		{
			name:     "pod-level hugepages replace the containers' hugepages",
			spec:     v1.PodSpec{Containers: []v1.Container{ctr("c", schedtest.ResourceList("hugepages-2Mi", "2Mi"))}, Resources: &v1.ResourceRequirements{Requests: schedtest.ResourceList("hugepages-2Mi", "4Mi")}},
			features: Features{PodLevelResources: true},
			want:     &Resource{ScalarResources: map[v1.ResourceName]int64{"hugepages-2Mi": 4 << 20}},
		},
		{
			name: "a pods request is ignored and scalar resources are kept even at zero",
			spec: v1.PodSpec{Containers: []v1.Container{ctr("c", schedtest.ResourceList("pods", "3", "example.com/aaa", "0", "ephemeral-storage", "5"))}},
			want: &Resource{EphemeralStorage: 5, ScalarResources: map[v1.ResourceName]int64{"example.com/aaa": 0}},
		},
		{
			name: "status resources are not used for a pod being scheduled",
			spec: v1.PodSpec{Containers: []v1.Container{ctr("c", schedtest.ResourceList("cpu", "500m"))}},
			want: &Resource{MilliCPU: 500},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{Spec: tc.spec}
			pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", Resources: &v1.ResourceRequirements{Requests: schedtest.ResourceList("cpu", "2")}}}
			got := ComputePodRequests(pod, tc.features)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ComputePodRequests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestComputePodResource(t *testing.T) {
	deferred := []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonDeferred}}
	infeasible := []v1.PodCondition{{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible}}
	tests := []struct {
		name   string
		pod    v1.Pod
		want   PodResource
		noGate bool
	}{
		{
			name: "a container without requests gets the non-zero defaults for scoring only",
			pod:  v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}},
			want: PodResource{Non0CPU: DefaultMilliCPURequest, Non0Mem: DefaultMemoryRequest},
		},
		{
			name: "the defaults apply once per container without a request, overhead on top",
			pod: v1.Pod{Spec: v1.PodSpec{
				Overhead:   schedtest.ResourceList("cpu", "1", "memory", "1Mi"),
				Containers: []v1.Container{ctr("a", schedtest.ResourceList("cpu", "1", "memory", "1Mi")), {Name: "b"}},
			}},
			want: PodResource{Resource: Resource{MilliCPU: 2000, Memory: 2 << 20}, Non0CPU: 2000 + DefaultMilliCPURequest, Non0Mem: 2<<20 + DefaultMemoryRequest},
		},
		{
			name: "an explicit zero request is not replaced by the default",
			pod:  v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{ctr("a", schedtest.ResourceList("cpu", "0", "memory", "0"))}}},
			want: PodResource{},
		},
		{
			name: "pod-level requests make the defaults apply only to what they leave unset",
			pod: v1.Pod{Spec: v1.PodSpec{
				Resources:  &v1.ResourceRequirements{Requests: schedtest.ResourceList("cpu", "2")},
				Containers: []v1.Container{{Name: "a"}},
			}},
			want: PodResource{Resource: Resource{MilliCPU: 2000}, Non0CPU: 2000, Non0Mem: DefaultMemoryRequest},
		},
		{
			name: "in-place resize counts the larger of spec and status",
			pod: v1.Pod{
				Spec:   v1.PodSpec{Containers: []v1.Container{ctr("c", schedtest.ResourceList("cpu", "700m", "memory", "800M"))}},
				Status: v1.PodStatus{Conditions: deferred, ContainerStatuses: []v1.ContainerStatus{{Name: "c", Resources: &v1.ResourceRequirements{Requests: schedtest.ResourceList("cpu", "500m", "memory", "900M")}}}},
			},
			want: PodResource{Resource: Resource{MilliCPU: 700, Memory: 900e6}, Non0CPU: 700, Non0Mem: 900e6},
		},
		{
			name: "an infeasible resize drops the spec",
			pod: v1.Pod{
				Spec:   v1.PodSpec{Containers: []v1.Container{ctr("c", schedtest.ResourceList("cpu", "700m", "memory", "800M"))}},
				Status: v1.PodStatus{Conditions: infeasible, ContainerStatuses: []v1.ContainerStatus{{Name: "c", Resources: &v1.ResourceRequirements{Requests: schedtest.ResourceList("cpu", "500m", "memory", "500M")}}}},
			},
			want: PodResource{Resource: Resource{MilliCPU: 500, Memory: 500e6}, Non0CPU: 500, Non0Mem: 500e6},
		},
		{
			name: "without the in-place resize gate only the spec counts",
			pod: v1.Pod{
				Spec:   v1.PodSpec{Containers: []v1.Container{ctr("c", schedtest.ResourceList("cpu", "700m"))}},
				Status: v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{{Name: "c", Resources: &v1.ResourceRequirements{Requests: schedtest.ResourceList("cpu", "900m")}}}},
			},
			noGate: true,
			want:   PodResource{Resource: Resource{MilliCPU: 700}, Non0CPU: 700, Non0Mem: DefaultMemoryRequest},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := DefaultFeatures
			if tc.noGate {
				f.InPlacePodVerticalScaling = false
				f.InPlacePodLevelResourcesVerticalScaling = false
			}
			got := ComputePodResource(&tc.pod, f)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ComputePodResource (-want +got):\n%s", diff)
			}
		})
	}
}
