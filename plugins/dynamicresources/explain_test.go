package dynamicresources

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func celSelector(expr string) resourceapi.DeviceSelector {
	return resourceapi.DeviceSelector{CEL: &resourceapi.CELDeviceSelector{Expression: expr}}
}

// device is a GPU with a model and memory.
func device(name, model, memory string) resourceapi.Device {
	return resourceapi.Device{Name: name,
		Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": {StringValue: ptr.To(model)}},
		Capacity:   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse(memory)}}}
}

func slice(node string, devices ...resourceapi.Device) *resourceapi.ResourceSlice {
	s := gpuSlice(node)
	s.Spec.Devices = devices
	return s
}

// allocated is a claim allocated the devices on node and reserved for
// pods (none: not reserved).
func allocated(name, node string, devices []string, pods ...string) *resourceapi.ResourceClaim {
	c := claim(name, exactly("gpu", int64(len(devices))))
	a := &resourceapi.AllocationResult{NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}}}
	for _, d := range devices {
		a.Devices.Results = append(a.Devices.Results, resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: "gpu.example.com", Pool: node, Device: d})
	}
	c.Status.Allocation = a
	for _, p := range pods {
		c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: p, UID: types.UID("uid-" + p)})
	}
	return c
}

func withSelectors(r resourceapi.DeviceRequest, exprs ...string) resourceapi.DeviceRequest {
	for _, e := range exprs {
		r.Exactly.Selectors = append(r.Exactly.Selectors, celSelector(e))
	}
	return r
}

// TestExplainFilter runs the cycle on node n1 and checks what
// ExplainFilter says about the rejection: the gap per request with one
// line per device, and the shortfall.
func TestExplainFilter(t *testing.T) {
	h100 := `device.attributes["gpu.example.com"].model == "H100"`
	big := `device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0`
	gpuClass := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{celSelector(`device.driver == "gpu.example.com"`)}}}
	h100Class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "h100"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{celSelector(`device.driver == "gpu.example.com"`), celSelector(h100)}}}
	twoGPUs := slice("n1", device("gpu-0", "H100", "80Gi"), device("gpu-1", "A100", "40Gi"))

	tainted := slice("n1", device("gpu-0", "H100", "80Gi"), device("gpu-1", "H100", "80Gi"))
	tainted.Spec.Devices[1].Taints = []resourceapi.DeviceTaint{{Key: "example.com/unhealthy", Value: "ecc", Effect: resourceapi.DeviceTaintEffectNoSchedule}}

	partitions := slice("n1")
	partitions.Spec.SharedCounters = []resourceapi.CounterSet{{Name: "gpu-0-memory", Counters: map[string]resourceapi.Counter{"memory": {Value: resource.MustParse("80Gi")}}}}
	for _, p := range []struct{ name, mem string }{{"gpu-0-full", "80Gi"}, {"gpu-0-half-a", "40Gi"}, {"gpu-0-half-b", "40Gi"}} {
		d := device(p.name, "H100", p.mem)
		d.ConsumesCounters = []resourceapi.DeviceCounterConsumption{{CounterSet: "gpu-0-memory", Counters: map[string]resourceapi.Counter{"memory": {Value: resource.MustParse(p.mem)}}}}
		partitions.Spec.Devices = append(partitions.Spec.Devices, d)
	}

	shared := slice("n1", device("gpu-0", "H100", "80Gi"))
	shared.Spec.Devices[0].AllowMultipleAllocations = ptr.To(true)
	sharedUse := allocated("other", "n1", []string{"gpu-0"}, "other-pod")
	sharedUse.Status.Allocation.Devices.Results[0].ShareID = ptr.To[types.UID]("share-1")
	sharedUse.Status.Allocation.Devices.Results[0].ConsumedCapacity = map[resourceapi.QualifiedName]resource.Quantity{"memory": resource.MustParse("60Gi")}
	capRequest := exactly("gpu", 1)
	capRequest.Exactly.Capacity = &resourceapi.CapacityRequirements{Requests: map[resourceapi.QualifiedName]resource.Quantity{"memory": resource.MustParse("40Gi")}}

	pcie := func(name, root string) resourceapi.Device {
		d := device(name, "H100", "80Gi")
		d.Attributes["pcieRoot"] = resourceapi.DeviceAttribute{StringValue: ptr.To(root)}
		return d
	}
	paired := claim("c1", exactly("gpu", 2))
	paired.Spec.Devices.Constraints = []resourceapi.DeviceConstraint{{MatchAttribute: ptr.To[resourceapi.FullyQualifiedName]("gpu.example.com/pcieRoot")}}

	incomplete := slice("n1", device("gpu-0", "H100", "80Gi"))
	incomplete.Spec.Pool.ResourceSliceCount = 2

	twoRequests := claim("c1", exactly("gpu", 1), resourceapi.DeviceRequest{Name: "gpu2", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}})

	cases := []struct {
		name      string
		slices    []*resourceapi.ResourceSlice
		claims    []*resourceapi.ResourceClaim
		want      []schedcore.Gap
		shortfall float64
	}{
		{
			name:   "a class selector that is false names the selector and its expression",
			slices: []*resourceapi.ResourceSlice{slice("n1", device("gpu-0", "A100", "40Gi"))},
			claims: []*resourceapi.ResourceClaim{claim("c1", exactly("h100", 1))},
			want: []schedcore.Gap{{
				Text:    "request gpu of claim ml/c1: needs 1 free device of class h100; n1 has 0 free, 1 not matching",
				Details: []string{"gpu.example.com/n1/gpu-0: class h100 selector #1 is false: " + h100},
			}},
			shortfall: 1,
		},
		{
			name:   "the request's own selectors are checked after the class's, in order",
			slices: []*resourceapi.ResourceSlice{twoGPUs},
			claims: []*resourceapi.ResourceClaim{claim("c1", withSelectors(exactly("gpu", 2), `device.driver == "gpu.example.com"`, big))},
			want: []schedcore.Gap{{
				Text:    "request gpu of claim ml/c1: needs 2 free devices of class gpu matching device.driver == \"gpu.example.com\" and " + big + "; n1 has 1 free, 1 not matching",
				Details: []string{"gpu.example.com/n1/gpu-0: free", "gpu.example.com/n1/gpu-1: request selector #1 is false: " + big},
			}},
			shortfall: 0.5,
		},
		{
			name:   "allocated devices name the pods they are reserved for, or the claim",
			slices: []*resourceapi.ResourceSlice{slice("n1", device("gpu-0", "H100", "80Gi"), device("gpu-1", "H100", "80Gi"), device("gpu-2", "H100", "80Gi"))},
			claims: []*resourceapi.ResourceClaim{claim("c1", exactly("gpu", 2)), allocated("trainer-0-gpu", "n1", []string{"gpu-0"}, "trainer-0"), allocated("orphan", "n1", []string{"gpu-1"})},
			want: []schedcore.Gap{{
				Text: "request gpu of claim ml/c1: needs 2 free devices of class gpu; n1 has 1 free, 2 allocated to claim ml/orphan, ml/trainer-0",
				Details: []string{
					"gpu.example.com/n1/gpu-0: allocated to ml/trainer-0",
					"gpu.example.com/n1/gpu-1: allocated to claim ml/orphan",
					"gpu.example.com/n1/gpu-2: free",
				},
			}},
			shortfall: 0.5,
		},
		{
			name:   "a taint the request does not tolerate",
			slices: []*resourceapi.ResourceSlice{tainted},
			claims: []*resourceapi.ResourceClaim{claim("c1", exactly("gpu", 2))},
			want: []schedcore.Gap{{
				Text:    "request gpu of claim ml/c1: needs 2 free devices of class gpu; n1 has 1 free, 1 tainted",
				Details: []string{"gpu.example.com/n1/gpu-0: free", "gpu.example.com/n1/gpu-1: tainted example.com/unhealthy=ecc:NoSchedule, not tolerated"},
			}},
			shortfall: 0.5,
		},
		{
			name:   "partitions whose shared counters another allocation used up",
			slices: []*resourceapi.ResourceSlice{partitions},
			claims: []*resourceapi.ResourceClaim{claim("c1", withSelectors(exactly("gpu", 1), big)), allocated("half", "n1", []string{"gpu-0-half-a"}, "half-pod")},
			want: []schedcore.Gap{{
				Text: "request gpu of claim ml/c1: needs 1 free device of class gpu matching " + big + "; n1 has 0 free, 1 out of counters, 2 not matching",
				Details: []string{
					"gpu.example.com/n1/gpu-0-full: counter memory of set gpu-0-memory used up: needs 80Gi, 40Gi left",
					"gpu.example.com/n1/gpu-0-half-a: request selector #0 is false: " + big,
					"gpu.example.com/n1/gpu-0-half-b: request selector #0 is false: " + big,
				},
			}},
			shortfall: 1,
		},
		{
			name:   "a shared device whose consumable capacity is used up",
			slices: []*resourceapi.ResourceSlice{shared},
			claims: []*resourceapi.ResourceClaim{claim("c1", capRequest), sharedUse},
			want: []schedcore.Gap{{
				Text:    "request gpu of claim ml/c1: needs 1 free device of class gpu; n1 has 0 free, 1 without the capacity",
				Details: []string{"gpu.example.com/n1/gpu-0: capacity memory used up: needs 40Gi, 20Gi of 80Gi left"},
			}},
			shortfall: 1,
		},
		{
			name:   "a matchAttribute constraint no value satisfies",
			slices: []*resourceapi.ResourceSlice{slice("n1", pcie("gpu-0", "pci0"), pcie("gpu-1", "pci1"))},
			claims: []*resourceapi.ResourceClaim{paired},
			want: []schedcore.Gap{{
				Text:    "constraint of claim ml/c1: the devices of requests gpu must have the same gpu.example.com/pcieRoot; no value of it has enough free devices on n1",
				Details: []string{"gpu.example.com/pcieRoot=pci0: 1 of 2 for gpu", "gpu.example.com/pcieRoot=pci1: 1 of 2 for gpu"},
			}},
			shortfall: 0.5,
		},
		{
			name:      "a pool whose slices are not all published",
			slices:    []*resourceapi.ResourceSlice{incomplete},
			claims:    []*resourceapi.ResourceClaim{claim("c1", exactly("gpu", 1))},
			want:      []schedcore.Gap{{Text: "pool gpu.example.com/n1 is being updated (1 of 2 slices published): none of its devices can be allocated"}, {Text: "request gpu of claim ml/c1: needs 1 free device of class gpu; n1 has no device"}},
			shortfall: 1,
		},
		{
			name:      "requests that each fit alone compete for the same device",
			slices:    []*resourceapi.ResourceSlice{slice("n1", device("gpu-0", "H100", "80Gi"))},
			claims:    []*resourceapi.ResourceClaim{twoRequests},
			want:      []schedcore.Gap{{Text: "requests gpu of claim ml/c1 (1), gpu2 of claim ml/c1 (1) need 2 devices in all; n1 has 1 free that match them"}},
			shortfall: 1,
		},
		{
			name:   "an allocated claim whose devices are on another node",
			slices: []*resourceapi.ResourceSlice{slice("n1", device("gpu-0", "H100", "80Gi")), slice("n2", device("gpu-0", "H100", "80Gi"))},
			claims: []*resourceapi.ResourceClaim{allocated("c1", "n2", []string{"gpu-0"}, "p")},
			want: []schedcore.Gap{{
				Text:    "claim ml/c1 is allocated to devices that are not available on n1 (reserved for ml/p)",
				Details: []string{"gpu.example.com/n2/gpu-0 (request gpu)"},
			}},
			shortfall: 1,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			dra := schedcore.NewDRAManager()
			dra.AddClass(gpuClass)
			dra.AddClass(h100Class)
			for _, s := range c.slices {
				dra.AddSlice(s)
			}
			for _, cl := range c.claims {
				dra.AddClaim(cl)
			}
			pod := podWith("c1")
			pod.Name, pod.UID = "p", "uid-p"
			pl, state := preFiltered(ctx, t, dra, pod)
			ni := nodeInfo("n1")
			st := pl.Filter(ctx, state, pod, ni)
			if !st.IsRejected() {
				t.Fatalf("Filter on n1 = %v, want a rejection", st)
			}
			got := pl.ExplainFilter(ctx, state, pod, ni, st)
			if got == nil {
				t.Fatal("no explanation")
			}
			if diff := cmp.Diff(c.want, got.Gaps); diff != "" {
				t.Errorf("gaps (-want +got):\n%s", diff)
			}
			if got.Shortfall != c.shortfall {
				t.Errorf("shortfall %v, want %v", got.Shortfall, c.shortfall)
			}
			if s := pl.FilterShortfall(ctx, state, pod, ni, st); s != c.shortfall {
				t.Errorf("FilterShortfall %v, want ExplainFilter's %v", s, c.shortfall)
			}
		})
	}
}

// TestExplainFilterFirstAvailable: when no choice of a firstAvailable
// request fits, each choice's gap is given; the nearest one counts.
func TestExplainFilterFirstAvailable(t *testing.T) {
	ctx := context.Background()
	dra := schedcore.NewDRAManager()
	dra.AddClass(&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}})
	dra.AddSlice(slice("n1", device("gpu-0", "H100", "80Gi"), device("gpu-1", "H100", "80Gi")))
	dra.AddClaim(allocated("other", "n1", []string{"gpu-0"}, "other"))
	dra.AddClaim(claim("c1", resourceapi.DeviceRequest{Name: "gpu", FirstAvailable: []resourceapi.DeviceSubRequest{
		{Name: "four", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 4},
		{Name: "two", DeviceClassName: "gpu", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 2},
	}}))
	pod := podWith("c1")
	pl, state := preFiltered(ctx, t, dra, pod)
	ni := nodeInfo("n1")
	st := pl.Filter(ctx, state, pod, ni)
	got := pl.ExplainFilter(ctx, state, pod, ni, st)
	details := []string{"gpu.example.com/n1/gpu-0: allocated to ml/other", "gpu.example.com/n1/gpu-1: free"}
	want := &schedcore.FilterExplanation{Shortfall: 0.5, Gaps: []schedcore.Gap{
		{Text: "request gpu/four (choice 1 of 2) of claim ml/c1: needs 4 free devices of class gpu; n1 has 1 free, 1 allocated to ml/other", Details: details},
		{Text: "request gpu/two (choice 2 of 2) of claim ml/c1: needs 2 free devices of class gpu; n1 has 1 free, 1 allocated to ml/other", Details: details},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("explanation (-want +got):\n%s", diff)
	}
}

// preFiltered returns the plugin over dra and the cycle state of a
// PreFilter of pod that succeeded.
func preFiltered(ctx context.Context, t *testing.T, dra *schedcore.DRAManager, pod *v1.Pod) (*DynamicResources, *schedcore.CycleState) {
	t.Helper()
	p, err := New(ctx, nil, schedcore.NewHandle(nil, 1, schedcore.WithDRA(dra)))
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*DynamicResources)
	state := schedcore.NewCycleState()
	if _, st := pl.PreFilter(ctx, state, pod, nil); !st.IsSuccess() {
		t.Fatalf("PreFilter: %v", st)
	}
	return pl, state
}
