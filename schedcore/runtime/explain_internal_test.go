package runtime

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"sort"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func explainTestSnapshot(t *testing.T, n int) *schedcore.Snapshot {
	t.Helper()
	var nodes []*v1.Node
	for i := 0; i < n; i++ {
		nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%02d", i),
			Labels: map[string]string{v1.LabelTopologyZone: fmt.Sprintf("z%d", i%3)}}})
	}
	return schedcore.NewSnapshot(nil, nodes)
}

// listPosition and positions.of trust the position a NodeInfo keeps only
// when the list holds that node there: a stale position (here, every node
// claiming the first place) must still find the right node.
func TestListPositionChecksTheKeptPosition(t *testing.T) {
	snap := explainTestSnapshot(t, 12)
	list := snap.List()
	for i, ni := range list {
		if got := listPosition(snap, list, ni.Name()); got != i {
			t.Fatalf("listPosition(%s) = %d, want %d", ni.Name(), got, i)
		}
	}
	// In a list the kept positions do not index (the snapshot's, reversed),
	// the kept position is checked and the list searched.
	reversed := slices.Clone(list)
	slices.Reverse(reversed)
	for i, ni := range reversed {
		if got := listPosition(snap, reversed, ni.Name()); got != i {
			t.Errorf("with positions of another list, listPosition(%s) = %d, want %d", ni.Name(), got, i)
		}
	}
	if got := listPosition(snap, list, "nope"); got != -1 {
		t.Errorf("listPosition(nope) = %d, want -1", got)
	}
	// positions.of: names in list order hit the hint; the rest (reversed,
	// shuffled, unknown) must not take the hint's node.
	names := make([]string, 0, len(list))
	for _, ni := range list {
		names = append(names, ni.Name())
	}
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 20; round++ {
		order := rng.Perm(len(names))
		if round == 0 {
			for i := range order {
				order[i] = i
			}
		}
		pos := newPositions(snap, list)
		for _, i := range order {
			if got := pos.of(names[i]); got != i {
				t.Fatalf("round %d: positions.of(%s) = %d, want %d", round, names[i], got, i)
			}
		}
		if got := pos.of("nope"); got != -1 {
			t.Fatalf("positions.of(nope) = %d, want -1", got)
		}
	}
}

// positions.of on names asked for in list order with nodes skipped between
// them (the feasible nodes, or the rejected ones), fewer and more than it
// scans ahead, and with a name out of order now and then: each must be
// found at its own position.
func TestPositionsOfSkipsAhead(t *testing.T) {
	snap := explainTestSnapshot(t, 90)
	list := snap.List()
	rng := rand.New(rand.NewSource(2))
	for round := 0; round < 40; round++ {
		var order []int
		for i := 0; i < len(list); i += 1 + rng.Intn(2*scanAhead+2) {
			order = append(order, i)
		}
		if round%2 == 1 && len(order) > 2 {
			// A node taken out of its place, as selectHost moves the best.
			k := 1 + rng.Intn(len(order)-1)
			order[0], order[k] = order[k], order[0]
		}
		pos := newPositions(snap, list)
		for _, i := range order {
			if got := pos.of(list[i].Name()); got != i {
				t.Fatalf("round %d: positions.of(%s) = %d, want %d", round, list[i].Name(), got, i)
			}
		}
	}
}

// rankScores gives the order a stable sort by total (descending) then name
// gives, and each score's rank by its index before the sort.
func TestRankScoresOrdersBestFirst(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for round := 0; round < 120; round++ {
		n := rng.Intn(40)
		scores := make([]schedcore.NodePluginScores, n)
		// Totals in a few values, or spread so wide (up to both ends of
		// int64) that they do not fit in a packed key with the places.
		spread := []int64{5, 1 << 40, 1 << 58, math.MaxInt64, math.MaxInt64}[round%5]
		for i, k := range rng.Perm(n) {
			total := rng.Int63n(spread)
			if round%5 == 4 && rng.Intn(2) == 0 {
				total = []int64{math.MinInt64, math.MaxInt64, -1}[rng.Intn(3)]
			}
			scores[i] = schedcore.NodePluginScores{Name: fmt.Sprintf("n%03d", k), TotalScore: total,
				Scores: []schedcore.PluginScore{{Name: "P", Score: int64(k)}}}
		}
		want := append([]schedcore.NodePluginScores(nil), scores...)
		sort.SliceStable(want, func(i, j int) bool {
			if want[i].TotalScore != want[j].TotalScore {
				return want[i].TotalScore > want[j].TotalScore
			}
			return want[i].Name < want[j].Name
		})
		before := append([]schedcore.NodePluginScores(nil), scores...)
		// With the places in the name order (nodes n000, n001...: k), or
		// some unknown (-1), the order is the same.
		var byName []int32
		if round%4 != 0 {
			byName = make([]int32, n)
			for i := range scores {
				fmt.Sscanf(scores[i].Name, "n%03d", &byName[i])
				if round%4 == 3 && rng.Intn(4) == 0 {
					byName[i] = -1
				}
			}
		}
		rank := rankScores(scores, byName)
		for r := range want {
			if scores[r].Name != want[r].Name || scores[r].Scores[0] != want[r].Scores[0] {
				t.Fatalf("round %d: place %d is %s, want %s", round, r, scores[r].Name, want[r].Name)
			}
		}
		for i, r := range rank {
			if scores[r].Name != before[i].Name {
				t.Fatalf("round %d: rank of %s is %d, which holds %s", round, before[i].Name, r, scores[r].Name)
			}
		}
	}
}

// verdictSlab hands out lists side by side while it has room, then lists
// of their own; each holds its verdicts whatever was handed out after it,
// and a reset slab starts from its start again.
func TestVerdictSlabHandsOutSeparateLists(t *testing.T) {
	var s verdictSlab
	for round := 0; round < 3; round++ {
		s.reset(8)
		var got [][]FilterVerdict
		for k := 0; k < 12; k++ {
			vs := make([]FilterVerdict, 1+k%3)
			for j := range vs {
				vs[j] = FilterVerdict{Plugin: fmt.Sprint(round, "/", k, "/", j), Shortfall: float64(k)}
			}
			out := s.copyOf(vs)
			if k == 0 && &out[0] != &s.buf[0] {
				t.Errorf("round %d: the first list is not at the slab's start", round)
			}
			got = append(got, out)
			// Appending to a list must not write into the next one.
			_ = append(out, FilterVerdict{Plugin: "appended"})
		}
		for k, out := range got {
			if len(out) != 1+k%3 {
				t.Fatalf("round %d: list %d has %d verdicts, want %d", round, k, len(out), 1+k%3)
			}
			for j, v := range out {
				if want := fmt.Sprint(round, "/", k, "/", j); v.Plugin != want {
					t.Errorf("round %d: list %d verdict %d is %s, want %s", round, k, j, v.Plugin, want)
				}
			}
		}
	}
	var none *verdictSlab
	if got := none.copyOf([]FilterVerdict{{Plugin: "a"}}); len(got) != 1 || got[0].Plugin != "a" {
		t.Errorf("nil slab: %v", got)
	}
}

// bucketRanking, where it applies (unique places, totals and places
// spanning little), lists the scores in keyedRanking's order; where it
// does not, it gives nil for the sorts to answer.
func TestBucketRankingIsKeyedRanking(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := 0; round < 200; round++ {
		n := 1 + rng.Intn(300)
		scores := make([]schedcore.NodePluginScores, n)
		byName := make([]int32, n)
		// Places with gaps (the unscored nodes between), in any order.
		for i, k := range rng.Perm(n) {
			byName[i] = int32(k*(1+round%3) + round%5)
			scores[i] = schedcore.NodePluginScores{Name: fmt.Sprintf("n%06d", byName[i]), TotalScore: int64(round%7) - 3 + rng.Int63n(int64(1+round%40))}
		}
		var sc rankScratch
		got := slices.Clone(sc.bucketRanking(scores, byName))
		if got == nil {
			t.Fatalf("round %d: no bucket ranking of %d scores", round, n)
		}
		if want := keyedRanking(scores, byName); !slices.Equal(got, want) {
			t.Fatalf("round %d: bucket ranking %v, want %v", round, got, want)
		}
	}
	scores := []schedcore.NodePluginScores{{Name: "a", TotalScore: 1}, {Name: "b", TotalScore: 2}}
	for _, tt := range []struct {
		name   string
		totals [2]int64
		byName []int32
	}{
		{"a place shared", [2]int64{1, 2}, []int32{3, 3}},
		{"a place unknown", [2]int64{1, 2}, []int32{0, -1}},
		{"places far beyond the scores", [2]int64{1, 2}, []int32{0, 1 << 20}},
		{"totals far apart", [2]int64{math.MinInt64, math.MaxInt64}, []int32{0, 1}},
	} {
		scores[0].TotalScore, scores[1].TotalScore = tt.totals[0], tt.totals[1]
		var sc rankScratch
		if got := sc.bucketRanking(scores, tt.byName); got != nil {
			t.Errorf("%s: bucket ranking %v, want none", tt.name, got)
		}
	}
}
