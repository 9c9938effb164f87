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

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

func named(names ...string) []schedruntime.NodeExplanation {
	out := make([]schedruntime.NodeExplanation, len(names))
	for i, n := range names {
		out[i].Name = n
	}
	return out
}

// Nodes holding the same score lists share their maps, whether side by
// side or not; the same weighted list with other raw scores (or other
// lists of equal values) does not share the raw map.
func TestScoreListsShareOnlyTheSameLists(t *testing.T) {
	score := func(plugins ...string) *schedcore.NodePluginScores {
		s := &schedcore.NodePluginScores{}
		for i, p := range plugins {
			s.Scores = append(s.Scores, schedcore.PluginScore{Name: p, Score: int64(10 * (i + 1))})
			s.RawScores = append(s.RawScores, schedcore.PluginScore{Name: p, Score: int64(i + 1)})
			s.TotalScore += int64(10 * (i + 1))
		}
		return s
	}
	same := func(a, b report.ScoreMap) bool { return a.SameAs(b) }
	m := scoreLists{weights: map[string]int64{"A": 1, "B": 2, "C": 5}}
	ab := score("A", "B")
	of := func(sc *schedcore.NodePluginScores) (scores, normalized, raws report.ScoreMap, total *int64) {
		ns := m.of(sc)
		return ns.Scores, ns.NormalizedScores, ns.RawScores, ns.Total
	}
	a1, an1, ar1, t1 := of(ab)
	// The same lists with another total (a node's total is the sum of
	// its weighted scores, so schedcore never gives one; the total is
	// shared only when it is the same).
	a2, an2, ar2, t2 := of(&schedcore.NodePluginScores{Scores: ab.Scores, RawScores: ab.RawScores, TotalScore: 29})
	if !same(a1, a2) || !same(an1, an2) || !same(ar1, ar2) {
		t.Errorf("the same lists side by side got separate maps")
	}
	c, cn, cr, _ := of(score("A", "C"))
	other := score("D")
	m.of(other)
	_, an3, _, t3 := of(&schedcore.NodePluginScores{Scores: ab.Scores, RawScores: ab.RawScores, TotalScore: ab.TotalScore})
	if !same(an1, an3) {
		t.Errorf("the same lists, not side by side, got separate normalized maps")
	}
	if *t1 != 30 || *t2 != 29 || *t3 != 30 || t1 != t3 {
		t.Errorf("totals %d, %d, %d (shared %v), want 30, 29, 30 (shared)", *t1, *t2, *t3, t1 == t3)
	}
	// The same Scores list with other raw scores, right after and apart.
	rawsOf := &schedcore.NodePluginScores{Scores: ab.Scores, RawScores: []schedcore.PluginScore{{Name: "A", Score: 7}, {Name: "B", Score: 8}}}
	_, _, rr, _ := of(rawsOf)
	m.of(other)
	_, _, rr2, _ := of(rawsOf)
	// Equal values in other lists.
	b, bn, br, _ := of(score("A", "B"))
	for _, tc := range []struct {
		got  report.ScoreMap
		want map[string]int64
	}{
		{a1, map[string]int64{"A": 10, "B": 20}}, {an1, map[string]int64{"A": 10, "B": 10}}, {ar1, map[string]int64{"A": 1, "B": 2}},
		{c, map[string]int64{"A": 10, "C": 20}}, {cn, map[string]int64{"A": 10, "C": 4}}, {cr, map[string]int64{"A": 1, "C": 2}},
		{b, map[string]int64{"A": 10, "B": 20}}, {bn, map[string]int64{"A": 10, "B": 10}}, {br, map[string]int64{"A": 1, "B": 2}},
		{rr, map[string]int64{"A": 7, "B": 8}}, {rr2, map[string]int64{"A": 7, "B": 8}},
	} {
		if !reflect.DeepEqual(tc.got.Map(), tc.want) {
			t.Errorf("maps %v, want %v", tc.got.Map(), tc.want)
		}
	}
	// No scores at all: empty maps, left out of the report.
	e, en, er, _ := of(&schedcore.NodePluginScores{RawScores: []schedcore.PluginScore{}, Scores: []schedcore.PluginScore{}})
	for _, x := range []report.ScoreMap{e, en, er} {
		if !x.IsZero() || x.Map() == nil {
			t.Errorf("no scores: %v (zero %v)", x.Map(), x.IsZero())
		}
	}
}

// The map of a report's score lists goes back to the pool emptied: it
// must not keep an explanation's lists alive, nor give the next report
// another's maps.
func TestScoreListsReleaseEmptiesTheirMap(t *testing.T) {
	m := scoreLists{weights: map[string]int64{"A": 1}}
	for k := range 3 {
		m.of(&schedcore.NodePluginScores{Scores: []schedcore.PluginScore{{Name: "A", Score: int64(k)}}, RawScores: []schedcore.PluginScore{{Name: "A", Score: int64(k)}}})
	}
	held := m.byList
	if len(held) != 3 {
		t.Fatalf("%d lists in the map, want 3", len(held))
	}
	m.release()
	if len(held) != 0 || m.byList != nil {
		t.Errorf("after release: %d lists in the map given back, map kept: %v", len(held), m.byList != nil)
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
