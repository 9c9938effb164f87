package schedcore

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"
)

// pickHost finds the chosen and runner-up nodes in one pass: they must be
// those of a full sort (total descending, then name), with a TieBreak
// choosing among the best totals (the runner-up is then the best of the
// others), and pickHost must not move the scores.
func TestPickHostMatchesASort(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	for round := 0; round < 2000; round++ {
		n := 1 + rng.Intn(30)
		scores := make([]NodePluginScores, n)
		for i, p := range rng.Perm(n) {
			scores[i] = NodePluginScores{Name: fmt.Sprintf("node-%03d", p), TotalScore: int64(rng.Intn(4))}
		}
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
