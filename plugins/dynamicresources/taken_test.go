package dynamicresources

import (
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// holding is an allocated claim holding device dev of pool (driver
// gpu.example.com).
func holding(pool string, devs ...string) *resourceapi.ResourceClaim {
	c := claim("holder-"+pool+"-"+devs[0], exactly("gpu", 1))
	c.Status.Allocation = &resourceapi.AllocationResult{}
	for _, d := range devs {
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
			resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: "gpu.example.com", Pool: pool, Device: d})
	}
	return c
}

// TestTakenAnswersServeNodesWithMoreTaken: node-a's answer serves node-b,
// whose pool holds the same devices, when everything taken on node-a is
// taken on node-b and, for a success, none of its devices is; otherwise,
// or when the claims do not ask for exact counts, or the pool is not plain
// (a device that allows multiple allocations), or the pools differ, the
// allocator runs again. It fails when one of takenKeyLocked's, covers' or
// usesTaken's checks is dropped.
func TestTakenAnswersServeNodesWithMoreTaken(t *testing.T) {
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}}
	gpus := func(node string) *resourceapi.ResourceSlice { return gpuSlice(node, "gpu-0", "gpu-1", "gpu-2") }
	multi := func(node string) *resourceapi.ResourceSlice {
		s := gpus(node)
		s.Spec.Devices[2].AllowMultipleAllocations = ptr.To(true)
		return s
	}
	all := exactly("gpu", 0)
	all.Exactly.AllocationMode = resourceapi.DeviceAllocationModeAll
	cases := []struct {
		name string
		// slices of node-a and node-b; taken on them; fail: the
		// allocator finds nothing (else it answers the first free device).
		slices  []*resourceapi.ResourceSlice
		taken   []*resourceapi.ResourceClaim
		request resourceapi.DeviceRequest
		fail    bool
		// shared: node-b is answered from node-a's answer; want is node-b's
		// device when it is.
		shared bool
		want   string
	}{
		{name: "a failure, more taken", slices: []*resourceapi.ResourceSlice{gpus("node-a"), gpus("node-b")},
			taken: []*resourceapi.ResourceClaim{holding("node-a", "gpu-0"), holding("node-b", "gpu-0", "gpu-2")}, request: exactly("gpu", 3), fail: true, shared: true},
		{name: "a failure, other devices taken", slices: []*resourceapi.ResourceSlice{gpus("node-a"), gpus("node-b")},
			taken: []*resourceapi.ResourceClaim{holding("node-a", "gpu-0"), holding("node-b", "gpu-1")}, request: exactly("gpu", 3), fail: true},
		{name: "a success, more taken but not its devices", slices: []*resourceapi.ResourceSlice{gpus("node-a"), gpus("node-b")},
			taken: []*resourceapi.ResourceClaim{holding("node-a", "gpu-0"), holding("node-b", "gpu-0", "gpu-2")}, request: exactly("gpu", 1), shared: true, want: "gpu-1"},
		{name: "a success whose device is taken", slices: []*resourceapi.ResourceSlice{gpus("node-a"), gpus("node-b")},
			taken: []*resourceapi.ResourceClaim{holding("node-a", "gpu-0"), holding("node-b", "gpu-0", "gpu-1")}, request: exactly("gpu", 1)},
		{name: "allocation mode All", slices: []*resourceapi.ResourceSlice{gpus("node-a"), gpus("node-b")},
			taken: []*resourceapi.ResourceClaim{holding("node-a", "gpu-0"), holding("node-b", "gpu-0", "gpu-2")}, request: all, fail: true},
		{name: "a device allowing multiple allocations", slices: []*resourceapi.ResourceSlice{multi("node-a"), multi("node-b")},
			taken: []*resourceapi.ResourceClaim{holding("node-a", "gpu-0"), holding("node-b", "gpu-0", "gpu-2")}, request: exactly("gpu", 3), fail: true},
		{name: "other devices", slices: []*resourceapi.ResourceSlice{gpus("node-a"), gpuSlice("node-b", "gpu-0", "gpu-1", "gpu-3")},
			taken: []*resourceapi.ResourceClaim{holding("node-a", "gpu-0"), holding("node-b", "gpu-0", "gpu-3")}, request: exactly("gpu", 3), fail: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dra := schedcore.NewDRAManager()
			dra.AddClass(class)
			for _, s := range tc.slices {
				dra.AddSlice(s)
			}
			for _, c := range tc.taken {
				dra.AddClaim(c)
			}
			memo, allocated := newTestMemo(dra)
			claims := []*resourceapi.ResourceClaim{claim("wants", tc.request)}
			_, poolVer, items := allocated.get(false)
			in := memo.inputs(dra, poolVer, items)
			runs := 0
			place := memoPlacer(t, memo, in, claims, func(node string) []resourceapi.AllocationResult {
				runs++
				if tc.fail {
					return nil
				}
				dev := "gpu-1"
				if node == "node-b" {
					dev = "gpu-2"
				}
				return gpuOnNode(node, node, dev)
			})
			place("node-a")
			got := place("node-b")
			if want := map[bool]int{true: 1, false: 2}[tc.shared]; runs != want {
				t.Fatalf("%d allocator runs, want %d", runs, want)
			}
			if tc.fail {
				if got != nil {
					t.Errorf("node-b: %+v, want a failure", got)
				}
				return
			}
			if tc.shared && (len(got) != 1 || got[0].Devices.Results[0].Pool != "node-b" || got[0].Devices.Results[0].Device != tc.want ||
				got[0].NodeSelector.NodeSelectorTerms[0].MatchFields[0].Values[0] != "node-b") {
				t.Errorf("node-b's result: %+v, want %s of pool node-b for node-b", got, tc.want)
			}
		})
	}
}
