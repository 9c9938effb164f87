package runtime_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestRunScorePluginsOnACancelledContext: the parallel loop stops early on
// a cancelled context, leaving nodes unscored (nameless, or with the last
// cycle's raw scores in the reused columns); RunScorePlugins must say so
// rather than hand them to host selection.
func TestRunScorePluginsOnACancelledContext(t *testing.T) {
	var calls atomic.Int64
	_, snap := slotNodes()
	fw := onePluginFramework(t, snap, perSlot{calls: &calls})
	pod := schedtest.MakePod("p").Label("weight", "2").Obj()
	if _, st := fw.RunScorePlugins(context.Background(), schedcore.NewCycleState(), pod, snap.List()); !st.IsSuccess() {
		t.Fatal(st.AsError())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pod = schedtest.MakePod("q").Label("weight", "3").Obj()
	scores, st := fw.RunScorePlugins(ctx, schedcore.NewCycleState(), pod, snap.List())
	if st.IsSuccess() {
		t.Fatalf("RunScorePlugins on a cancelled context: success with %d scores, want the context's error", len(scores))
	}
}
