package dynamicresources

import (
	"context"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestAllocatorReusedUntilCountersChange: cycles after an allocation in
// a pool without counters get the allocator built before; after one in a
// pool with shared counters the allocator is built anew, and sees the
// counters left. It fails when the reuse ignores the counters' changes
// (the old allocator's counters still count the taken device's as free,
// and it picks the device that needs them all) or when it ignores the
// objects revision.
func TestAllocatorReusedUntilCountersChange(t *testing.T) {
	ctx := context.Background()
	counters := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-counters"}, Spec: resourceapi.ResourceSliceSpec{
		Driver: "gpu.example.com", NodeName: ptr.To("gpu-node"), Pool: resourceapi.ResourcePool{Name: "gpu-node", Generation: 1, ResourceSliceCount: 2},
		SharedCounters: []resourceapi.CounterSet{{Name: "mem", Counters: map[string]resourceapi.Counter{"gb": {Value: resource.MustParse("2")}}}}}}
	consumes := func(n string) []resourceapi.DeviceCounterConsumption {
		return []resourceapi.DeviceCounterConsumption{{CounterSet: "mem", Counters: map[string]resourceapi.Counter{"gb": {Value: resource.MustParse(n)}}}}
	}
	devices := gpuSlice("gpu-node", "big", "small-0", "small-1")
	devices.Spec.Pool.ResourceSliceCount = 2
	devices.Spec.Devices[0].ConsumesCounters = consumes("2")
	devices.Spec.Devices[1].ConsumesCounters = consumes("1")
	devices.Spec.Devices[2].ConsumesCounters = consumes("1")

	dra := schedcore.NewDRAManager()
	dra.AddClass(gpuClass())
	dra.AddSlice(counters)
	dra.AddSlice(devices)
	dra.AddSlice(gpuSlice("other-node", "gpu-0", "gpu-1"))
	p, err := New(ctx, nil, schedcore.NewHandle(nil, 1, schedcore.WithDRA(dra)))
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*DynamicResources)
	n := 0
	// cycle places a pod with one GPU claim on node and returns the device
	// chosen and the cycle's allocator.
	cycle := func(node string) (string, any) {
		n++
		c := claim("c"+string(rune('0'+n)), exactly("gpu", 1))
		dra.AddClaim(c)
		pod := podWith(c.Name)
		state := schedcore.NewCycleState()
		if _, st := pl.PreFilter(ctx, state, pod, nil); st != nil {
			t.Fatalf("PreFilter: %v", st)
		}
		if st := pl.Filter(ctx, state, pod, nodeInfo(node)); st != nil {
			t.Fatalf("Filter on %s: %v", node, st)
		}
		s, _ := getStateData(state)
		return s.nodeAllocations[node].allocationResults[0].Devices.Results[0].Device, s.allocator
	}
	hold := func(pool, device string) {
		n++
		c := holdingOn("h"+string(rune('0'+n)), pool, device)
		dra.AddClaim(c)
	}

	got, first := cycle("gpu-node")
	if got != "big" {
		t.Fatalf("nothing taken: got %s, want big", got)
	}
	hold("other-node", "gpu-0")
	if _, a := cycle("other-node"); a != first {
		t.Errorf("after an allocation in a pool without counters: a new allocator")
	}
	hold("gpu-node", "small-0")
	got, a := cycle("gpu-node")
	if a == first {
		t.Errorf("after an allocation in a pool with counters: the same allocator")
	}
	if got != "small-1" {
		t.Errorf("small-0 taken (1 of 2 left): got %s, want small-1", got)
	}
	dra.AddSlice(gpuSlice("third-node", "gpu-0"))
	if _, b := cycle("other-node"); b == a {
		t.Errorf("after a new slice: the same allocator")
	}
}
