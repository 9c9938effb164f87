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

// TestMemoTableSlotsFollowTheNodeObject: an answer kept at a list position
// is the answer of the node object it was computed for; another node at
// that position (nodes came or went), or a new object of the same node,
// gets its own answer (from the allocator, or from the memo by content),
// never the slot's. It fails when the table's slot is trusted
// without checking the node object.
func TestMemoTableSlotsFollowTheNodeObject(t *testing.T) {
	dra := schedcore.NewDRAManager()
	dra.AddClass(&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}})
	dra.AddSlice(gpuSlice("node-a", "gpu-0"))
	memo, allocated := newTestMemo(dra)
	claims := []*resourceapi.ResourceClaim{claim("wants", exactly("gpu", 1))}
	_, poolVer, items := allocated.get(false)
	in := memo.inputs(dra, poolVer, items)
	runs := 0
	fits := func(pos int, node *v1.Node) bool {
		res, err := memo.allocate(context.Background(), in, pos, node, claims, func() (string, error) { return claimSpecs(claims) },
			func(context.Context) ([]resourceapi.AllocationResult, error) {
				runs++
				if node.Name != "node-a" {
					return nil, nil
				}
				return []resourceapi.AllocationResult{{}}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		return res != nil
	}
	a := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
	b := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-b"}}
	steps := []struct {
		pos  int
		node *v1.Node
		fits bool
		runs int
	}{
		{pos: 0, node: a, fits: true, runs: 1},
		{pos: 0, node: a, fits: true, runs: 1},
		// node-b now at node-a's position: its own answer.
		{pos: 0, node: b, fits: false, runs: 2},
		// node-a elsewhere, and back: its answer by content (share.go).
		{pos: 1, node: a, fits: true, runs: 2},
		{pos: 0, node: a, fits: true, runs: 2},
		{pos: 1, node: b, fits: false, runs: 2},
		// A new object for node-a (its labels changed), whose pools are
		// looked up again.
		{pos: 0, node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a", Labels: map[string]string{"x": "y"}}}, fits: true, runs: 2},
	}
	for i, s := range steps {
		if got := fits(s.pos, s.node); got != s.fits || runs != s.runs {
			t.Errorf("step %d (%s at %d): fits %v after %d runs, want %v after %d", i, s.node.Name, s.pos, got, runs, s.fits, s.runs)
		}
	}
}

// TestMemoTablesAreBounded: tables hold a slot per list position up to the
// last node asked, so claims asked for a far position only cost slots;
// past the bound the memo starts over at the next cycle. It fails when the
// slots are not counted or not bounded.
func TestMemoTablesAreBounded(t *testing.T) {
	dra := schedcore.NewDRAManager()
	dra.AddClass(&resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{{CEL: &resourceapi.CELDeviceSelector{Expression: `device.driver == "gpu.example.com"`}}}}})
	allocated := &allocatedStates{m: dra}
	memo := newAllocationMemo()
	memo.maxSlots = 100
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "far"}}
	for i := 0; i < 3; i++ {
		claims := []*resourceapi.ResourceClaim{claim("wants", exactly("gpu", int64(i+1)))}
		_, poolVer, items := allocated.get(false)
		in := memo.inputs(dra, poolVer, items)
		if _, err := memo.allocate(context.Background(), in, 79, node, claims, func() (string, error) { return claimSpecs(claims) },
			func(context.Context) ([]resourceapi.AllocationResult, error) { return nil, nil }); err != nil {
			t.Fatal(err)
		}
		if memo.slots > memo.maxSlots+80 || len(memo.tables) > 2 {
			t.Fatalf("claims %d: %d slots in %d tables, bound %d", i, memo.slots, len(memo.tables), memo.maxSlots)
		}
	}
}

// newTestMemo is a memo over dra's state, with a compiled-CEL cache for
// its class selectors, and that state's allocations.
func newTestMemo(dra *schedcore.DRAManager) (*allocationMemo, *allocatedStates) {
	memo := newAllocationMemo()
	memo.sel = &selection{class: dra.Class, cel: cel.NewCache(8, cel.Features{})}
	return memo, &allocatedStates{m: dra}
}
