package runtime

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
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

		listed := append([]schedcore.NodePluginScores(nil), scores...)
		chosenListed, tied := (&Algorithm{ListTied: true}).selectHost(listed)
		unlisted := append([]schedcore.NodePluginScores(nil), scores...)
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
		orig := append([]schedcore.NodePluginScores(nil), scores...)
		sorted := append([]schedcore.NodePluginScores(nil), scores...)
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
		// Ties compare names, or the nodes' ranks in name order.
		var order nameOrder
		if round%4 >= 2 {
			byName := make([]int, n)
			for i := range byName {
				byName[i] = i
			}
			sort.Slice(byName, func(x, y int) bool { return scores[byName[x]].Name < scores[byName[y]].Name })
			// The scores' nodes at list positions n-1..0, ranked by name.
			order = nameOrder{pos: make([]int32, n), ranks: make([]int32, n)}
			for i := range n {
				order.pos[i] = int32(n - 1 - i)
			}
			for r, i := range byName {
				order.ranks[n-1-i] = int32(r)
			}
		}
		c, ru, tied := a.pickHost(scores, order)
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
func randomScores(rng *rand.Rand, maxNodes int) []schedcore.NodePluginScores {
	n := 1 + rng.Intn(maxNodes)
	scores := make([]schedcore.NodePluginScores, n)
	for i, p := range rng.Perm(n) {
		scores[i] = schedcore.NodePluginScores{Name: fmt.Sprintf("node-%03d", p), TotalScore: int64(rng.Intn(4))}
	}
	return scores
}

// The filter verdicts reused across cycles must come back cleared: a stale
// "passed" would make a rejected node feasible, a stale status would keep a
// rejection alive. (A counting pass writes neither: it leaves written 0.)
func TestFilterScratchIsClearedForReuse(t *testing.T) {
	s := getFilterScratch(8)
	if len(s.statuses) != 8 || len(s.passed) != 8 {
		t.Fatalf("scratch for 8 nodes has %d statuses and %d verdicts", len(s.statuses), len(s.passed))
	}
	for i := range s.statuses {
		s.statuses[i], s.passed[i] = schedcore.NewStatus(schedcore.Unschedulable, "no"), true
	}
	// What a recording pass marks: the nodes it may have written.
	s.written = len(s.statuses)
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

// TestNameRanksFollowTheList: the ranks by list position must be the
// listed names' order after every snapshot update, also when a node is
// removed and another added (the list rebuilt at the same length).
func TestNameRanksFollowTheList(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	c := schedcore.NewCache(schedcore.DefaultFeatures)
	live := map[string]bool{}
	snap := schedcore.NewEmptySnapshot()
	for step := 0; step < 300; step++ {
		name := fmt.Sprintf("n%02d", rng.Intn(40))
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}
		switch {
		case live[name] && rng.Intn(3) == 0:
			c.RemoveNode(node)
			delete(live, name)
		case live[name]:
			c.UpdateNode(nil, node) // replaced in place
		default:
			c.AddNode(node)
			live[name] = true
		}
		c.UpdateSnapshot(snap)
		if rng.Intn(2) == 0 {
			continue // ranks read only now and then
		}
		list := snap.List()
		ranks := snap.NameRanks()
		if len(ranks) != len(list) {
			t.Fatalf("step %d: %d ranks for %d listed nodes", step, len(ranks), len(list))
		}
		for i := range list {
			for j := range list {
				if (ranks[i] < ranks[j]) != (list[i].Name() < list[j].Name()) {
					t.Fatalf("step %d: %s has rank %d, %s rank %d", step, list[i].Name(), ranks[i], list[j].Name(), ranks[j])
				}
			}
		}
	}
}
