package nearest

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// Nodes keeps only the best few while it walks the rejected nodes;
// it must pick what sorting every rejected node by the same order picks.
func TestNearestNodesPicksWhatAFullSortPicks(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := 0; round < 30; round++ {
		var nodes []*v1.Node
		for i := 0; i < 40; i++ {
			nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%02d", rng.Intn(1000)*100+i)},
				Status: v1.NodeStatus{Allocatable: v1.ResourceList{
					v1.ResourceCPU:    *resource.NewMilliQuantity(int64(1000*rng.Intn(3)), resource.DecimalSI),
					v1.ResourceMemory: *resource.NewQuantity(int64(rng.Intn(3)), resource.BinarySI),
				}}})
		}
		snap := schedcore.NewSnapshot(nil, nodes)
		ex := &schedruntime.Explanation{Pod: &v1.Pod{}}
		type ref struct {
			name                 string
			failures, unresolved int
			shortfall            float64
			cpu, mem             int64
		}
		var refs []ref
		for _, ni := range snap.List() {
			ne := schedruntime.NodeExplanation{Name: ni.Name(), Feasible: rng.Intn(5) == 0}
			r := ref{name: ni.Name(), cpu: ni.Allocatable.MilliCPU, mem: ni.Allocatable.Memory}
			if !ne.Feasible {
				for k := rng.Intn(3) + 1; k > 0; k-- {
					code := schedcore.Unschedulable
					if rng.Intn(2) == 0 {
						code = schedcore.UnschedulableAndUnresolvable
						r.unresolved++
					}
					v := schedruntime.FilterVerdict{Plugin: "P", Status: schedcore.NewStatus(code, "no"), Shortfall: float64(rng.Intn(4)+1) / 4}
					r.shortfall += v.Shortfall
					ne.Failures = append(ne.Failures, v)
				}
				r.failures = len(ne.Failures)
				refs = append(refs, r)
			}
			ex.Nodes = append(ex.Nodes, ne)
		}
		sort.Slice(refs, func(i, j int) bool {
			a, b := refs[i], refs[j]
			switch {
			case a.failures != b.failures:
				return a.failures < b.failures
			case a.unresolved != b.unresolved:
				return a.unresolved < b.unresolved
			case a.shortfall != b.shortfall:
				return a.shortfall < b.shortfall
			case a.cpu != b.cpu:
				return a.cpu > b.cpu
			case a.mem != b.mem:
				return a.mem > b.mem
			}
			return a.name < b.name
		})
		rep, order := report.ExplanationOf(ex)
		for _, n := range []int{1, 3, 7} {
			want := []string{}
			for i := 0; i < n && i < len(refs); i++ {
				want = append(want, refs[i].name)
			}
			if got := Nodes(rep.Nodes, order, ex, snap, n); !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, %d nearest: %v, want %v", round, n, got, want)
			}
		}
	}
}

// nodeInfo takes the node at the given list position only when it is the
// named one.
func TestNodeInfoChecksThePosition(t *testing.T) {
	snap := schedcore.NewSnapshot(nil, []*v1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}},
	})
	for i := range snap.List() {
		for _, name := range []string{"a", "b"} {
			if ni := nodeInfo(snap, int32(i), name); ni == nil || ni.Name() != name {
				t.Errorf("nodeInfo(%d, %s) = %v", i, name, ni)
			}
		}
	}
	if ni := nodeInfo(snap, 5, "c"); ni != nil {
		t.Errorf("nodeInfo(5, c) = %v, want none", ni)
	}
}
