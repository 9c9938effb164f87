package dynamicresources

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/dynamic-resource-allocation/cel"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestMemoSharesSuccessesUnderNodeNames: a success on node-a is handed to
// node-b, whose pool has the same devices and nothing taken, with node-b's
// pool and node name; a node with a device taken, or with two pools of one
// driver (whose order could differ), runs the allocator. It fails when the
// renaming or one of its checks is dropped.
func TestMemoSharesSuccessesUnderNodeNames(t *testing.T) {
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}}
	spans := func(node, device string) *resourceapi.ResourceSlice {
		s := gpuSlice(node, device)
		s.Spec.Pool.Name, s.Spec.Pool.ResourceSliceCount = "span", 2
		return s
	}
	second := func(node string) *resourceapi.ResourceSlice {
		s := gpuSlice(node, "gpu-0")
		s.Name, s.Spec.Pool.Name = node+"-x", node+"-x"
		return s
	}
	cases := []struct {
		name string
		// slices for node-a and node-b; taken: allocated on node-b.
		slices []*resourceapi.ResourceSlice
		taken  *resourceapi.ResourceClaim
		shared bool
		// pool is the pool the allocator takes from (default: the node's).
		pool string
	}{
		{name: "same devices", slices: []*resourceapi.ResourceSlice{gpuSlice("node-a", "gpu-0", "gpu-1"), gpuSlice("node-b", "gpu-0", "gpu-1")}, shared: true},
		{name: "a device taken", slices: []*resourceapi.ResourceSlice{gpuSlice("node-a", "gpu-0", "gpu-1"), gpuSlice("node-b", "gpu-0", "gpu-1")},
			taken: func() *resourceapi.ResourceClaim {
				c := claim("holder", exactly("gpu", 1))
				c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
					{Request: "gpu", Driver: "gpu.example.com", Pool: "node-b", Device: "gpu-1"}}}}
				return c
			}()},
		{name: "two pools of one driver", slices: []*resourceapi.ResourceSlice{gpuSlice("node-a", "gpu-0"), second("node-a"), gpuSlice("node-b", "gpu-0"), second("node-b")}},
		// One pool, a slice for each node: each node sees its own devices.
		{name: "a pool across nodes", slices: []*resourceapi.ResourceSlice{spans("node-a", "gpu-0"), spans("node-b", "gpu-1")}, pool: "span"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dra := schedcore.NewDRAManager()
			dra.AddClass(class)
			for _, s := range tc.slices {
				dra.AddSlice(s)
			}
			if tc.taken != nil {
				dra.AddClaim(tc.taken)
			}
			allocated := &allocatedStates{m: dra}
			memo := newAllocationMemo()
			memo.sel = &selection{class: dra.Class, cel: cel.NewCache(8, cel.Features{})}
			claims := []*resourceapi.ResourceClaim{claim("wants", exactly("gpu", 1))}
			_, poolVer, items := allocated.get(false)
			in := memo.inputs(dra, poolVer, items)
			runs := 0
			place := func(node string) []resourceapi.AllocationResult {
				res, err := memo.allocate(context.Background(), in, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, claims,
					func() (string, error) { return claimSpecs(claims) },
					func(context.Context) ([]resourceapi.AllocationResult, error) {
						runs++
						pool := node
						if tc.pool != "" {
							pool = tc.pool
						}
						return []resourceapi.AllocationResult{{
							Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
								{Request: "gpu", Driver: "gpu.example.com", Pool: pool, Device: "gpu-0"}}},
							NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
								{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}},
						}}, nil
					})
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			place("node-a")
			got := place("node-b")
			if want := map[bool]int{true: 1, false: 2}[tc.shared]; runs != want {
				t.Fatalf("%d allocator runs, want %d", runs, want)
			}
			wantPool := "node-b"
			if tc.pool != "" {
				wantPool = tc.pool
			}
			if len(got) != 1 || got[0].Devices.Results[0].Pool != wantPool || got[0].NodeSelector.NodeSelectorTerms[0].MatchFields[0].Values[0] != "node-b" {
				t.Errorf("node-b's result names other names: %+v", got)
			}
		})
	}
}
