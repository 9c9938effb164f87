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

// holdingDevices is a claim allocated devices of a pool, reserved for a
// pod.
func holdingDevices(name, driver, pool string, devices ...string) *resourceapi.ResourceClaim {
	c := claim(name, exactly("gpu", int64(len(devices))))
	c.Status.Allocation = &resourceapi.AllocationResult{}
	for _, d := range devices {
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
			resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: driver, Pool: pool, Device: d})
	}
	c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: name + "-pod", UID: types.UID("uid-" + name + "-pod")}}
	return c
}

// TestFilterShortfallSharedByAlikeNodes: nodes with the same devices and
// the same ones taken share one shortfall; each node's shortfall is
// ExplainFilter's, computed alone. The cases name the validity checks of
// the sharing: it fails when the signature leaves out what is taken in a
// pool the claims can use (node-b would get node-a's answer), or the node
// of a pool whose devices choose their nodes (node-f would get node-e's).
func TestFilterShortfallSharedByAlikeNodes(t *testing.T) {
	ctx := context.Background()
	dra := schedcore.NewDRAManager()
	dra.AddClass(gpuClass())
	nics := func(node string) *resourceapi.ResourceSlice {
		s := gpuSlice(node, "nic-0", "nic-1")
		s.Name, s.Spec.Driver = node+"-nics", "nic.example.com"
		return s
	}
	for _, n := range []string{"node-a", "node-b", "node-c", "node-d"} {
		dra.AddSlice(gpuSlice(n, "gpu-0", "gpu-1", "gpu-2"))
		dra.AddSlice(nics(n))
	}
	// node-e and node-f see one pool whose devices choose their nodes.
	perDevice := gpuSlice("", "gpu-0", "gpu-1", "gpu-2")
	perDevice.Name, perDevice.Spec.NodeName, perDevice.Spec.Pool.Name, perDevice.Spec.PerDeviceNodeSelection = "rack-gpus", nil, "rack", ptr.To(true)
	for i, n := range []string{"node-e", "node-f", "node-f"} {
		perDevice.Spec.Devices[i].NodeName = ptr.To(n)
	}
	dra.AddSlice(perDevice)
	// node-b: a GPU taken; node-c: two; node-d: a NIC only, which the
	// claim cannot use.
	dra.AddClaim(holdingDevices("b", "gpu.example.com", "node-b", "gpu-0"))
	dra.AddClaim(holdingDevices("c", "gpu.example.com", "node-c", "gpu-0", "gpu-1"))
	dra.AddClaim(holdingDevices("d", "nic.example.com", "node-d", "nic-0"))
	dra.AddClaim(claim("c1", exactly("gpu", 4)))
	pod := podWith("c1")
	pl, state := preFiltered(ctx, t, dra, pod)
	want := map[string]float64{"node-a": 0.25, "node-b": 0.5, "node-c": 0.75, "node-d": 0.25, "node-e": 0.75, "node-f": 0.5}
	// node-a twice: the second time from what was kept.
	for _, n := range []string{"node-a", "node-b", "node-c", "node-d", "node-e", "node-f", "node-a"} {
		ni := nodeInfo(n)
		st := pl.Filter(ctx, state, pod, ni)
		if !st.IsRejected() {
			t.Fatalf("Filter on %s = %v, want a rejection", n, st)
		}
		alone := pl.ExplainFilter(ctx, state, pod, ni, st)
		if alone == nil || alone.Shortfall != want[n] {
			t.Fatalf("%s: ExplainFilter %+v, want shortfall %v", n, alone, want[n])
		}
		if got := pl.FilterShortfall(ctx, state, pod, ni, st); got != want[n] {
			t.Errorf("%s: FilterShortfall %v, want %v", n, got, want[n])
		}
	}
	// node-a and node-d share one; node-b, node-c, node-e and node-f have
	// their own.
	if n := len(pl.memo.shortfalls); n != 5 {
		t.Errorf("%d shortfalls kept, want 5", n)
	}
}

// TestSharedShortfallKeptInItsEpochOnly: a shortfall computed under a key
// of the memo's ids is not kept once the memo started over (its ids then
// name other signatures). It fails when keepShortfall does not check the
// epoch.
func TestSharedShortfallKeptInItsEpochOnly(t *testing.T) {
	ctx := context.Background()
	dra := schedcore.NewDRAManager()
	dra.AddClass(gpuClass())
	dra.AddSlice(gpuSlice("node-a", "gpu-0"))
	memo, allocated := newTestMemo(dra)
	_, poolVer, items := allocated.get(false)
	in := memo.inputs(dra, poolVer, items)
	claims := []*resourceapi.ResourceClaim{claim("wants", exactly("gpu", 2))}
	spec, err := claimSpecs(claims)
	if err != nil {
		t.Fatal(err)
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	k, _, kept, ok := memo.shortfall(ctx, in, -1, node, claims, spec)
	if !ok || kept {
		t.Fatalf("shortfall: ok %v, kept %v; want a key and nothing kept", ok, kept)
	}
	memo.mu.Lock()
	memo.resetLocked(in.objRev + 1)
	memo.mu.Unlock()
	memo.keepShortfall(k, 0.5)
	if len(memo.shortfalls) != 0 {
		t.Errorf("a shortfall of the epoch before the reset was kept: %v", memo.shortfalls)
	}
}

// TestPrepareChangesNoAnswer: a plugin prepared on the snapshot (the
// allocated state, the allocator, the memo's slices and nodes, the
// explanations' index built before the first cycle) rejects the same
// nodes with the same messages and shortfalls as one that was not, and
// its first cycle finds the nodes' pools already gathered.
func TestPrepareChangesNoAnswer(t *testing.T) {
	ctx := context.Background()
	build := func(prepare bool) (*DynamicResources, *schedcore.Snapshot) {
		dra := schedcore.NewDRAManager()
		dra.AddClass(gpuClass())
		var nodes []*v1.Node
		for _, n := range []string{"node-a", "node-b", "node-c"} {
			dra.AddSlice(gpuSlice(n, "gpu-0", "gpu-1"))
			nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"zone": "z1"}}})
		}
		zonal := gpuSlice("", "fpga-0")
		zonal.Name, zonal.Spec.NodeName, zonal.Spec.Pool.Name = "z1-fpgas", nil, "z1"
		zonal.Spec.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"z1"}}}}}}
		dra.AddSlice(zonal)
		dra.AddClaim(holdingDevices("b", "gpu.example.com", "node-b", "gpu-0"))
		dra.AddClaim(claim("c1", exactly("gpu", 3)))
		p, err := New(ctx, nil, schedcore.NewHandle(nil, 1, schedcore.WithDRA(dra)))
		if err != nil {
			t.Fatal(err)
		}
		pl := p.(*DynamicResources)
		snap := schedcore.NewSnapshot(nil, nodes)
		if prepare {
			pl.Prepare(ctx, snap)
			if n := len(pl.memo.nodes); n != len(nodes) {
				t.Errorf("prepared: the pools of %d nodes gathered, want %d", n, len(nodes))
			}
		}
		return pl, snap
	}
	type answer struct {
		msg       string
		shortfall float64
	}
	answers := func(prepare bool) []answer {
		pl, snap := build(prepare)
		pod := podWith("c1")
		state := schedcore.NewCycleState()
		if _, st := pl.PreFilter(ctx, state, pod, nil); !st.IsSuccess() {
			t.Fatalf("PreFilter: %v", st)
		}
		var out []answer
		for _, ni := range snap.List() {
			st := pl.Filter(ctx, state, pod, ni)
			a := answer{msg: st.Message()}
			if st.IsRejected() {
				a.shortfall = pl.FilterShortfall(ctx, state, pod, ni, st)
			}
			out = append(out, a)
		}
		return out
	}
	plain, prepared := answers(false), answers(true)
	if len(plain) != 3 {
		t.Fatalf("%d answers, want 3", len(plain))
	}
	for i := range plain {
		if plain[i] != prepared[i] {
			t.Errorf("node %d: prepared %+v, not prepared %+v", i, prepared[i], plain[i])
		}
	}
}
