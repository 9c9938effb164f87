package noderesources

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// kube's fit_test.go names for DRA-backed extended resources.
const (
	draExtendedResourceName = "extended.resource.dra.io/something"
	draDeviceClassName      = "device-class-name"
	draDriver               = "test-driver"
)

// draClass is kube's deviceClassWithExtendResourceName.
func draClass() *resourceapi.DeviceClass {
	return &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: draDeviceClassName},
		Spec:       resourceapi.DeviceClassSpec{ExtendedResourceName: ptr.To(draExtendedResourceName)},
	}
}

// draSlice is kube's st.MakeResourceSlice(node, driver).Device(...): a slice
// named after the node, in the pool of that name.
func draSlice(node string, devices ...string) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + draDriver},
		Spec: resourceapi.ResourceSliceSpec{
			Driver:   draDriver,
			NodeName: ptr.To(node),
			Pool:     resourceapi.ResourcePool{Name: node, ResourceSliceCount: 1},
		},
	}
	for _, d := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: d})
	}
	return s
}

// draAllocatedClaim is kube's st.MakeResourceClaim().Name(name).Request(class)
// .Allocation(...) with one result for the device.
func draAllocatedClaim(name, pool, device string, shareID *types.UID) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{
			Name: "req-1", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: draDeviceClassName},
		}}}},
		Status: resourceapi.ResourceClaimStatus{Allocation: &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
			Results: []resourceapi.DeviceRequestAllocationResult{{Request: "req-1", Driver: draDriver, Pool: pool, Device: device, ShareID: shareID}},
		}}},
	}
}

// draHandle is a handle whose DRA manager holds the objects.
func draHandle(objs ...runtime.Object) *schedcore.Handle {
	m := schedcore.NewDRAManager()
	for _, o := range objs {
		switch o := o.(type) {
		case *resourceapi.DeviceClass:
			m.AddClass(o)
		case *resourceapi.ResourceSlice:
			m.AddSlice(o)
		case *resourceapi.ResourceClaim:
			m.AddClaim(o)
		default:
			panic(fmt.Sprintf("draHandle: %T", o))
		}
	}
	return schedcore.NewHandle(nil, 1, schedcore.WithDRA(m))
}

// draPod requests one of the DRA-backed extended resource (kube's
// st.MakePod().Req(map{extendedResourceDRA: "1"})).
func draPod() *v1.Pod {
	return podReq("", rl(draExtendedResourceName, "1"))
}

// kube's TestFitScore cases "test case for ScoringStrategy LeastAllocated
// with Extended resources" (with and without PreScore): node1 has three
// devices of the class, node2 two, neither lists the resource in its
// allocatable. LeastAllocated: (3-1)*100/3 = 66, (2-1)*100/2 = 50; the other
// strategies by kube's formulas over the same counts.
func TestFitScoresDRABackedExtendedResources(t *testing.T) {
	ctx := context.Background()
	only := []configv1.ResourceSpec{{Name: draExtendedResourceName, Weight: 1}}
	objs := []runtime.Object{draClass(), draSlice("node1", "device-1", "device-2", "device-3"), draSlice("node2", "device-1", "device-2")}
	nodes := []*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "node1"}}, {ObjectMeta: metav1.ObjectMeta{Name: "node2"}}}
	tests := []struct {
		name     string
		args     *configv1.NodeResourcesFitArgs
		objs     []runtime.Object
		preScore bool
		want     schedcore.NodeScoreList
	}{
		{name: "LeastAllocated counts the class's devices on each node", args: fitArgsFor(configv1.LeastAllocated, only), objs: objs, preScore: true,
			want: schedcore.NodeScoreList{{Name: "node1", Score: 66}, {Name: "node2", Score: 50}}},
		{name: "LeastAllocated counts them without PreScore too", args: fitArgsFor(configv1.LeastAllocated, only), objs: objs,
			want: schedcore.NodeScoreList{{Name: "node1", Score: 66}, {Name: "node2", Score: 50}}},
		{name: "MostAllocated counts the class's devices on each node", args: fitArgsFor(configv1.MostAllocated, only), objs: objs, preScore: true,
			want: schedcore.NodeScoreList{{Name: "node1", Score: 33}, {Name: "node2", Score: 50}}},
		{name: "RequestedToCapacityRatio counts the class's devices on each node",
			args: fitArgsFor(configv1.RequestedToCapacityRatio, only, configv1.UtilizationShapePoint{Utilization: 0, Score: 0}, configv1.UtilizationShapePoint{Utilization: 100, Score: 10}),
			objs: objs, preScore: true,
			// 1/3 -> utilization 33 -> 33; 1/2 -> 50.
			want: schedcore.NodeScoreList{{Name: "node1", Score: 33}, {Name: "node2", Score: 50}}},
		{name: "an allocated device counts as allocated", args: fitArgsFor(configv1.LeastAllocated, only),
			objs: append(append([]runtime.Object{}, objs...), draAllocatedClaim("c1", "node1", "device-2", nil)), preScore: true,
			// node1: (3-2)*100/3 = 33.
			want: schedcore.NodeScoreList{{Name: "node1", Score: 33}, {Name: "node2", Score: 50}}},
		{name: "without a DeviceClass the resource scores nothing", args: fitArgsFor(configv1.LeastAllocated, only),
			objs: []runtime.Object{draSlice("node1", "device-1", "device-2", "device-3"), draSlice("node2", "device-1", "device-2")}, preScore: true,
			want: schedcore.NodeScoreList{{Name: "node1", Score: 0}, {Name: "node2", Score: 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewFit(ctx, tc.args, draHandle(tc.objs...))
			if err != nil {
				t.Fatal(err)
			}
			got, st := scoreNodes(t, p.(*Fit), draPod(), nil, nodes, tc.preScore)
			if !st.IsSuccess() {
				t.Fatalf("PreScore: %v", st)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// kube's TestNodeResourcesBalancedAllocation cases "include DRA resource on
// a node for balanced resource allocation" (with and without PreScore):
// node1 cpu 3000/3500, memory 0/40000, DRA 0 -> 1 of 8 devices: 76; node2
// has no device of the class (unsatisfiable there): 75.
func TestBalancedAllocationScoresDRABackedExtendedResources(t *testing.T) {
	ctx := context.Background()
	args := &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{
		{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: draExtendedResourceName, Weight: 1},
	}}
	nodes := []*v1.Node{makeNode("node1", 3500, 40000, nil), makeNode("node2", 3500, 40000, nil)}
	existing := []*v1.Pod{
		podReq("node1", rl("cpu", "1000m"), rl("cpu", "2000m")),
		podReq("node2", rl("cpu", "1000m", "memory", "2000"), rl("cpu", "2000m", "memory", "3000")),
	}
	for _, preScore := range []bool{true, false} {
		t.Run(fmt.Sprintf("PreScore %v", preScore), func(t *testing.T) {
			p, err := NewBalancedAllocation(ctx, args, draHandle(draClass(), draSlice("node1", "device-1", "device-2", "device-3", "device-4", "device-5", "device-6", "device-7", "device-8")))
			if err != nil {
				t.Fatal(err)
			}
			got, st := scoreNodes(t, p.(*BalancedAllocation), draPod(), existing, nodes, preScore)
			if !st.IsSuccess() {
				t.Fatalf("PreScore: %v", st)
			}
			want := schedcore.NodeScoreList{{Name: "node1", Score: 76}, {Name: "node2", Score: 75}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

// kube's TestCalculateResourceAllocatableRequest: the allocatable and
// allocated amount of an extended resource on a node, from its device
// plugin or from the devices of the class that backs it.
func TestDRABackedResourceAllocatableAndAllocated(t *testing.T) {
	ctx := context.Background()
	const nodeName = "resource-node"
	explicit := v1.ResourceName(draExtendedResourceName)
	implicit := v1.ResourceName(resourceapi.ResourceDeviceClassPrefix + draDeviceClassName)
	share := func(s string) *types.UID { u := types.UID(s); return &u }
	perDeviceClass := draClass()
	perDeviceClass.Spec.Selectors = []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{
		Expression: `device.driver == "test-driver" && device.capacity["test-driver"].memory.compareTo(quantity("8Gi")) >= 0 && device.attributes["test-driver"].model.startsWith("SOME-")`,
	}}}
	gpu := func(name, model, memory string) resourceapi.Device {
		return resourceapi.Device{
			Name:       name,
			Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{"model": {StringValue: ptr.To(model)}},
			Capacity:   map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{"memory": {Value: resource.MustParse(memory)}},
		}
	}
	d1, d2, d3 := gpu("device-1", "SOME-XYZ", "16Gi"), gpu("device-2", "SOME-ZYX", "12Gi"), gpu("device-3", "SOME-XZY", "24Gi")
	d1.NodeName, d2.NodeName = ptr.To(nodeName), ptr.To("other-node")
	d3.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"us-east-1a"}},
	}}}}
	perDeviceSlice := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "per-device-slice"},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: draDriver, Pool: resourceapi.ResourcePool{Name: "per-device-pool", ResourceSliceCount: 1},
			PerDeviceNodeSelection: ptr.To(true), Devices: []resourceapi.Device{d1, d2, d3},
		},
	}
	plainNode := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName}}
	tests := []struct {
		name                   string
		node                   *v1.Node
		resource               v1.ResourceName
		objs                   []runtime.Object
		allocatable, allocated int64
	}{
		{name: "a device plugin's resource is the node's allocatable", node: makeNode(nodeName, 0, 0, map[string]int64{draExtendedResourceName: 4}), resource: explicit,
			objs: []runtime.Object{draClass(), draSlice(nodeName, "device-1")}, allocatable: 4},
		{name: "an explicit extendedResourceName counts the class's devices", node: plainNode, resource: explicit,
			objs: []runtime.Object{draClass(), draSlice(nodeName, "device-1")}, allocatable: 1},
		{name: "the implicit deviceclass.resource.kubernetes.io name counts them too", node: plainNode, resource: implicit,
			objs: []runtime.Object{&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: draDeviceClassName}}, draSlice(nodeName, "device-1")}, allocatable: 1},
		{name: "no slices, no devices", node: plainNode, resource: explicit, objs: []runtime.Object{draClass()}},
		{name: "an allocated device counts as allocated", node: plainNode, resource: explicit,
			objs:        []runtime.Object{draClass(), draSlice(nodeName, "device-1", "device-2"), draAllocatedClaim("test-claim", nodeName, "device-1", nil)},
			allocatable: 2, allocated: 1},
		{name: "a shared allocation counts the device as allocated", node: plainNode, resource: explicit,
			objs:        []runtime.Object{draClass(), draSlice(nodeName, "device-1", "device-2"), draAllocatedClaim("test-claim", nodeName, "device-1", share("share-123"))},
			allocatable: 2, allocated: 1},
		{name: "dedicated and shared allocations both count", node: plainNode, resource: explicit,
			objs: []runtime.Object{draClass(), draSlice(nodeName, "device-1", "device-2", "device-3"),
				draAllocatedClaim("test-claim-1", nodeName, "device-1", nil), draAllocatedClaim("test-claim-2", nodeName, "device-2", share("share-456"))},
			allocatable: 3, allocated: 2},
		{name: "per-device node selection: the node's own device and one whose selector matches", resource: explicit,
			node:        &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, Labels: map[string]string{"zone": "us-east-1a"}}},
			objs:        []runtime.Object{perDeviceClass, perDeviceSlice, draAllocatedClaim("test-claim", "per-device-pool", "device-1", nil)},
			allocatable: 2, allocated: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scorer := newScorer(leastAllocated, []configv1.ResourceSpec{{Name: string(tc.resource), Weight: 1}}, false, resourcehelper.PodResourcesOptions{})
			scorer.dra = newDRAScoring(draHandle(tc.objs...))
			snap := schedcore.NewSnapshot(nil, []*v1.Node{tc.node})
			totals := scorer.draTotals(ctx, []int64{1}, snap.List())
			ni, _ := snap.Get(nodeName)
			requested, allocated, allocatable := make([]int64, 1), make([]int64, 1), make([]int64, 1)
			scorer.nodeVectors(ni, []int64{1}, totals, requested, allocated, allocatable)
			if diff := cmp.Diff([2]int64{tc.allocatable, tc.allocated}, [2]int64{allocatable[0], allocated[0]}); diff != "" {
				t.Errorf("allocatable, allocated (-want +got):\n%s", diff)
			}
		})
	}
}

// The framework remembers Fit's and BalancedAllocation's scores per
// ScoreKey and node generation; a claim allocated elsewhere changes no
// node, so the key must change with the DRA allocations counted.
func TestScoreKeyChangesWithDRAAllocations(t *testing.T) {
	ctx := context.Background()
	only := []configv1.ResourceSpec{{Name: draExtendedResourceName, Weight: 1}}
	h := draHandle(draClass(), draSlice("node1", "device-1", "device-2", "device-3"))
	fit, err := NewFit(ctx, fitArgsFor(configv1.LeastAllocated, only), h)
	if err != nil {
		t.Fatal(err)
	}
	ba, err := NewBalancedAllocation(ctx, &configv1.NodeResourcesBalancedAllocationArgs{Resources: append(append([]configv1.ResourceSpec{}, defaultResources...), only...)}, h)
	if err != nil {
		t.Fatal(err)
	}
	snap := schedcore.NewSnapshot(nil, []*v1.Node{makeNode("node1", 4000, 1<<30, nil)})
	ni, _ := snap.Get("node1")
	pod := podReq("", rl("cpu", "2", "memory", "512Mi", draExtendedResourceName, "1"))
	for _, pl := range []interface {
		schedcore.PreScorePlugin
		schedcore.ScorePlugin
		schedcore.NodeLocalScorer
	}{fit.(*Fit), ba.(*BalancedAllocation)} {
		t.Run(pl.Name(), func(t *testing.T) {
			keyAndScore := func() (string, int64) {
				state := schedcore.NewCycleState()
				if st := pl.PreScore(ctx, state, pod, snap.List()); !st.IsSuccess() {
					t.Fatalf("PreScore: %v", st)
				}
				var k schedcore.MemoKey
				if !pl.ScoreKey(state, pod, &k) {
					t.Fatal("ScoreKey: false")
				}
				s, st := pl.Score(ctx, state, pod, ni)
				if !st.IsSuccess() {
					t.Fatalf("Score: %v", st)
				}
				return k.Key(), s
			}
			k1, s1 := keyAndScore()
			c := draAllocatedClaim("taken-"+pl.Name(), "node1", "device-1", nil)
			h.DRA().AddClaim(c)
			defer h.DRA().DeleteClaim(c)
			k2, s2 := keyAndScore()
			if s1 == s2 {
				t.Fatalf("score %d before and after a device was allocated: the test needs them to differ", s1)
			}
			if k1 == k2 {
				t.Errorf("ScoreKey is the same before and after a device was allocated (scores %d, %d)", s1, s2)
			}
		})
	}
}

// Score reads PreScore's counts: a pod requesting a DRA-backed resource
// allocates nothing per node either.
func TestScoreOfDRABackedResourceDoesNotAllocate(t *testing.T) {
	ctx := context.Background()
	h := draHandle(draClass(), draSlice("node1", "device-1", "device-2"))
	pl, err := NewFit(ctx, fitArgsFor(configv1.LeastAllocated, []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: draExtendedResourceName, Weight: 1}}), h)
	if err != nil {
		t.Fatal(err)
	}
	snap := schedcore.NewSnapshot(nil, []*v1.Node{makeNode("node1", 4000, 1<<30, nil)})
	ni, _ := snap.Get("node1")
	pod := podReq("", rl("cpu", "1", draExtendedResourceName, "1"))
	state := schedcore.NewCycleState()
	pl.(*Fit).PreScore(ctx, state, pod, snap.List())
	if s, _ := pl.(*Fit).Score(ctx, state, pod, ni); s != (75+50)/2 {
		t.Fatalf("score %d, want %d (cpu 75, devices 50)", s, (75+50)/2)
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = pl.(*Fit).Score(ctx, state, pod, ni) }); allocs != 0 {
		t.Errorf("Score allocated %v times per run, want 0", allocs)
	}
}
