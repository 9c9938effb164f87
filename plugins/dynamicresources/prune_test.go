package dynamicresources

import (
	"context"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestPrunedSlicesLeaveOutInertPoolsTheClaimsCannotUse: the allocator's
// slices for a GPU claim leave out a complete, valid NIC pool, and keep
// the GPU pools, an incomplete NIC pool and a NIC pool on which the
// claim's selector fails (it may select there); a claim that may select
// NICs keeps them all. It fails when prunedSlices drops a pool the claims
// may use or one that is not inert.
func TestPrunedSlicesLeaveOutInertPoolsTheClaimsCannotUse(t *testing.T) {
	nics := func(node string, count int64) *resourceapi.ResourceSlice {
		return &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: node + "-nics"}, Spec: resourceapi.ResourceSliceSpec{
			Driver: "nic.example.com", NodeName: ptr.To(node), Pool: resourceapi.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: count},
			Devices: []resourceapi.Device{{Name: "nic-0"}, {Name: "nic-1"}}}}
	}
	sel := func(e string) []resourceapi.DeviceSelector {
		return []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: e}}}
	}
	classes := []*resourceapi.DeviceClass{
		gpuClass(),
		{ObjectMeta: metav1.ObjectMeta{Name: "any"}, Spec: resourceapi.DeviceClassSpec{Selectors: sel(`true`)}},
		// Fails on devices without the attribute: it may select them.
		{ObjectMeta: metav1.ObjectMeta{Name: "by-model"}, Spec: resourceapi.DeviceClassSpec{Selectors: sel(`device.attributes["gpu.example.com"].model == "L4"`)}},
	}
	cases := []struct {
		name  string
		class string
		want  []string
	}{
		{name: "a GPU claim", class: "gpu", want: []string{"node-a-gpus", "node-b-gpus", "node-b-nics"}},
		{name: "a claim that may select a NIC", class: "any", want: []string{"node-a-gpus", "node-a-nics", "node-b-gpus", "node-b-nics"}},
		{name: "a selector that fails on NICs", class: "by-model", want: []string{"node-a-gpus", "node-a-nics", "node-b-gpus", "node-b-nics"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dra := schedcore.NewDRAManager()
			for _, c := range classes {
				dra.AddClass(c)
			}
			dra.AddSlice(gpuSlice("node-a", "gpu-0"))
			dra.AddSlice(gpuSlice("node-b", "gpu-0"))
			dra.AddSlice(nics("node-a", 1))
			// Incomplete: the pool says two slices.
			dra.AddSlice(nics("node-b", 2))
			memo, allocated := newTestMemo(dra)
			claims := []*resourceapi.ResourceClaim{claim("wants", exactly(tc.class, 1))}
			spec, err := claimSpecs(claims)
			if err != nil {
				t.Fatal(err)
			}
			_, poolVer, items := allocated.get(false)
			in := memo.inputs(dra, poolVer, items)
			var got []string
			for _, s := range memo.prunedSlices(context.Background(), in, dra.Slices(), spec, claims) {
				got = append(got, s.Name)
			}
			sort.Strings(got)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("the allocator's slices (-want +got):\n%s", d)
			}
		})
	}
}
