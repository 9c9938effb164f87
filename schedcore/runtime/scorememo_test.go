package runtime_test

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// perSlot is a NodeLocalScorer: a node scores its "slots" label times the
// pod's "weight" label, and the weight is the key. calls counts Score calls.
type perSlot struct {
	slots
	calls *atomic.Int64
	// keyless makes ScoreKey write nothing: the memo then mixes weights up.
	keyless bool
}

func (p perSlot) Score(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, ni *schedcore.NodeInfo) (int64, *schedcore.Status) {
	p.calls.Add(1)
	w, _ := strconv.Atoi(pod.Labels["weight"])
	return int64(p.free(ni) * w), nil
}

func (p perSlot) ScoreKey(_ *schedcore.CycleState, pod *v1.Pod, k *schedcore.MemoKey) bool {
	if !p.keyless {
		k.String(pod.Labels["weight"])
	}
	return true
}

var _ schedcore.NodeLocalScorer = perSlot{}

// TestNodeLocalScoresAreRemembered checks that RunScorePlugins calls a
// NodeLocalScorer only for nodes changed since the last cycle with the same
// key, and that its scores are those of a fresh framework: after a node
// changes, and for a pod with another key.
func TestNodeLocalScoresAreRemembered(t *testing.T) {
	for _, keyless := range []bool{false, true} {
		t.Run(fmt.Sprintf("keyless=%v", keyless), func(t *testing.T) {
			var calls atomic.Int64
			newFramework := func(snap *schedcore.Snapshot) *schedruntime.Framework {
				return onePluginFramework(t, snap, perSlot{calls: &calls, keyless: keyless})
			}
			cache, snap := slotNodes()
			long := newFramework(snap)
			score := func(fw *schedruntime.Framework, weight string) []string {
				pod := schedtest.MakePod("p").Label("weight", weight).Obj()
				scores, st := fw.RunScorePlugins(context.Background(), schedcore.NewCycleState(), pod, snap.List())
				if !st.IsSuccess() {
					t.Fatal(st.AsError())
				}
				var out []string
				for _, s := range scores {
					out = append(out, fmt.Sprintf("%s %d", s.Name, s.TotalScore))
				}
				return out
			}
			check := func(step, weight string, wantCalls int64) {
				t.Helper()
				calls.Store(0)
				got := score(long, weight)
				n := calls.Load()
				want := score(newFramework(snap), weight)
				if diff := cmp.Diff(want, got); diff != "" {
					if keyless {
						return // the memo mixed the weights up, as it must without a key
					}
					t.Fatalf("%s, weight %s: remembered scores differ from a fresh framework's (-fresh +remembered):\n%s", step, weight, diff)
				}
				if n != wantCalls && !keyless {
					t.Errorf("%s, weight %s: Score called %d times, want %d", step, weight, n, wantCalls)
				}
			}
			check("first cycle", "1", 20)
			check("same pod again", "1", 0)
			check("another weight", "3", 20)
			cache.AddNode(schedtest.MakeNode("n07").Label("slots", "9").Obj())
			cache.UpdateSnapshot(snap)
			check("one node relabelled", "1", 1)
			check("one node relabelled", "3", 1)
			if keyless {
				calls.Store(0)
				if got, want := score(long, "2"), score(newFramework(snap), "2"); cmp.Equal(got, want) {
					t.Error("without the weight in the key the remembered scores still matched: the test checks nothing")
				}
			}
		})
	}
}

// TestSampledScoreCyclesRememberNothing checks that a cycle that times
// every plugin (RecordPluginMetrics, kube's sampled cycles) scores every
// node, as the filters' memo does: its timings cover every node.
func TestSampledScoreCyclesRememberNothing(t *testing.T) {
	var calls atomic.Int64
	_, snap := slotNodes()
	fw := onePluginFramework(t, snap, perSlot{calls: &calls})
	pod := schedtest.MakePod("p").Label("weight", "1").Obj()
	run := func(sampled bool) int64 {
		t.Helper()
		calls.Store(0)
		state := schedcore.NewCycleState()
		state.RecordPluginMetrics = sampled
		if _, st := fw.RunScorePlugins(context.Background(), state, pod, snap.List()); !st.IsSuccess() {
			t.Fatal(st.AsError())
		}
		return calls.Load()
	}
	run(false)
	if n := run(false); n != 0 {
		t.Fatalf("an unsampled cycle of the same pod scored %d nodes, want 0 (the memo is off: the test checks nothing)", n)
	}
	if n := run(true); n != 20 {
		t.Errorf("a sampled cycle scored %d nodes, want all 20", n)
	}
}
