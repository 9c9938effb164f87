package noderesources

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func insufficient(name v1.ResourceName, requested, used, capacity int64, unresolvable bool) InsufficientResource {
	return InsufficientResource{ResourceName: name, Reason: InsufficientReason(name), Requested: requested, Used: used, Capacity: capacity, Unresolvable: unresolvable}
}

// kubeTestNode is kube's makeResources(10, 20, 32, 5, 20, 5): 10m cpu, 20
// bytes of memory, 32 pods, 5 example.com/aaa, 20 bytes of ephemeral
// storage, 5 bytes of hugepages-2Mi.
func kubeTestNode() *v1.Node {
	l := v1.ResourceList{
		v1.ResourceCPU:              *resource.NewMilliQuantity(10, resource.DecimalSI),
		v1.ResourceMemory:           *resource.NewQuantity(20, resource.BinarySI),
		v1.ResourcePods:             *resource.NewQuantity(32, resource.DecimalSI),
		extendedResourceA:           *resource.NewQuantity(5, resource.DecimalSI),
		v1.ResourceEphemeralStorage: *resource.NewQuantity(20, resource.BinarySI),
		hugePageResourceA:           *resource.NewQuantity(5, resource.BinarySI),
	}
	n := &v1.Node{}
	n.Name = "node"
	n.Status.Capacity, n.Status.Allocatable = l, l
	return n
}

func nodeInfoWith(node *v1.Node, pods ...*v1.Pod) *schedcore.NodeInfo {
	ni := schedcore.NewNodeInfo(pods...)
	ni.SetNode(node)
	return ni
}

func runFilter(t *testing.T, pl *Fit, pod *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	t.Helper()
	st, _ := runFilterState(t, pl, pod, ni)
	return st
}

// runFilterState runs PreFilter and Filter and returns the Filter status
// with the cycle state both used.
func runFilterState(t *testing.T, pl *Fit, pod *v1.Pod, ni *schedcore.NodeInfo) (*schedcore.Status, *schedcore.CycleState) {
	t.Helper()
	state := schedcore.NewCycleState()
	if _, st := pl.PreFilter(context.Background(), state, pod, nil); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	return pl.Filter(context.Background(), state, pod, ni), state
}

func TestFilterEnoughRequests(t *testing.T) {
	scalar := func(kv ...any) map[v1.ResourceName]int64 {
		m := map[v1.ResourceName]int64{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(v1.ResourceName)] = int64(kv[i+1].(int))
		}
		return m
	}
	cpu, mem, eph := v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage
	tests := []struct {
		name             string
		pod              *v1.Pod
		existing         *v1.Pod
		args             *configv1.NodeResourcesFitArgs
		podLevelDisabled bool
		want             *schedcore.Status
		wantInsufficient []InsufficientResource
	}{
		{
			name:     "no resources requested always fits",
			pod:      &v1.Pod{},
			existing: resourcePod(res{cpu: 10, mem: 20}),
		},
		{
			name:     "too many resources fails",
			pod:      resourcePod(res{cpu: 1, mem: 1}),
			existing: resourcePod(res{cpu: 10, mem: 20}),
			want:     schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientCPU, ErrReasonInsufficientMemory),
			wantInsufficient: []InsufficientResource{
				insufficient(cpu, 1, 10, 10, false),
				insufficient(mem, 1, 20, 20, false),
			},
		},
		{
			name:             "too many resources fails due to init container cpu",
			pod:              withInit(resourcePod(res{cpu: 1, mem: 1}), res{cpu: 3, mem: 1}),
			existing:         resourcePod(res{cpu: 8, mem: 19}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientCPU),
			wantInsufficient: []InsufficientResource{insufficient(cpu, 3, 8, 10, false)},
		},
		{
			name:             "too many resources fails due to highest init container cpu",
			pod:              withInit(resourcePod(res{cpu: 1, mem: 1}), res{cpu: 3, mem: 1}, res{cpu: 2, mem: 1}),
			existing:         resourcePod(res{cpu: 8, mem: 19}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientCPU),
			wantInsufficient: []InsufficientResource{insufficient(cpu, 3, 8, 10, false)},
		},
		{
			name:             "too many resources fails due to init container memory",
			pod:              withInit(resourcePod(res{cpu: 1, mem: 1}), res{cpu: 1, mem: 3}),
			existing:         resourcePod(res{cpu: 9, mem: 19}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientMemory),
			wantInsufficient: []InsufficientResource{insufficient(mem, 3, 19, 20, false)},
		},
		{
			name:             "too many resources fails due to highest init container memory",
			pod:              withInit(resourcePod(res{cpu: 1, mem: 1}), res{cpu: 1, mem: 3}, res{cpu: 1, mem: 2}),
			existing:         resourcePod(res{cpu: 9, mem: 19}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientMemory),
			wantInsufficient: []InsufficientResource{insufficient(mem, 3, 19, 20, false)},
		},
		{
			name:     "init container fits because it's the max, not sum, of containers and init containers",
			pod:      withInit(resourcePod(res{cpu: 1, mem: 1}), res{cpu: 1, mem: 1}),
			existing: resourcePod(res{cpu: 9, mem: 19}),
		},
		{
			name:     "multiple init containers fit because it's the max, not sum, of containers and init containers",
			pod:      withInit(resourcePod(res{cpu: 1, mem: 1}), res{cpu: 1, mem: 1}, res{cpu: 1, mem: 1}),
			existing: resourcePod(res{cpu: 9, mem: 19}),
		},
		{
			name:     "both resources fit",
			pod:      resourcePod(res{cpu: 1, mem: 1}),
			existing: resourcePod(res{cpu: 5, mem: 5}),
		},
		{
			name:             "one resource memory fits",
			pod:              resourcePod(res{cpu: 2, mem: 1}),
			existing:         resourcePod(res{cpu: 9, mem: 5}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientCPU),
			wantInsufficient: []InsufficientResource{insufficient(cpu, 2, 9, 10, false)},
		},
		{
			name:             "one resource cpu fits",
			pod:              resourcePod(res{cpu: 1, mem: 2}),
			existing:         resourcePod(res{cpu: 5, mem: 19}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientMemory),
			wantInsufficient: []InsufficientResource{insufficient(mem, 2, 19, 20, false)},
		},
		{
			name:     "equal edge case",
			pod:      resourcePod(res{cpu: 5, mem: 1}),
			existing: resourcePod(res{cpu: 5, mem: 19}),
		},
		{
			name:     "equal edge case for init container",
			pod:      withInit(resourcePod(res{cpu: 4, mem: 1}), res{cpu: 5, mem: 1}),
			existing: resourcePod(res{cpu: 5, mem: 19}),
		},
		{
			name:     "extended resource fits",
			pod:      resourcePod(res{scalars: scalar(extendedResourceA, 1)}),
			existing: resourcePod(res{}),
		},
		{
			name:     "extended resource fits for init container",
			pod:      withInit(resourcePod(res{}), res{scalars: scalar(extendedResourceA, 1)}),
			existing: resourcePod(res{}),
		},
		{
			name:             "extended resource capacity enforced",
			pod:              resourcePod(res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 10)}),
			existing:         resourcePod(res{scalars: scalar(extendedResourceA, 0)}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient example.com/aaa"),
			wantInsufficient: []InsufficientResource{insufficient(extendedResourceA, 10, 0, 5, true)},
		},
		{
			name:             "extended resource capacity enforced for init container",
			pod:              withInit(resourcePod(res{}), res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 10)}),
			existing:         resourcePod(res{scalars: scalar(extendedResourceA, 0)}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient example.com/aaa"),
			wantInsufficient: []InsufficientResource{insufficient(extendedResourceA, 10, 0, 5, true)},
		},
		{
			name:             "extended resource allocatable enforced",
			pod:              resourcePod(res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 1)}),
			existing:         resourcePod(res{scalars: scalar(extendedResourceA, 5)}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, "Insufficient example.com/aaa"),
			wantInsufficient: []InsufficientResource{insufficient(extendedResourceA, 1, 5, 5, false)},
		},
		{
			name:             "extended resource allocatable enforced for init container",
			pod:              withInit(resourcePod(res{}), res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 1)}),
			existing:         resourcePod(res{scalars: scalar(extendedResourceA, 5)}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, "Insufficient example.com/aaa"),
			wantInsufficient: []InsufficientResource{insufficient(extendedResourceA, 1, 5, 5, false)},
		},
		{
			name:             "extended resource allocatable enforced for multiple containers",
			pod:              resourcePod(res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 3)}, res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 3)}),
			existing:         resourcePod(res{scalars: scalar(extendedResourceA, 2)}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient example.com/aaa"),
			wantInsufficient: []InsufficientResource{insufficient(extendedResourceA, 6, 2, 5, true)},
		},
		{
			name:     "extended resource allocatable admits multiple init containers",
			pod:      withInit(resourcePod(res{}), res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 3)}, res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 3)}),
			existing: resourcePod(res{scalars: scalar(extendedResourceA, 2)}),
		},
		{
			name:             "extended resource allocatable enforced for multiple init containers",
			pod:              withInit(resourcePod(res{}), res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 6)}, res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 3)}),
			existing:         resourcePod(res{scalars: scalar(extendedResourceA, 2)}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient example.com/aaa"),
			wantInsufficient: []InsufficientResource{insufficient(extendedResourceA, 6, 2, 5, true)},
		},
		{
			name:             "extended resource allocatable enforced for unknown resource",
			pod:              resourcePod(res{cpu: 1, mem: 1, scalars: scalar(extendedResourceB, 1)}),
			existing:         resourcePod(res{}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient example.com/bbb"),
			wantInsufficient: []InsufficientResource{insufficient(extendedResourceB, 1, 0, 0, true)},
		},
		{
			name:             "extended resource allocatable enforced for unknown resource for init container",
			pod:              withInit(resourcePod(res{}), res{cpu: 1, mem: 1, scalars: scalar(extendedResourceB, 1)}),
			existing:         resourcePod(res{}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient example.com/bbb"),
			wantInsufficient: []InsufficientResource{insufficient(extendedResourceB, 1, 0, 0, true)},
		},
		{
			name:             "kubernetes.io resource capacity enforced",
			pod:              resourcePod(res{cpu: 1, mem: 1, scalars: scalar(kubernetesIOResourceA, 10)}),
			existing:         resourcePod(res{}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient kubernetes.io/something"),
			wantInsufficient: []InsufficientResource{insufficient(kubernetesIOResourceA, 10, 0, 0, true)},
		},
		{
			name:             "kubernetes.io resource capacity enforced for init container",
			pod:              withInit(resourcePod(res{}), res{cpu: 1, mem: 1, scalars: scalar(kubernetesIOResourceB, 10)}),
			existing:         resourcePod(res{}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient subdomain.kubernetes.io/something"),
			wantInsufficient: []InsufficientResource{insufficient(kubernetesIOResourceB, 10, 0, 0, true)},
		},
		{
			name:             "hugepages resource capacity enforced",
			pod:              resourcePod(res{cpu: 1, mem: 1, scalars: scalar(hugePageResourceA, 10)}),
			existing:         resourcePod(res{scalars: scalar(hugePageResourceA, 0)}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient hugepages-2Mi"),
			wantInsufficient: []InsufficientResource{insufficient(hugePageResourceA, 10, 0, 5, true)},
		},
		{
			name:             "hugepages resource capacity enforced for init container",
			pod:              withInit(resourcePod(res{}), res{cpu: 1, mem: 1, scalars: scalar(hugePageResourceA, 10)}),
			existing:         resourcePod(res{scalars: scalar(hugePageResourceA, 0)}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient hugepages-2Mi"),
			wantInsufficient: []InsufficientResource{insufficient(hugePageResourceA, 10, 0, 5, true)},
		},
		{
			name:             "hugepages resource allocatable enforced for multiple containers",
			pod:              resourcePod(res{cpu: 1, mem: 1, scalars: scalar(hugePageResourceA, 3)}, res{cpu: 1, mem: 1, scalars: scalar(hugePageResourceA, 3)}),
			existing:         resourcePod(res{scalars: scalar(hugePageResourceA, 2)}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient hugepages-2Mi"),
			wantInsufficient: []InsufficientResource{insufficient(hugePageResourceA, 6, 2, 5, true)},
		},
		{
			name:     "skip checking ignored extended resource",
			pod:      resourcePod(res{cpu: 1, mem: 1, scalars: scalar(extendedResourceB, 1)}),
			existing: resourcePod(res{}),
			args:     &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"example.com/bbb"}},
		},
		{
			name:     "resources + pod overhead fits",
			pod:      withOverhead(resourcePod(res{cpu: 1, mem: 1}), v1.ResourceList{v1.ResourceCPU: resource.MustParse("3m"), v1.ResourceMemory: resource.MustParse("13")}),
			existing: resourcePod(res{cpu: 5, mem: 5}),
		},
		{
			name:             "requests + overhead does not fit for memory",
			pod:              withOverhead(resourcePod(res{cpu: 1, mem: 1}), v1.ResourceList{v1.ResourceCPU: resource.MustParse("1m"), v1.ResourceMemory: resource.MustParse("15")}),
			existing:         resourcePod(res{cpu: 5, mem: 5}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientMemory),
			wantInsufficient: []InsufficientResource{insufficient(mem, 16, 5, 20, false)},
		},
		{
			name:             "skip checking ignored extended resource via resource groups",
			pod:              resourcePod(res{cpu: 1, mem: 1, scalars: scalar(extendedResourceB, 1, kubernetesIOResourceA, 1)}),
			existing:         resourcePod(res{}),
			args:             &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com"}},
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient kubernetes.io/something"),
			wantInsufficient: []InsufficientResource{insufficient(kubernetesIOResourceA, 1, 0, 0, true)},
		},
		{
			name:     "skip checking extended resource request with quantity zero via resource groups",
			pod:      resourcePod(res{cpu: 1, mem: 1, scalars: scalar(extendedResourceA, 0)}),
			existing: resourcePod(res{scalars: scalar(extendedResourceA, 6)}),
		},
		{
			name:     "skip checking resource request with quantity zero",
			pod:      resourcePod(res{scalars: scalar(extendedResourceA, 1)}),
			existing: resourcePod(res{cpu: 20, mem: 30, scalars: scalar(extendedResourceA, 1)}),
		},
		{
			name:     "both pod-level and container-level resources fit",
			pod:      withPodRequests(resourcePod(res{cpu: 1, mem: 1}), rl("cpu", "1m", "memory", "2")),
			existing: resourcePod(res{cpu: 5, mem: 5}),
		},
		{
			name:             "pod-level cpu resource not fit",
			pod:              withPodRequests(resourcePod(res{cpu: 1, mem: 1}), rl("cpu", "7m", "memory", "2")),
			existing:         resourcePod(res{cpu: 5, mem: 5}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientCPU),
			wantInsufficient: []InsufficientResource{insufficient(cpu, 7, 5, 10, false)},
		},
		{
			name:             "pod-level memory resource not fit",
			pod:              withPodRequests(resourcePod(res{cpu: 1, mem: 1}), rl("cpu", "3m", "memory", "2")),
			existing:         resourcePod(res{cpu: 5, mem: 19}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientMemory),
			wantInsufficient: []InsufficientResource{insufficient(mem, 2, 19, 20, false)},
		},
		{
			name: "pod-level hugepages resource fit",
			pod:  withPodRequests(resourcePod(), v1.ResourceList{v1.ResourceCPU: resource.MustParse("3m"), v1.ResourceMemory: resource.MustParse("2"), hugePageResourceA: *resource.NewQuantity(5, resource.BinarySI)}),
		},
		{
			name: "both pod-level and container-level hugepages resource fit",
			pod: withPodRequests(resourcePod(res{cpu: 1, mem: 1, scalars: scalar(hugePageResourceA, 3)}),
				v1.ResourceList{v1.ResourceCPU: resource.MustParse("3m"), v1.ResourceMemory: resource.MustParse("2"), hugePageResourceA: *resource.NewQuantity(5, resource.BinarySI)}),
		},
		{
			name:             "pod-level hugepages resource not fit",
			pod:              withPodRequests(resourcePod(), v1.ResourceList{v1.ResourceCPU: resource.MustParse("3m"), v1.ResourceMemory: resource.MustParse("2"), hugePageResourceA: *resource.NewQuantity(10, resource.BinarySI)}),
			want:             schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient hugepages-2Mi"),
			wantInsufficient: []InsufficientResource{insufficient(hugePageResourceA, 10, 0, 5, true)},
		},
		{
			name:             "one pod-level cpu resource fits and all init and non-init containers resources fit",
			pod:              withInit(withPodRequests(resourcePod(res{cpu: 1, mem: 1}), rl("cpu", "3m", "memory", "2")), res{cpu: 1, mem: 1}),
			existing:         resourcePod(res{cpu: 5, mem: 19}),
			want:             schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientMemory),
			wantInsufficient: []InsufficientResource{insufficient(mem, 2, 19, 20, false)},
		},
		{
			name:             "pod-level requests are ignored without the PodLevelResources gate",
			pod:              withPodRequests(resourcePod(res{cpu: 1, mem: 1}), rl("cpu", "7m", "memory", "2")),
			existing:         resourcePod(res{cpu: 5, mem: 5}),
			podLevelDisabled: true,
		},
		{
			name:     "extended resource NOT backed by DRA",
			pod:      resourcePod(res{cpu: 1, mem: 1, scalars: scalar(extendedResourceB, 1)}),
			existing: resourcePod(res{}),
			want:     schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient example.com/bbb"),
			wantInsufficient: []InsufficientResource{
				{ResourceName: "example.com/bbb", Reason: "Insufficient example.com/bbb", Requested: 1, Unresolvable: true},
			},
		},
		{
			name:     "storage ephemeral local storage request exceeds allocatable",
			pod:      resourcePod(res{eph: 25}),
			existing: resourcePod(res{cpu: 2, mem: 2}),
			want:     schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonInsufficientEphemeralStorage),
			wantInsufficient: []InsufficientResource{
				{ResourceName: eph, Reason: ErrReasonInsufficientEphemeralStorage, Requested: 25, Used: 0, Capacity: 20, Unresolvable: true},
			},
		},
		{
			name:     "ephemeral local storage is sufficient",
			pod:      withInit(resourcePod(res{eph: 5})),
			existing: resourcePod(res{cpu: 2, mem: 2, eph: 10}),
		},
		{
			name:     "empty storage requested, and pod fits",
			pod:      resourcePod(res{cpu: 1, mem: 1}),
			existing: resourcePod(res{cpu: 2, mem: 10}),
		},
		{
			name:     "storage pod fits",
			pod:      resourcePod(res{eph: 10}),
			existing: resourcePod(res{cpu: 2, mem: 2}),
		},
		{
			name:     "ephemeral storage in use counts against the request",
			pod:      resourcePod(res{eph: 11}),
			existing: resourcePod(res{eph: 10}),
			want:     schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientEphemeralStorage),
			wantInsufficient: []InsufficientResource{
				{ResourceName: eph, Reason: ErrReasonInsufficientEphemeralStorage, Requested: 11, Used: 10, Capacity: 20},
			},
		},
		{
			name:     "every missing resource is reported, scalar resources by name",
			pod:      resourcePod(res{cpu: 11, mem: 1, eph: 21, scalars: scalar(kubernetesIOResourceA, 1, extendedResourceB, 1, extendedResourceA, 1, hugePageResourceA, 1)}),
			existing: resourcePod(res{mem: 20, scalars: scalar(extendedResourceA, 5)}),
			want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonInsufficientCPU, ErrReasonInsufficientMemory, ErrReasonInsufficientEphemeralStorage,
				"Insufficient example.com/aaa", "Insufficient example.com/bbb", "Insufficient kubernetes.io/something"),
			wantInsufficient: []InsufficientResource{
				insufficient(cpu, 11, 0, 10, true),
				insufficient(mem, 1, 20, 20, false),
				{ResourceName: eph, Reason: ErrReasonInsufficientEphemeralStorage, Requested: 21, Used: 0, Capacity: 20, Unresolvable: true},
				insufficient(extendedResourceA, 1, 5, 5, false),
				insufficient(extendedResourceB, 1, 0, 0, true),
				insufficient(kubernetesIOResourceA, 1, 0, 0, true),
			},
		},
		{
			name:     "ignored resource groups only apply to extended resources",
			pod:      resourcePod(res{scalars: scalar(kubernetesIOResourceB, 1, extendedResourceB, 1)}),
			existing: resourcePod(res{}),
			args:     &configv1.NodeResourcesFitArgs{IgnoredResourceGroups: []string{"example.com", "subdomain.kubernetes.io"}, IgnoredResources: []string{"subdomain.kubernetes.io/something"}},
			want:     schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "Insufficient subdomain.kubernetes.io/something"),
			wantInsufficient: []InsufficientResource{
				insufficient(kubernetesIOResourceB, 1, 0, 0, true),
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var args *configv1.NodeResourcesFitArgs
			if tc.args != nil {
				args = tc.args
			}
			f := schedcore.DefaultFeatures
			if tc.podLevelDisabled {
				f.PodLevelResources = false
			}
			h := schedcore.NewHandle(nil, 1, schedcore.WithFeatures(f))
			p, err := NewFit(context.Background(), args, h)
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*Fit)
			var pods []*v1.Pod
			if tc.existing != nil {
				pods = append(pods, tc.existing)
			}
			ni := nodeInfoWith(kubeTestNode(), pods...)
			got, state := runFilterState(t, pl, tc.pod, ni)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter status (-want +got):\n%s", diff)
			}
			s, err := getPreFilterState(state)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantInsufficient, fitsRequest(s, ni)); diff != "" {
				t.Errorf("insufficient resources from the Filter's state (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterNotEnoughPods(t *testing.T) {
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing *v1.Pod
	}{
		{name: "even without specified resources, predicate fails when there's no space for additional pod", pod: &v1.Pod{}, existing: resourcePod(res{cpu: 10, mem: 20})},
		{name: "even if both resources fit, predicate fails when there's no space for additional pod", pod: resourcePod(res{cpu: 1, mem: 1}), existing: resourcePod(res{cpu: 5, mem: 5})},
		{name: "even for equal edge case, predicate fails when there's no space for additional pod", pod: resourcePod(res{cpu: 5, mem: 1}), existing: resourcePod(res{cpu: 5, mem: 19})},
		{name: "even for equal edge case, predicate fails when there's no space for additional pod due to init container", pod: withInit(resourcePod(res{cpu: 5, mem: 1}), res{cpu: 5, mem: 1}), existing: resourcePod(res{cpu: 5, mem: 19})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &v1.Node{}
			node.Status.Allocatable = v1.ResourceList{
				v1.ResourceCPU:    *resource.NewMilliQuantity(10, resource.DecimalSI),
				v1.ResourceMemory: *resource.NewQuantity(20, resource.BinarySI),
				v1.ResourcePods:   *resource.NewQuantity(1, resource.DecimalSI),
			}
			ni := nodeInfoWith(node, tc.existing)
			pl := newFit(t, nil)
			got, state := runFilterState(t, pl, tc.pod, ni)
			want := schedcore.NewStatus(schedcore.Unschedulable, ErrReasonTooManyPods)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Filter status (-want +got):\n%s", diff)
			}
			wantEx := schedcore.NewFilterExplanation(1, "node already runs 1 pods, its maximum (allocatable pods 1)")
			if diff := cmp.Diff(wantEx, pl.ExplainFilter(context.Background(), state, tc.pod, ni, got)); diff != "" {
				t.Errorf("ExplainFilter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterRestartableInitContainers(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	withSidecar := func(request, sidecarRequest v1.ResourceList) *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{
			Containers:     []v1.Container{{Name: "regular", Resources: v1.ResourceRequirements{Requests: request}}},
			InitContainers: []v1.Container{{Name: "restartable-init", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: sidecarRequest}}},
		}}
	}
	cpu := func(m int64) v1.ResourceList {
		return v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(m, resource.DecimalSI)}
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want *schedcore.Status
	}{
		{name: "allow pod without restartable init containers", pod: &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "regular"}}}}},
		{name: "allow pod with restartable init containers", pod: withSidecar(nil, nil)},
		{name: "allow pod if the total requested resources do not exceed the node's allocatable resources", pod: withSidecar(cpu(1), cpu(1))},
		{
			name: "not allow pod if the total requested resources do exceed the node's allocatable resources",
			pod:  withSidecar(cpu(1), cpu(2)),
			want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonInsufficientCPU),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			node := &v1.Node{}
			node.Status.Allocatable = v1.ResourceList{
				v1.ResourceCPU:    *resource.NewMilliQuantity(2, resource.DecimalSI),
				v1.ResourceMemory: *resource.NewQuantity(0, resource.BinarySI),
				v1.ResourcePods:   *resource.NewQuantity(1, resource.DecimalSI),
			}
			got := runFilter(t, newFit(t, nil), tc.pod, nodeInfoWith(node))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter status (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterWithoutPreFilterIsAnError(t *testing.T) {
	pl := newFit(t, nil)
	got := pl.Filter(context.Background(), schedcore.NewCycleState(), &v1.Pod{}, nodeInfoWith(&v1.Node{}))
	want := schedcore.NewStatus(schedcore.Error, `error reading "PreFilterNodeResourcesFit" from cycleState: not found`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Filter status (-want +got):\n%s", diff)
	}
}

func TestFilterCountsResizedPodsByTheirStatus(t *testing.T) {
	// An assigned pod resized in place occupies max(spec, status) on the
	// node (InPlacePodVerticalScaling): 500m in spec, 800m actuated.
	existing := podReq("node", rl("cpu", "500m"))
	existing.Spec.Containers[0].Name = "c"
	existing.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", Resources: &v1.ResourceRequirements{Requests: rl("cpu", "800m")}}}
	node := nodeWith("node", "cpu", "1")
	ni := nodeInfoWith(node, existing)
	got := runFilter(t, newFit(t, nil), podReq("", rl("cpu", "300m")), ni)
	want := schedcore.NewStatus(schedcore.Unschedulable, ErrReasonInsufficientCPU)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Filter status (-want +got):\n%s", diff)
	}
}

func TestFilterDoesNotAllocateWhenThePodFits(t *testing.T) {
	pl := newFit(t, nil)
	pod := resourcePod(res{cpu: 1, mem: 1, scalars: map[v1.ResourceName]int64{extendedResourceA: 1}})
	ni := nodeInfoWith(kubeTestNode(), resourcePod(res{cpu: 1, mem: 1}))
	state := schedcore.NewCycleState()
	pl.PreFilter(context.Background(), state, pod, nil)
	allocs := testing.AllocsPerRun(100, func() {
		if st := pl.Filter(context.Background(), state, pod, ni); st != nil {
			t.Fatalf("Filter: %v", st)
		}
	})
	if allocs != 0 {
		t.Errorf("Filter allocated %v times per run, want 0", allocs)
	}
}

func TestInsufficientResourceMissing(t *testing.T) {
	r := insufficient(v1.ResourceCPU, 300, 800, 1000, false)
	if got := r.Missing(); got != 100 {
		t.Errorf("Missing() = %d, want 100", got)
	}
}

func TestIsFit(t *testing.T) {
	podLevel := func(kv ...string) *v1.Pod { return withPodRequests(podReq(""), rl(kv...)) }
	tests := []struct {
		name     string
		pod      *v1.Pod
		node     *v1.Node
		expected bool
	}{
		{name: "nil node", pod: &v1.Pod{}},
		{name: "insufficient resource", pod: podReq("", rl("cpu", "2")), node: nodeWith("n", "cpu", "1")},
		{name: "sufficient resource", pod: podReq("", rl("cpu", "1")), node: nodeWith("n", "cpu", "2"), expected: true},
		{name: "insufficient pod-level resource", pod: podLevel("cpu", "2"), node: nodeWith("n", "cpu", "1")},
		{name: "sufficient pod-level resource", pod: podLevel("cpu", "2"), node: nodeWith("n", "cpu", "2"), expected: true},
		{name: "sufficient pod-level resource hugepages", pod: podLevel("hugepages-2Mi", "2Mi"), node: nodeWith("n", "hugepages-2Mi", "2Mi"), expected: true},
		{name: "insufficient pod-level resource hugepages", pod: podLevel("hugepages-2Mi", "4Mi"), node: nodeWith("n", "hugepages-2Mi", "2Mi")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := isFit(tc.pod, tc.node, schedcore.DefaultFeatures); got != tc.expected {
				t.Errorf("isFit = %v, want %v", got, tc.expected)
			}
		})
	}
}

// TestFilterListsScalarReasonsInNameOrder pins a deliberate difference from
// kube: kube walks the pod's scalar resources in map order, so with several
// missing extended resources its reason order varies from run to run; ours
// is the resource names' order, so messages are reproducible.
func TestFilterListsScalarReasonsInNameOrder(t *testing.T) {
	n := &v1.Node{}
	n.Name = "node"
	n.Status.Allocatable = v1.ResourceList{v1.ResourcePods: *resource.NewQuantity(10, resource.DecimalSI)}
	pod := &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
		"example.com/zeta": *resource.NewQuantity(1, resource.DecimalSI),
		"example.com/alfa": *resource.NewQuantity(1, resource.DecimalSI),
		"example.com/mike": *resource.NewQuantity(1, resource.DecimalSI),
	}}}}}}
	want := []string{"Insufficient example.com/alfa", "Insufficient example.com/mike", "Insufficient example.com/zeta"}
	for i := 0; i < 20; i++ {
		st := runFilter(t, newFit(t, nil), pod, nodeInfoWith(n))
		if d := cmp.Diff(want, st.Reasons()); d != "" {
			t.Fatalf("run %d: reasons (-want +got):\n%s", i, d)
		}
	}
}
