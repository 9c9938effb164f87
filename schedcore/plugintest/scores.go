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

// Scorer is a score plugin with PreScore and NormalizeColumn.
type Scorer interface {
	schedcore.PreScorePlugin
	schedcore.ScorePlugin
	schedcore.NormalizeScorePlugin
}

// Scores runs pl's PreScore, Score on each of nodes and NormalizeColumn, as
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
	scores := make([]int64, len(nodes))
	var out []string
	for i, ni := range nodes {
		sc, s := pl.Score(ctx, state, pod, ni)
		if !s.IsSuccess() {
			t.Fatalf("Score: %v", s)
		}
		scores[i] = sc
		out = append(out, fmt.Sprintf("%s raw %d", ni.Name(), sc))
	}
	if s := pl.NormalizeColumn(ctx, state, pod, scores); !s.IsSuccess() {
		t.Fatalf("NormalizeColumn: %v", s)
	}
	for i, sc := range scores {
		out = append(out, fmt.Sprintf("%s %d", nodes[i].Name(), sc))
	}
	return out
}

// Normalize runs pl's NormalizeColumn on the scores of list, in place, as
// the framework runs it on the column of a cycle's raw scores.
func Normalize(ctx context.Context, pl schedcore.NormalizeScorePlugin, state *schedcore.CycleState, pod *v1.Pod, list schedcore.NodeScoreList) *schedcore.Status {
	col := make([]int64, len(list))
	for i := range list {
		col[i] = list[i].Score
	}
	if s := pl.NormalizeColumn(ctx, state, pod, col); !s.IsSuccess() {
		return s
	}
	for i := range list {
		list[i].Score = col[i]
	}
	return nil
}
