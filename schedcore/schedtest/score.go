package schedtest

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ScoringPlugin is a plugin with PreScore, Score and NormalizeScore.
type ScoringPlugin interface {
	schedcore.PreScorePlugin
	schedcore.ScorePlugin
	schedcore.NormalizeScorePlugin
}

// Scores runs a scoring plugin's PreScore, Score and NormalizeScore for
// pod over nodes, as the framework does, and lists each node's raw score
// ("node raw N") then its normalized one ("node N"), for comparing with a
// reference; nil when PreScore skips. A failing step is an error.
func Scores(ctx context.Context, pl ScoringPlugin, pod *v1.Pod, nodes []*schedcore.NodeInfo) ([]string, error) {
	state := schedcore.NewCycleState()
	if s := pl.PreScore(ctx, state, pod, nodes); s.Code() == schedcore.Skip {
		return nil, nil
	} else if !s.IsSuccess() {
		return nil, fmt.Errorf("PreScore: %w", s.AsError())
	}
	var out []string
	scores := make(schedcore.NodeScoreList, len(nodes))
	for i, ni := range nodes {
		sc, s := pl.Score(ctx, state, pod, ni)
		if !s.IsSuccess() {
			return nil, fmt.Errorf("Score on %s: %w", ni.Name(), s.AsError())
		}
		scores[i] = schedcore.NodeScore{Name: ni.Name(), Score: sc}
		out = append(out, fmt.Sprintf("%s raw %d", ni.Name(), sc))
	}
	if s := pl.NormalizeScore(ctx, state, pod, scores); !s.IsSuccess() {
		return nil, fmt.Errorf("NormalizeScore: %w", s.AsError())
	}
	for _, s := range scores {
		out = append(out, fmt.Sprintf("%s %d", s.Name, s.Score))
	}
	return out, nil
}
