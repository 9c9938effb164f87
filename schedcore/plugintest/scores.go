// Package plugintest holds helpers for plugin tests that need schedcore's
// types (schedtest cannot: schedcore's own tests import it).
package plugintest

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Scorer is a score plugin with PreScore and NormalizeScore.
type Scorer interface {
	schedcore.PreScorePlugin
	schedcore.ScorePlugin
	schedcore.NormalizeScorePlugin
}

// Scores runs pl's PreScore, Score on each of nodes and NormalizeScore, as
// the framework runs them on one fresh CycleState, and lists the result for
// comparing with a reference: "NODE raw N" for each node, then "NODE N" for
// each normalized score. It returns nil when PreScore skips, and fails t on
// any other unsuccessful status.
func Scores(t testing.TB, pl Scorer, pod *v1.Pod, nodes []*schedcore.NodeInfo) []string {
	t.Helper()
	ctx := context.Background()
	state := schedcore.NewCycleState()
	if s := pl.PreScore(ctx, state, pod, nodes); s.Code() == schedcore.Skip {
		return nil
	} else if !s.IsSuccess() {
		t.Fatalf("PreScore: %v", s)
	}
	scores := make(schedcore.NodeScoreList, len(nodes))
	var out []string
	for i, ni := range nodes {
		sc, s := pl.Score(ctx, state, pod, ni)
		if !s.IsSuccess() {
			t.Fatalf("Score: %v", s)
		}
		scores[i] = schedcore.NodeScore{Name: ni.Name(), Score: sc}
		out = append(out, fmt.Sprintf("%s raw %d", ni.Name(), sc))
	}
	if s := pl.NormalizeScore(ctx, state, pod, scores); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	for _, s := range scores {
		out = append(out, fmt.Sprintf("%s %d", s.Name, s.Score))
	}
	return out
}
