package schedcore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func claimAt(rv string, allocated bool) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "ns", UID: "u", ResourceVersion: rv}}
	if allocated {
		c.Status.Allocation = &resourceapi.AllocationResult{}
	}
	return c
}

// TestAssumedClaims checks the assume-cache rules: an assumed claim wins
// over older informer versions and yields to equal or newer ones; Restore
// drops it; in-flight allocations count until removed.
func TestAssumedClaims(t *testing.T) {
	m := NewDRAManager()
	m.AddClaim(claimAt("1", false))
	if err := m.AssumeClaim(claimAt("3", true)); err != nil {
		t.Fatal(err)
	}
	m.AddClaim(claimAt("2", false)) // an older informer event
	if c, _ := m.Claim("ns", "c"); c.ResourceVersion != "3" {
		t.Errorf("after an older event the claim is at %s, want the assumed 3", c.ResourceVersion)
	}
	if err := m.AssumeClaim(claimAt("2", true)); err == nil {
		t.Errorf("assuming an older version succeeded")
	}
	m.AddClaim(claimAt("3", true)) // the write comes back
	m.RestoreClaim("ns", "c")
	if c, _ := m.Claim("ns", "c"); c.ResourceVersion != "3" || c.Status.Allocation == nil {
		t.Errorf("after the informer caught up and a restore: %+v", c)
	}
	allocs, rev := m.Allocations()
	if len(allocs) != 1 {
		t.Fatalf("%d allocations, want 1", len(allocs))
	}
	pending := claimAt("1", true)
	pending.Name, pending.UID = "d", "v"
	m.SignalClaimPendingAllocation("v", pending)
	m.SignalClaimPendingAllocation("v", pending) // a second sharer
	if allocs, rev2 := m.Allocations(); len(allocs) != 2 || rev2 == rev {
		t.Errorf("in flight: %d allocations at revision %d (was %d)", len(allocs), rev2, rev)
	}
	if m.MaybeRemoveClaimPendingAllocation("v", false) {
		t.Errorf("removed while a sharer is left")
	}
	if !m.MaybeRemoveClaimPendingAllocation("v", false) || m.PendingAllocation("v") != nil {
		t.Errorf("the last sharer did not remove it")
	}
}

// TestDeviceTaintRules: a rule adds its taint to the devices it selects,
// in a copy; the stored slice is left alone.
func TestDeviceTaintRules(t *testing.T) {
	m := NewDRAManager()
	s := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: resourceapi.ResourceSliceSpec{
		Driver: "d", Pool: resourceapi.ResourcePool{Name: "p"}, Devices: []resourceapi.Device{{Name: "a"}, {Name: "b"}}}}
	m.AddSlice(s)
	m.AddTaintRule(&resourceapi.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Spec: resourceapi.DeviceTaintRuleSpec{
		DeviceSelector: &resourceapi.DeviceTaintSelector{Driver: strp("d"), Device: strp("b")},
		Taint:          resourceapi.DeviceTaint{Key: "k", Effect: resourceapi.DeviceTaintEffectNoSchedule}}})
	got := m.Slices()[0]
	if len(got.Spec.Devices[0].Taints) != 0 || len(got.Spec.Devices[1].Taints) != 1 || len(s.Spec.Devices[1].Taints) != 0 {
		t.Errorf("patched %+v, stored %+v", got.Spec.Devices, s.Spec.Devices)
	}
	m.SetDeviceTaintRules(false)
	if len(m.Slices()[0].Spec.Devices[1].Taints) != 0 {
		t.Errorf("rules applied with DRADeviceTaintRules off")
	}
}

func strp(s string) *string { return &s }

// TestClaimsAllocatingDeviceFollowsClaims: the claims holding each device
// are indexed once and kept until a claim or an in-flight allocation
// changes; every change must show in the next answer, the reservations
// (which name the holders) included.
func TestClaimsAllocatingDeviceFollowsClaims(t *testing.T) {
	holding := func(name, rv string, device string, pods ...string) *resourceapi.ResourceClaim {
		c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: rv}}
		if device != "" {
			c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
				{Request: "gpu", Driver: "d", Pool: "n1", Device: device}}}}
		}
		for _, p := range pods {
			c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: p})
		}
		return c
	}
	// holders describes the claims holding gpu-0: name and reservations.
	holders := func(m *DRAManager) []string {
		var out []string
		for _, c := range m.ClaimsAllocatingDevice("d", "n1", "gpu-0") {
			s := c.Name + ":"
			for _, r := range c.Status.ReservedFor {
				s += " " + r.Name
			}
			out = append(out, s)
		}
		return out
	}
	m := NewDRAManager()
	m.AddClaim(holding("b", "1", "gpu-0"))
	m.AddClaim(holding("c", "1", "gpu-1"))
	steps := []struct {
		name   string
		change func()
		want   []string
	}{
		{"one claim holds the device", func() {}, []string{"b:"}},
		{"another claim allocated the device comes first by name", func() { m.AddClaim(holding("a", "1", "gpu-0")) }, []string{"a:", "b:"}},
		{"a reservation added by an update", func() { m.UpdateClaim(nil, holding("b", "2", "gpu-0", "pod-1")) }, []string{"a:", "b: pod-1"}},
		{"an assumed version", func() {
			if err := m.AssumeClaim(holding("b", "3", "gpu-0", "pod-1", "pod-2")); err != nil {
				t.Fatal(err)
			}
		}, []string{"a:", "b: pod-1 pod-2"}},
		{"the assumed version dropped", func() { m.RestoreClaim("ns", "b") }, []string{"a:", "b: pod-1"}},
		{"a deleted claim", func() { m.DeleteClaim(holding("a", "1", "gpu-0")) }, []string{"b: pod-1"}},
		{"an in-flight allocation", func() { m.SignalClaimPendingAllocation("uid-d", holding("d", "1", "gpu-0", "pod-3")) }, []string{"b: pod-1", "d: pod-3"}},
		{"the in-flight allocation removed", func() { m.MaybeRemoveClaimPendingAllocation("uid-d", true) }, []string{"b: pod-1"}},
	}
	for _, s := range steps {
		s.change()
		if d := cmp.Diff(s.want, holders(m)); d != "" {
			t.Errorf("%s: holders of gpu-0 (-want +got):\n%s", s.name, d)
		}
	}
}
