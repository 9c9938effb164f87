package dynamicresources

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestMemoIgnoresPoolsTheClaimsCannotUse: an allocation in a pool none of
// whose devices the claims can select (another driver, or a selector that
// is false on every device) keeps the memo's answer; one in a pool the
// claims can use, or one where a selector cannot be evaluated, runs the
// allocator again. It fails when the relevance check is dropped (every
// pool then counts as irrelevant, or as relevant) or when a failing
// selector counts as false.
func TestMemoIgnoresPoolsTheClaimsCannotUse(t *testing.T) {
	sel := func(e string) []resourceapi.DeviceSelector {
		return []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: e}}}
	}
	classes := []*resourceapi.DeviceClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{Selectors: sel(`device.driver == "gpu.example.com"`)}},
		// Fails on devices without the attribute: it may select them.
		{ObjectMeta: metav1.ObjectMeta{Name: "by-model"}, Spec: resourceapi.DeviceClassSpec{Selectors: sel(`device.attributes["gpu.example.com"].model == "L4"`)}},
	}
	nicSlice := &resourceapi.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: "node-a-nics"}, Spec: resourceapi.ResourceSliceSpec{
		Driver: "nic.example.com", NodeName: ptr.To("node-a"), Pool: resourceapi.ResourcePool{Name: "node-a", Generation: 1, ResourceSliceCount: 1},
		Devices: []resourceapi.Device{{Name: "nic-0"}, {Name: "nic-1"}}}}
	holding := func(name, driver, device string) *resourceapi.ResourceClaim {
		c := claim(name, exactly("gpu", 1))
		c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: driver, Pool: "node-a", Device: device}}}}
		return c
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	cases := []struct {
		name  string
		class string
		// taken is allocated after the first run; rerun: whether the
		// allocator runs again.
		taken *resourceapi.ResourceClaim
		rerun bool
	}{
		{name: "another driver's device", class: "gpu", taken: holding("nic", "nic.example.com", "nic-0")},
		{name: "a device the claims can use", class: "gpu", taken: holding("gpu", "gpu.example.com", "gpu-1"), rerun: true},
		{name: "a selector that fails on the device", class: "by-model", taken: holding("nic", "nic.example.com", "nic-0"), rerun: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dra := schedcore.NewDRAManager()
			for _, c := range classes {
				dra.AddClass(c)
			}
			dra.AddSlice(gpuSlice("node-a", "gpu-0", "gpu-1"))
			dra.AddSlice(nicSlice)
			memo, allocated := newTestMemo(dra)
			claims := []*resourceapi.ResourceClaim{claim("wants", exactly(tc.class, 1))}
			runs := 0
			place := func() {
				_, poolVer, items := allocated.get(false)
				in := memo.inputs(dra, poolVer, items)
				_, err := memo.allocate(context.Background(), in, -1, node, claims, func() (string, error) { return claimSpecs(claims) },
					func(context.Context) ([]resourceapi.AllocationResult, error) {
						runs++
						// The answer holds the device taken later: an
						// answer without it would stay (taken.go).
						return []resourceapi.AllocationResult{*tc.taken.Status.Allocation.DeepCopy()}, nil
					})
				if err != nil {
					t.Fatal(err)
				}
			}
			place()
			place()
			if runs != 1 {
				t.Fatalf("nothing changed: %d runs, want 1", runs)
			}
			dra.AddClaim(tc.taken)
			place()
			if want := map[bool]int{false: 1, true: 2}[tc.rerun]; runs != want {
				t.Errorf("after %s/%s was allocated: %d runs, want %d", tc.taken.Status.Allocation.Devices.Results[0].Driver, tc.taken.Status.Allocation.Devices.Results[0].Device, runs, want)
			}
		})
	}
}

// TestMemoSharesSuccessesUnderNodeNames: a success on node-a is handed to
// node-b, whose pool has the same devices and nothing taken, or only
// devices the answer does not use (taken.go), with node-b's pool and node
// name; a node where the answer's device is taken, or with two pools of
// one driver (whose order could differ), runs the allocator. It fails when the
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
		// node-b is node-a with gpu-1 taken, which node-a's answer does
		// not use (taken.go).
		{name: "another device taken", slices: []*resourceapi.ResourceSlice{gpuSlice("node-a", "gpu-0", "gpu-1"), gpuSlice("node-b", "gpu-0", "gpu-1")},
			taken: holding("node-b", "gpu-1"), shared: true},
		{name: "the answer's device taken", slices: []*resourceapi.ResourceSlice{gpuSlice("node-a", "gpu-0", "gpu-1"), gpuSlice("node-b", "gpu-0", "gpu-1")},
			taken: holding("node-b", "gpu-0")},
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
			memo, allocated := newTestMemo(dra)
			claims := []*resourceapi.ResourceClaim{claim("wants", exactly("gpu", 1))}
			_, poolVer, items := allocated.get(false)
			in := memo.inputs(dra, poolVer, items)
			runs := 0
			place := memoPlacer(t, memo, in, claims, func(node string) []resourceapi.AllocationResult {
				runs++
				pool := node
				if tc.pool != "" {
					pool = tc.pool
				}
				return gpuOnNode(node, pool, "gpu-0")
			})
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

// TestReserveCopiesTheMemosResults: pods whose Filter got the same answer
// from the memo each reserve their own copy of it, so that one claim's
// allocation is never another's (nor the memo's). It fails when Reserve
// hands out the memo's results without copying them.
func TestReserveCopiesTheMemosResults(t *testing.T) {
	ctx := context.Background()
	dra := schedcore.NewDRAManager()
	dra.AddClass(&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}})
	dra.AddSlice(gpuSlice("gpu-node", "gpu-0", "gpu-1"))
	p, err := New(ctx, nil, schedcore.NewHandle(nil, 1, schedcore.WithDRA(dra)))
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*DynamicResources)
	var allocations []*resourceapi.AllocationResult
	var states []*schedcore.CycleState
	var pods []*v1.Pod
	// One node object: the memo keeps answers for it.
	ni := nodeInfo("gpu-node")
	names := []string{"c1", "c2", "c3"}
	for _, name := range names {
		dra.AddClaim(claim(name, exactly("gpu", 1)))
	}
	for _, name := range names {
		pod := podWith(name)
		pod.Name, pod.UID = "pod-"+name, types.UID("uid-pod-"+name)
		state := schedcore.NewCycleState()
		if _, st := pl.PreFilter(ctx, state, pod, nil); !st.IsSuccess() {
			t.Fatalf("PreFilter(%s) = %v", name, st)
		}
		if st := pl.Filter(ctx, state, pod, ni); !st.IsSuccess() {
			t.Fatalf("Filter(%s) = %v", name, st)
		}
		states, pods = append(states, state), append(pods, pod)
	}
	for i, state := range states {
		if st := pl.Reserve(ctx, state, pods[i], "gpu-node"); !st.IsSuccess() {
			t.Fatalf("Reserve(%s) = %v", pods[i].Name, st)
		}
		s, err := getStateData(state)
		if err != nil {
			t.Fatal(err)
		}
		allocations = append(allocations, s.informationsForClaim[0].allocation)
	}
	for i := range allocations {
		for j := i + 1; j < len(allocations); j++ {
			if allocations[i] == allocations[j] {
				t.Errorf("%s and %s reserved the same allocation object", pods[i].Name, pods[j].Name)
			}
		}
	}
}

// TestMemoFailureByContentFollowsTheNode: a node that gets another node's
// failure (same devices, same ones taken) keeps it as its own entry, and
// the entry goes when a device of the node is freed: the allocator runs
// again and succeeds. It fails when such an entry is kept regardless of
// the node's pool versions.
func TestMemoFailureByContentFollowsTheNode(t *testing.T) {
	dra := schedcore.NewDRAManager()
	dra.AddClass(&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}})
	holders := map[string]*resourceapi.ResourceClaim{}
	for _, n := range []string{"node-a", "node-b"} {
		dra.AddSlice(gpuSlice(n, "gpu-0", "gpu-1"))
		c := claim("holder-"+n, exactly("gpu", 1))
		c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: "gpu.example.com", Pool: n, Device: "gpu-0"}}}}
		dra.AddClaim(c)
		holders[n] = c
	}
	memo, allocated := newTestMemo(dra)
	claims := []*resourceapi.ResourceClaim{claim("wants", exactly("gpu", 2))}
	nodes := map[string]*v1.Node{"node-a": {ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}, "node-b": {ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}}
	runs := 0
	place := func(node string) bool {
		state, poolVer, items := allocated.get(false)
		in := memo.inputs(dra, poolVer, items)
		res, err := memo.allocate(context.Background(), in, -1, nodes[node], claims, func() (string, error) { return claimSpecs(claims) },
			func(context.Context) ([]resourceapi.AllocationResult, error) {
				runs++
				// Two free GPUs on the node, or nothing.
				for _, d := range []string{"gpu-0", "gpu-1"} {
					if state.AllocatedDevices.Has(structured.MakeDeviceID("gpu.example.com", node, d)) {
						return nil, nil
					}
				}
				return []resourceapi.AllocationResult{{}}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		return res != nil
	}
	if place("node-a") || place("node-b") || place("node-b") {
		t.Fatal("a node with one free GPU fits two")
	}
	if runs != 1 {
		t.Fatalf("%d allocator runs for two nodes with the same devices taken, want 1", runs)
	}
	dra.DeleteClaim(holders["node-b"])
	if !place("node-b") {
		t.Errorf("node-b with its GPUs free: the memo kept its failure")
	}
	if runs != 2 {
		t.Errorf("%d allocator runs, want 2", runs)
	}
}

// gpuOnNode is an allocator's answer: device of pool for the "gpu"
// request, on node.
func gpuOnNode(node, pool, device string) []resourceapi.AllocationResult {
	return []resourceapi.AllocationResult{{
		Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{
			{Request: "gpu", Driver: "gpu.example.com", Pool: pool, Device: device}}},
		NodeSelector: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
			{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}}},
	}}
}

// memoPlacer returns a function that asks the memo for the claims' answer
// on a node, the allocator answering with answer(node).
func memoPlacer(t *testing.T, memo *allocationMemo, in *memoInputs, claims []*resourceapi.ResourceClaim, answer func(node string) []resourceapi.AllocationResult) func(node string) []resourceapi.AllocationResult {
	return func(node string) []resourceapi.AllocationResult {
		t.Helper()
		res, err := memo.allocate(context.Background(), in, -1, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, claims,
			func() (string, error) { return claimSpecs(claims) },
			func(context.Context) ([]resourceapi.AllocationResult, error) { return answer(node), nil })
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
}
