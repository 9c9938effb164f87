package schedcore

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// selectHost without ListTied skips listing the tied nodes: it must choose
// the same node, and leave the same chosen and runner-up scores in front, as
// with the list; with ListTied the list is every best node, in name order.
func TestSelectHostWithoutTheTiedList(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for round := 0; round < 500; round++ {
		scores := randomScores(rng, 40)
		n := len(scores)
		var top int64
		var wantTied []string
		for _, s := range scores {
			top = max(top, s.TotalScore)
		}
		for _, s := range scores {
			if s.TotalScore == top {
				wantTied = append(wantTied, s.Name)
			}
		}
		sort.Strings(wantTied)

		listed := append([]NodePluginScores(nil), scores...)
		chosenListed, tied := (&Algorithm{ListTied: true}).selectHost(listed)
		unlisted := append([]NodePluginScores(nil), scores...)
		chosen, none := (&Algorithm{}).selectHost(unlisted)
		if chosen != chosenListed || chosen != wantTied[0] {
			t.Fatalf("round %d: chosen %s without the list, %s with it, want %s", round, chosen, chosenListed, wantTied[0])
		}
		if none != nil {
			t.Errorf("round %d: tied list %v without ListTied, want none", round, none)
		}
		if diff := cmp.Diff(wantTied, tied); diff != "" {
			t.Errorf("round %d: tied (-want +got):\n%s", round, diff)
		}
		if front := min(2, n); !cmp.Equal(listed[:front], unlisted[:front]) {
			t.Errorf("round %d: chosen and runner-up %v without the list, %v with it", round, unlisted[:front], listed[:front])
		}
	}
}

// pickHost finds the chosen and runner-up nodes in one pass: they must be
// those of a full sort (total descending, then name), with a TieBreak
// choosing among the best totals (the runner-up is then the best of the
// others), and pickHost must not move the scores.
func TestPickHostMatchesASort(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for round := 0; round < 2000; round++ {
		scores := randomScores(rng, 30)
		n := len(scores)
		orig := append([]NodePluginScores(nil), scores...)
		sorted := append([]NodePluginScores(nil), scores...)
		sort.Slice(sorted, func(i, j int) bool {
			if sorted[i].TotalScore != sorted[j].TotalScore {
				return sorted[i].TotalScore > sorted[j].TotalScore
			}
			return sorted[i].Name < sorted[j].Name
		})
		pick := rng.Intn(n)
		a := &Algorithm{}
		if round%2 == 1 {
			a.TieBreak = func(tied []string) string { return tied[pick%len(tied)] }
		}
		c, ru, tied := a.pickHost(scores)
		want := []string{sorted[0].Name}
		if a.TieBreak != nil {
			var top []string
			for _, s := range sorted {
				if s.TotalScore == sorted[0].TotalScore {
					top = append(top, s.Name)
				}
			}
			want[0] = top[pick%len(top)]
			if fmt.Sprint(tied) != fmt.Sprint(top) {
				t.Fatalf("round %d: tied %v, want %v", round, tied, top)
			}
		}
		for _, s := range sorted {
			if len(want) < 2 && s.Name != want[0] {
				want = append(want, s.Name)
			}
		}
		got := []string{scores[c].Name}
		if ru >= 0 {
			got = append(got, scores[ru].Name)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("round %d: chosen and runner-up %v, want %v (scores %v)", round, got, want, orig)
		}
		if fmt.Sprint(scores) != fmt.Sprint(orig) {
			t.Fatalf("round %d: pickHost moved the scores", round)
		}
	}
}

// randomScores returns 1 to maxNodes nodes' totals, in random name order,
// with many ties (totals 0 to 3).
func randomScores(rng *rand.Rand, maxNodes int) []NodePluginScores {
	n := 1 + rng.Intn(maxNodes)
	scores := make([]NodePluginScores, n)
	for i, p := range rng.Perm(n) {
		scores[i] = NodePluginScores{Name: fmt.Sprintf("node-%03d", p), TotalScore: int64(rng.Intn(4))}
	}
	return scores
}

// The filter verdicts reused across cycles must come back cleared: a stale
// "passed" would make a rejected node feasible, a stale status would keep a
// rejection alive.
func TestFilterScratchIsClearedForReuse(t *testing.T) {
	s := getFilterScratch(8)
	if len(s.statuses) != 8 || len(s.passed) != 8 {
		t.Fatalf("scratch for 8 nodes has %d statuses and %d verdicts", len(s.statuses), len(s.passed))
	}
	for i := range s.statuses {
		s.statuses[i], s.passed[i] = NewStatus(Unschedulable, "no"), true
	}
	putFilterScratch(s)
	for i := range s.statuses {
		if s.statuses[i] != nil || s.passed[i] {
			t.Fatalf("node %d: status %v, passed %v after reuse, want nil and false", i, s.statuses[i], s.passed[i])
		}
	}
	if small := getFilterScratch(3); len(small.statuses) != 3 || len(small.passed) != 3 {
		t.Errorf("scratch for 3 nodes has %d statuses and %d verdicts", len(small.statuses), len(small.passed))
	}
}
