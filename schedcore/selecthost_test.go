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
		n := 1 + rng.Intn(40)
		scores := make([]NodePluginScores, n)
		for i, p := range rng.Perm(n) {
			scores[i] = NodePluginScores{Name: fmt.Sprintf("node-%03d", p), TotalScore: int64(rng.Intn(4))}
		}
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
