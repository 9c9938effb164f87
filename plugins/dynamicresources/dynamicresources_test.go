package dynamicresources

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func gpuSlice(node string, devices ...string) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-gpus"}, Spec: resourceapi.ResourceSliceSpec{
		Driver: "gpu.example.com", NodeName: ptr.To(node), Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
	for _, d := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: d})
	}
	return s
}

func claim(name string, requests ...resourceapi.DeviceRequest) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ml", UID: types.UID("uid-" + name), ResourceVersion: "1"},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: requests}}}
}

func exactly(class string, count int64) resourceapi.DeviceRequest {
	return resourceapi.DeviceRequest{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: count}}
}

func podWith(claims ...string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ml", UID: "pod-uid"}}
	for _, c := range claims {
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: c, ResourceClaimName: ptr.To(c)})
	}
	return p
}

func nodeInfo(name string) *schedcore.NodeInfo {
	ni := schedcore.NewNodeInfo()
	ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	return ni
}

// TestCycle runs PreEnqueue, PreFilter and Filter on two nodes, one with two
// free GPUs, and checks kube's statuses and messages.
func TestCycle(t *testing.T) {
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}}
	badCEL := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "bad"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver ==`}}}}}
	cases := []struct {
		name       string
		claims     []*resourceapi.ResourceClaim
		pod        *v1.Pod
		preEnqueue string
		preFilter  string
		// filter is the status on "gpu-node" and "cpu-node"; "" fits.
		filter   [2]string
		errorish bool
	}{
		{name: "a missing claim holds the pod in PreEnqueue", pod: podWith("c1"), preEnqueue: `could not find ResourceClaim "ml/c1"`},
		{name: "a template claim not created yet holds the pod", pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ml"},
			Spec: v1.PodSpec{ResourceClaims: []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("t")}}}},
			preEnqueue: `pod "ml/p": ResourceClaim not created yet`},
		{name: "a missing class rejects the pod at PreFilter", claims: []*resourceapi.ResourceClaim{claim("c1", exactly("tpu", 1))}, pod: podWith("c1"),
			preFilter: "request gpu: device class tpu does not exist"},
		{name: "one GPU fits the GPU node only", claims: []*resourceapi.ResourceClaim{claim("c1", exactly("gpu", 1))}, pod: podWith("c1"),
			filter: [2]string{"", ErrReasonCannotAllocate}},
		{name: "three GPUs fit nowhere", claims: []*resourceapi.ResourceClaim{claim("c1", exactly("gpu", 3))}, pod: podWith("c1"),
			filter: [2]string{ErrReasonCannotAllocate, ErrReasonCannotAllocate}},
		{name: "a CEL expression that does not compile is an error", claims: []*resourceapi.ResourceClaim{claim("c1", exactly("bad", 1))}, pod: podWith("c1"), errorish: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dra := schedcore.NewDRAManager()
			dra.AddClass(class)
			dra.AddClass(badCEL)
			dra.AddSlice(gpuSlice("gpu-node", "gpu-0", "gpu-1"))
			for _, cl := range c.claims {
				dra.AddClaim(cl)
			}
			h := schedcore.NewHandle(nil, 1, schedcore.WithDRA(dra))
			p, err := New(ctx, nil, h)
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*DynamicResources)
			if st := pl.PreEnqueue(ctx, c.pod); st.Message() != c.preEnqueue || (c.preEnqueue != "" && st.Code() != schedcore.UnschedulableAndUnresolvable) {
				t.Fatalf("PreEnqueue = %v, want %q", st, c.preEnqueue)
			}
			if c.preEnqueue != "" {
				return
			}
			state := schedcore.NewCycleState()
			_, st := pl.PreFilter(ctx, state, c.pod, nil)
			if st.Message() != c.preFilter {
				t.Fatalf("PreFilter = %v, want %q", st, c.preFilter)
			}
			if c.preFilter != "" {
				return
			}
			for i, n := range []string{"gpu-node", "cpu-node"} {
				got := pl.Filter(ctx, state, c.pod, nodeInfo(n))
				if c.errorish {
					if n == "gpu-node" && got.Code() != schedcore.Error {
						t.Errorf("Filter on %s = %v, want an Error", n, got)
					}
					continue
				}
				if got.Message() != c.filter[i] || (c.filter[i] != "" && got.Code() != schedcore.UnschedulableAndUnresolvable) {
					t.Errorf("Filter on %s = %v, want %q", n, got, c.filter[i])
				}
			}
		})
	}
}

// TestScoreFirstAvailable scores 8 - index of the chosen subrequest.
func TestScoreFirstAvailable(t *testing.T) {
	c := claim("c1", resourceapi.DeviceRequest{Name: "gpu", FirstAvailable: []resourceapi.DeviceSubRequest{
		{Name: "big", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 2},
		{Name: "small", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1},
	}})
	for _, tc := range []struct {
		request string
		want    int64
	}{{"gpu/big", 8}, {"gpu/small", 7}} {
		got, err := computeScore((&claimStore{claims: []*resourceapi.ResourceClaim{c}, numUserOwned: 1}).all(),
			nodeAllocation{allocationResults: []resourceapi.AllocationResult{{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{Request: tc.request}}}}}})
		if err != nil || got != tc.want {
			t.Errorf("%s: score %d, %v; want %d", tc.request, got, err, tc.want)
		}
	}
}
