package schedcore

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// ColumnNormalizer is a NormalizeScorePlugin whose NormalizeScore reads and
// changes the scores alone, never the names: the framework may then hand
// it the scores as a column. NormalizeColumn must leave the same scores,
// in the same order, as NormalizeScore would.
type ColumnNormalizer interface {
	NormalizeScorePlugin
	NormalizeColumn(ctx context.Context, state *CycleState, pod *v1.Pod, scores []int64) *Status
}

// NormalizeListAsColumn is NormalizeScore for a ColumnNormalizer whose
// arithmetic is its NormalizeColumn's (normalize): it hands normalize the
// list's scores as a column and writes them back, so the two cannot part
// ways. It allocates the column, which the framework's score loop never
// does: that loop calls NormalizeColumn itself.
func NormalizeListAsColumn(scores NodeScoreList, normalize func([]int64) *Status) *Status {
	col := make([]int64, len(scores))
	for i := range scores {
		col[i] = scores[i].Score
	}
	if s := normalize(col); !s.IsSuccess() {
		return s
	}
	for i := range scores {
		scores[i].Score = col[i]
	}
	return nil
}

// ScorePreparer is a ListedScorer that prepares, once per cycle, what its
// ScoreListed reads by node position, where kube's plugin has no PreScore
// to do it in (a PreScore of its own would add to what the plugin's
// metrics and the profile show). PrepareScore runs after PreScore and
// before the score loop, serially, and may write to state; it runs in the
// cycles that may call ScoreListed (the feasible nodes are the snapshot's
// listed ones), unless the plugin's Score is uniform. Score must not
// depend on it.
type ScorePreparer interface {
	ListedScorer
	PrepareScore(ctx context.Context, state *CycleState, pod *v1.Pod)
}
