package explain

import (
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func named(names ...string) []schedcore.NodeExplanation {
	out := make([]schedcore.NodeExplanation, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	return out
}

// Nodes with equal scores share their maps, whether side by side or not,
// and nodes holding the same score lists do; equal values from other
// plugins, or the same weighted list with other raw scores, do not.
func TestScoreMapsShareOnlyEqualScores(t *testing.T) {
	score := func(plugins ...string) *schedcore.NodePluginScores {
		s := &schedcore.NodePluginScores{}
		for i, p := range plugins {
			s.Scores = append(s.Scores, schedcore.PluginScore{Name: p, Score: int64(10 * (i + 1))})
			s.RawScores = append(s.RawScores, schedcore.PluginScore{Name: p, Score: int64(i + 1)})
			s.TotalScore += int64(10 * (i + 1))
		}
		return s
	}
	m := scoreMaps{weights: map[string]int64{"A": 1, "B": 2, "C": 5}}
	a1, an1, ar1 := m.of(score("A", "B"))
	a2, _, _ := m.of(score("A", "B"))
	if reflect.ValueOf(a1).Pointer() != reflect.ValueOf(a2).Pointer() {
		t.Errorf("equal scores got separate maps")
	}
	c, cn, cr := m.of(score("A", "C"))
	// Not right after the node of equal scores: found by their hash.
	other := score("D")
	m.of(other)
	a3, _, _ := m.of(score("A", "B"))
	if reflect.ValueOf(a1).Pointer() != reflect.ValueOf(a3).Pointer() {
		t.Errorf("equal scores, not side by side, got separate maps")
	}
	m.of(other)
	c2, _, _ := m.of(score("A", "C"))
	if reflect.ValueOf(c).Pointer() != reflect.ValueOf(c2).Pointer() {
		t.Errorf("equal scores, not side by side, got separate maps")
	}
	m.of(other)
	b, bn, br := m.of(score("B", "C")) // the values of A,B and A,C: the same hash
	// The same Scores list with other raw scores (another list).
	shared := score("A", "B")
	m.of(shared)
	m.of(other)
	raws := &schedcore.NodePluginScores{Scores: shared.Scores, RawScores: []schedcore.PluginScore{{Name: "A", Score: 7}, {Name: "B", Score: 8}}}
	_, _, rr := m.of(raws)
	// The very same lists: the same maps.
	m.of(other)
	same, _, _ := m.of(&schedcore.NodePluginScores{Scores: shared.Scores, RawScores: shared.RawScores})
	if reflect.ValueOf(a1).Pointer() != reflect.ValueOf(same).Pointer() {
		t.Errorf("the same lists got separate maps")
	}
	for _, tc := range []struct {
		got, want map[string]int64
	}{
		{a1, map[string]int64{"A": 10, "B": 20}}, {an1, map[string]int64{"A": 10, "B": 10}}, {ar1, map[string]int64{"A": 1, "B": 2}},
		{c, map[string]int64{"A": 10, "C": 20}}, {cn, map[string]int64{"A": 10, "C": 4}}, {cr, map[string]int64{"A": 1, "C": 2}},
		{b, map[string]int64{"B": 10, "C": 20}}, {bn, map[string]int64{"B": 5, "C": 4}}, {br, map[string]int64{"B": 1, "C": 2}},
		{rr, map[string]int64{"A": 7, "B": 8}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("maps %v, want %v", tc.got, tc.want)
		}
	}
}

// nearestNodes keeps only the best few while it walks the rejected nodes;
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
		ex := &schedcore.Explanation{Pod: &v1.Pod{}}
		type ref struct {
			name                 string
			failures, unresolved int
			shortfall            float64
			cpu, mem             int64
		}
		var refs []ref
		for _, ni := range snap.List() {
			ne := schedcore.NodeExplanation{Name: ni.Name(), Feasible: rng.Intn(5) == 0}
			r := ref{name: ni.Name(), cpu: ni.Allocatable.MilliCPU, mem: ni.Allocatable.Memory}
			if !ne.Feasible {
				for k := rng.Intn(3) + 1; k > 0; k-- {
					code := schedcore.Unschedulable
					if rng.Intn(2) == 0 {
						code = schedcore.UnschedulableAndUnresolvable
						r.unresolved++
					}
					v := schedcore.FilterVerdict{Plugin: "P", Status: schedcore.NewStatus(code, "no"), Shortfall: float64(rng.Intn(4)+1) / 4}
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
		rep, order := convert(ex)
		for _, n := range []int{1, 3, 7} {
			want := []string{}
			for i := 0; i < n && i < len(refs); i++ {
				want = append(want, refs[i].name)
			}
			if got := nearestNodes(rep.Nodes, order, ex, snap, n); !reflect.DeepEqual(got, want) {
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
