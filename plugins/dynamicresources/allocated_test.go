package dynamicresources

import (
	"fmt"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/structured"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestAllocatedStateFollowsTheChanges: the allocated state kept up to date
// from the manager's changes equals the one gathered afresh, through an
// allocation in flight written back as an equal copy (the API's version of
// the claim): the device stays taken. It fails when the changes are
// applied in journal order (the copy added, then the in-flight original
// removed, which frees the device).
func TestAllocatedStateFollowsTheChanges(t *testing.T) {
	dra := schedcore.NewDRAManager()
	dra.AddSlice(gpuSlice("node-a", "gpu-0", "gpu-1"))
	held := func(c *resourceapi.ResourceClaim, dev string) *resourceapi.ResourceClaim {
		c = c.DeepCopy()
		c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: "gpu.example.com", Pool: "node-a", Device: dev}}}}
		return c
	}
	incremental := &allocatedStates{m: dra}
	taken := func(a *allocatedStates) string {
		s, _, _ := a.get(false)
		var out []string
		for _, d := range []string{"gpu-0", "gpu-1"} {
			if s.AllocatedDevices.Has(structured.MakeDeviceID("gpu.example.com", "node-a", d)) {
				out = append(out, d)
			}
		}
		return fmt.Sprint(out)
	}
	check := func(step, want string) {
		t.Helper()
		if got, fresh := taken(incremental), taken(&allocatedStates{m: dra}); got != want || fresh != want {
			t.Errorf("%s: taken %s (afresh %s), want %s", step, got, fresh, want)
		}
	}
	pending := claim("pending", exactly("gpu", 1))
	dra.AddClaim(pending)
	check("nothing allocated", "[]")
	inFlight := held(pending, "gpu-0")
	dra.SignalClaimPendingAllocation(inFlight.UID, inFlight)
	check("in flight", "[gpu-0]")
	written := held(pending, "gpu-0")
	written.ResourceVersion = "2"
	if err := dra.AssumeClaim(written); err != nil {
		t.Fatal(err)
	}
	dra.MaybeRemoveClaimPendingAllocation(inFlight.UID, false)
	check("written back", "[gpu-0]")
	dra.AddClaim(held(written, "gpu-1"))
	check("reallocated", "[gpu-1]")
	dra.DeleteClaim(written)
	check("deleted", "[]")
}
