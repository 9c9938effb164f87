package runtime_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// A cycle scoring into the framework's reused buffers (the Scheduler's)
// gives the chosen and runner-up nodes' names and totals that a cycle
// with a list of its own gives; with per-plugin lists equal to that
// cycle's, or, with ScoreTotalsOnly, without lists (never a past cycle's
// left in the buffers).
func TestDetachedScoresMatchAFreshCycle(t *testing.T) {
	for _, tc := range []struct {
		name       string
		totalsOnly bool
	}{
		{name: "lists", totalsOnly: false},
		{name: "totals only", totalsOnly: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int64
			_, snap := slotNodes()
			fw := onePluginFramework(t, snap, slotFilter{slots: slots{}, calls: &calls})
			alg := &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: 100, ScoreTotalsOnly: tc.totalsOnly}
			ref := &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: 100}
			// Nodes n00..n19 have i%5 free slots: a pod wanting w slots
			// fits on (5-w)*4 of them, 4 of them with each total.
			for round, want := range []int{0, 3, 1, 2, 0, 3} {
				pod := schedtest.MakePod(fmt.Sprintf("p%d", round)).Label("slots", strconv.Itoa(want)).Obj()
				state := schedcore.NewCycleState()
				got, _, err := alg.SchedulePodWith(context.Background(), fw, state, pod, schedruntime.CycleOptions{ReuseScoreBuffers: true})
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				exp, _, err := ref.SchedulePod(context.Background(), fw, schedcore.NewCycleState(), pod)
				if err != nil {
					t.Fatalf("round %d: %v", round, err)
				}
				if len(got.Scores) != 2 || got.SuggestedHost != exp.SuggestedHost {
					t.Fatalf("round %d: %d scores, chose %s, want 2 and %s", round, len(got.Scores), got.SuggestedHost, exp.SuggestedHost)
				}
				for k, s := range got.Scores {
					i := slices.IndexFunc(exp.Scores, func(e schedcore.NodePluginScores) bool { return e.Name == s.Name })
					if i < 0 || exp.Scores[i].TotalScore != s.TotalScore || exp.Scores[k].TotalScore != s.TotalScore {
						t.Fatalf("round %d: score %d is %s with %d, not the fresh cycle's", round, k, s.Name, s.TotalScore)
					}
					e := exp.Scores[i]
					if tc.totalsOnly {
						if s.RawScores != nil || s.Scores != nil {
							t.Errorf("round %d: %s has lists %v %v with ScoreTotalsOnly", round, s.Name, s.RawScores, s.Scores)
						}
					} else if !slices.Equal(s.RawScores, e.RawScores) || !slices.Equal(s.Scores, e.Scores) {
						t.Errorf("round %d: %s has %v %v, want %v %v", round, s.Name, s.RawScores, s.Scores, e.RawScores, e.Scores)
					}
				}
			}
		})
	}
}
