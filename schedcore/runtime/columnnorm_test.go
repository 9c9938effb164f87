package runtime_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// columnSlots normalizes its scores (free slots) to 100-20×slots.
type columnSlots struct{ slots }

func (columnSlots) NormalizeColumn(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, scores []int64) *schedcore.Status {
	for i := range scores {
		scores[i] = 100 - 20*scores[i]
	}
	return nil
}

var _ schedcore.NormalizeScorePlugin = columnSlots{}

// A NormalizeScorePlugin's scores are normalized in a column of their own:
// the raw scores stay as Score gave them, the normalized ones are weighted
// and summed.
func TestNormalizeColumnKeepsRawScores(t *testing.T) {
	_, snap := slotNodes()
	fw := onePluginFramework(t, snap, columnSlots{})
	scores, st := fw.RunScorePlugins(context.Background(), schedcore.NewCycleState(), schedtest.MakePod("p").Obj(), snap.List())
	if !st.IsSuccess() {
		t.Fatal(st.AsError())
	}
	var got, want [][3]int64
	for i, s := range scores {
		free := int64(i % 5) // slotNodes: node i has i%5 slots
		want = append(want, [3]int64{free, 100 - 20*free, 100 - 20*free})
		got = append(got, [3]int64{s.RawScores[0].Score, s.Scores[0].Score, s.TotalScore})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("[raw, weighted, total] by node (-want +got):\n%s", diff)
	}
}
