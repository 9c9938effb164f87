package dynamicresources

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func holdingOn(name, node, device string) *resourceapi.ResourceClaim {
	c := claim(name, exactly("gpu", 1))
	c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
		{Request: "gpu", Driver: "gpu.example.com", Pool: node, Device: device}}}}
	return c
}

func gpuClass() *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}}
}

// TestMemoKeepsAnswersTakenDevicesCannotChange: after devices are taken
// on the node, a failure is kept, and a success none of whose devices was
// taken; a success whose device was taken, a device freed, a pool with
// counters and a request for all devices run the allocator again. It fails
// when one of stillHoldsLocked's checks is dropped (or the rule itself).
func TestMemoKeepsAnswersTakenDevicesCannotChange(t *testing.T) {
	countered := func() *resourceapi.ResourceSlice {
		s := gpuSlice("node-a", "gpu-0", "gpu-1", "gpu-2")
		s.Spec.Devices[0].ConsumesCounters = []resourceapi.DeviceCounterConsumption{{CounterSet: "mem",
			Counters: map[string]resourceapi.Counter{"memory": {Value: resource.MustParse("1Gi")}}}}
		return s
	}
	all := exactly("gpu", 0)
	all.Exactly.AllocationMode = resourceapi.DeviceAllocationModeAll
	cases := []struct {
		name  string
		slice *resourceapi.ResourceSlice
		req   resourceapi.DeviceRequest
		// before is held from the start, taken added and freed deleted
		// after the first run; fail: the allocator fails.
		before, taken, freed *resourceapi.ResourceClaim
		fail                 bool
		rerun                bool
	}{
		{name: "a success, another device taken", taken: holdingOn("t", "node-a", "gpu-1")},
		{name: "a success, its device taken", taken: holdingOn("t", "node-a", "gpu-0"), rerun: true},
		{name: "a failure, a device taken", taken: holdingOn("t", "node-a", "gpu-1"), fail: true},
		{name: "a failure, a device freed", before: holdingOn("b", "node-a", "gpu-2"), freed: holdingOn("b", "node-a", "gpu-2"), fail: true, rerun: true},
		{name: "a failure, a device taken in a pool with counters", slice: countered(), taken: holdingOn("t", "node-a", "gpu-1"), fail: true, rerun: true},
		{name: "a failure of a request for all devices", req: all, taken: holdingOn("t", "node-a", "gpu-1"), fail: true, rerun: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dra := schedcore.NewDRAManager()
			dra.AddClass(gpuClass())
			slice := tc.slice
			if slice == nil {
				slice = gpuSlice("node-a", "gpu-0", "gpu-1", "gpu-2")
			}
			dra.AddSlice(slice)
			if tc.before != nil {
				dra.AddClaim(tc.before)
			}
			memo, allocated := newTestMemo(dra)
			req := tc.req
			if req.Exactly == nil {
				req = exactly("gpu", 1)
			}
			claims := []*resourceapi.ResourceClaim{claim("wants", req)}
			node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
			runs := 0
			place := func() []resourceapi.AllocationResult {
				_, poolVer, items := allocated.get(false)
				in := memo.inputs(dra, poolVer, items)
				in.changes = allocated.changeLog()
				res, err := memo.allocate(context.Background(), in, 0, node, claims, func() (string, error) { return claimSpecs(claims) },
					func(context.Context) ([]resourceapi.AllocationResult, error) {
						runs++
						if tc.fail {
							return nil, nil
						}
						return []resourceapi.AllocationResult{{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
							{Request: "gpu", Driver: "gpu.example.com", Pool: "node-a", Device: "gpu-0"}}}}}, nil
					})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			first := place()
			if tc.taken != nil {
				dra.AddClaim(tc.taken)
			}
			if tc.freed != nil {
				dra.DeleteClaim(tc.freed)
			}
			second := place()
			if want := map[bool]int{false: 1, true: 2}[tc.rerun]; runs != want {
				t.Errorf("%d runs, want %d", runs, want)
			}
			if (first == nil) != (second == nil) {
				t.Errorf("answers differ: %v, then %v", first, second)
			}
		})
	}
}

// TestMemoSharesAnswersAcrossInertPools: node-b, whose pool the claims
// cannot use differs from node-a's, gets node-a's failure (with no other
// pool) or success (with a GPU pool like node-a's, renamed) when that pool
// is complete and valid; an incomplete pool, one with duplicate device
// names, one with counters or with devices that choose their nodes runs
// the allocator. It fails when inertPoolLocked's checks are dropped.
func TestMemoSharesAnswersAcrossInertPools(t *testing.T) {
	nics := func(node string, devices ...string) *resourceapi.ResourceSlice {
		s := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-nics"}, Spec: resourceapi.ResourceSliceSpec{
			Driver: "nic.example.com", NodeName: ptr.To(node), Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1}}}
		for _, d := range devices {
			s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: d})
		}
		return s
	}
	cases := []struct {
		name   string
		nodeB  func() *resourceapi.ResourceSlice
		shared bool
	}{
		{name: "a complete, valid pool", nodeB: func() *resourceapi.ResourceSlice { return nics("node-b", "nic-0", "nic-1") }, shared: true},
		{name: "an incomplete pool", nodeB: func() *resourceapi.ResourceSlice {
			s := nics("node-b", "nic-0", "nic-1")
			s.Spec.Pool.ResourceSliceCount = 2
			return s
		}},
		{name: "duplicate device names", nodeB: func() *resourceapi.ResourceSlice { return nics("node-b", "nic-0", "nic-0") }},
		{name: "counters", nodeB: func() *resourceapi.ResourceSlice {
			s := nics("node-b", "nic-0", "nic-1")
			s.Spec.Devices[1].ConsumesCounters = []resourceapi.DeviceCounterConsumption{{CounterSet: "bw",
				Counters: map[string]resourceapi.Counter{"gbps": {Value: resource.MustParse("1")}}}}
			return s
		}},
		{name: "devices that choose their nodes", nodeB: func() *resourceapi.ResourceSlice {
			s := nics("node-b", "nic-0", "nic-1")
			s.Spec.NodeName, s.Spec.PerDeviceNodeSelection = nil, ptr.To(true)
			for i := range s.Spec.Devices {
				s.Spec.Devices[i].NodeName = ptr.To("node-b")
			}
			return s
		}},
	}
	for _, tc := range cases {
		for _, succeed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, success %v", tc.name, succeed), func(t *testing.T) {
				dra := schedcore.NewDRAManager()
				dra.AddClass(gpuClass())
				dra.AddSlice(nics("node-a", "nic-0"))
				dra.AddSlice(tc.nodeB())
				if succeed {
					dra.AddSlice(gpuSlice("node-a", "gpu-0"))
					dra.AddSlice(gpuSlice("node-b", "gpu-0"))
				}
				memo, allocated := newTestMemo(dra)
				claims := []*resourceapi.ResourceClaim{claim("wants", exactly("gpu", 1))}
				_, poolVer, items := allocated.get(false)
				in := memo.inputs(dra, poolVer, items)
				runs := 0
				for _, n := range []string{"node-a", "node-b"} {
					res, err := memo.allocate(context.Background(), in, -1, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}, claims,
						func() (string, error) { return claimSpecs(claims) },
						func(context.Context) ([]resourceapi.AllocationResult, error) {
							runs++
							if !succeed {
								return nil, nil
							}
							return []resourceapi.AllocationResult{{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
								{Request: "gpu", Driver: "gpu.example.com", Pool: n, Device: "gpu-0"}}}}}, nil
						})
					switch {
					case err != nil:
						t.Fatalf("%s: %v", n, err)
					case !succeed && res != nil:
						t.Fatalf("%s: %v; want a failure", n, res)
					case succeed && (len(res) != 1 || res[0].Devices.Results[0].Pool != n):
						t.Fatalf("%s: %v; want gpu-0 of pool %s", n, res, n)
					}
				}
				if want := map[bool]int{true: 1, false: 2}[tc.shared]; runs != want {
					t.Errorf("%d runs, want %d", runs, want)
				}
			})
		}
	}
}
