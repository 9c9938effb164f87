package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// erringSlotFilter is sharedSlotFilter failing with an error (not a
// rejection) on the nodes whose "err" label is the pod's.
type erringSlotFilter struct{ sharedSlotFilter }

func (p erringSlotFilter) Filter(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	if e := pod.Labels["err"]; e != "" && ni.Node().Labels["err"] == e {
		return schedcore.AsStatus(errors.New("broken node"))
	}
	return p.sharedSlotFilter.Filter(ctx, state, pod, ni)
}

// FilterKey is the slots and the error label the pod's verdicts depend on.
func (p erringSlotFilter) FilterKey(_ *schedcore.CycleState, pod *v1.Pod, k *schedcore.MemoKey) bool {
	k.String(pod.Labels["slots"]).String(pod.Labels["err"])
	return true
}

// A scheduler cycle (CycleOptions.DiagnoseFailuresOnly) counts the nodes its
// filter pass rejects instead of recording their statuses, when the pass
// finds some node; when it finds none, or stops on an error, it filters
// again, recording. Either way it must decide as a cycle that records
// from the start, in a fresh framework: the same feasible nodes, chosen
// node and nodes evaluated (the rotating start of the next sampled pass
// follows from them), and, when nothing fits, the same diagnosis (every
// node's status, in order, and the FitError message), whatever the share
// of nodes that fit, the nodes changed between cycles (remembered verdicts
// go stale), a nominated node filtered first, or a filter's error.
func TestCountingPassDecidesAsARecordingOne(t *testing.T) {
	for _, tc := range []struct {
		name string
		// percentage of nodes to score (10: sampled windows).
		percentage int32
		// shared: rejections are shared statuses, remembered and read
		// with the passes (verdictsAt); otherwise a new status each.
		shared bool
		// errs: some pods meet a filter's error on some nodes. Not in a
		// pass over every node: its window is filtered in parallel, and
		// which blocks an error leaves unfiltered, so how far the next
		// pass's start moves, depends on timing (as in kube).
		errs bool
		// nodes in the cluster (1100 unless set).
		nodes int
	}{
		{name: "sampled, remembered rejections, errors", percentage: 10, shared: true, errs: true},
		{name: "sampled, rejections not remembered", percentage: 10, shared: false},
		{name: "every node, remembered rejections", percentage: 100, shared: true},
		// Windows of 4500 nodes and more: more than
		// minParallelSampledBlocks blocks, filtered in parallel.
		{name: "sampled in long windows, remembered rejections", percentage: 50, shared: true, nodes: 9000},
		{name: "sampled in long windows, rejections not remembered", percentage: 50, shared: false, nodes: 9000},
	} {
		numNodes := tc.nodes
		if numNodes == 0 {
			numNodes = 1100
		}
		t.Run(tc.name, func(t *testing.T) { checkCountingPass(t, tc.percentage, tc.shared, tc.errs, numNodes) })
	}
}

func checkCountingPass(t *testing.T, percentage int32, shared, errs bool, numNodes int) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(5))
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	// More than minParallelFilterBlocks blocks: a pass over every node
	// filters its window in parallel.
	node := func(i int) *v1.Node {
		return schedtest.MakeNode(fmt.Sprintf("n%04d", i)).Label("slots", strconv.Itoa(rng.Intn(4))).Label("err", strconv.Itoa(rng.Intn(400))).Obj()
	}
	for i := 0; i < numNodes; i++ {
		cache.AddNode(node(i))
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	newPlugin := func() schedcore.Plugin {
		f := slotFilter{calls: new(atomic.Int64)}
		if shared {
			return erringSlotFilter{sharedSlotFilter{f}}
		}
		return f
	}
	long := onePluginFramework(t, snap, newPlugin())
	counting := &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: percentage}
	recording := &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: percentage}
	// cycle schedules pod and says what a caller may read of the result.
	cycle := func(alg *schedruntime.Algorithm, fw *schedruntime.Framework, pod *v1.Pod, diagnoseFailuresOnly bool) []string {
		state := schedcore.NewCycleState()
		res, diag, err := alg.SchedulePodWith(ctx, fw, state, pod, schedruntime.CycleOptions{DiagnoseFailuresOnly: diagnoseFailuresOnly})
		out := []string{fmt.Sprint("host ", res.SuggestedHost, " feasible ", res.FeasibleNodes, " evaluated ", res.EvaluatedNodes)}
		var fitErr *schedcore.FitError
		switch {
		case errors.As(err, &fitErr):
			out = append(out, "no fit: "+fitErr.Error())
			diag.NodeToStatus.ForEachExplicitNode(func(node string, s *schedcore.Status) {
				out = append(out, fmt.Sprint(node, " ", s.Code(), " ", s.Plugin(), " ", s.Reasons()))
			})
		case err != nil:
			out = append(out, "error: "+err.Error())
		}
		return out
	}
	outcomes := map[string]int{}
	for round := 0; round < 300; round++ {
		// A few nodes change: their remembered verdicts are stale.
		for range rng.Intn(4) {
			cache.AddNode(node(rng.Intn(numNodes)))
		}
		cache.UpdateSnapshot(snap)
		want := rng.Intn(5) // 4: no node fits
		if round%5 == 0 {
			want = 3 // about one node in four
		}
		b := schedtest.MakePod(fmt.Sprintf("p%d", round)).Label("slots", strconv.Itoa(want))
		if errs && round%9 == 0 {
			b = b.Label("err", strconv.Itoa(rng.Intn(400)))
		}
		pod := b.Obj()
		if round%7 == 0 {
			// A nominated node, filtered first: a pass after it that
			// counted would count that node a second time.
			pod.Status.NominatedNodeName = snap.List()[rng.Intn(numNodes)].Name()
		}
		wantOut := cycle(recording, onePluginFramework(t, snap, newPlugin()), pod, false)
		got := cycle(counting, long, pod, true)
		if diff := cmp.Diff(wantOut, got); diff != "" {
			t.Fatalf("round %d (%d slots): a counting cycle differs from a recording one (-recording +counting):\n%s", round, want, diff)
		}
		switch {
		case len(got) > 1 && got[1][:5] == "error":
			outcomes["error"]++
		case len(got) > 1:
			outcomes["no fit"]++
		default:
			outcomes["fit"]++
		}
	}
	if outcomes["fit"] < 100 || outcomes["no fit"] < 20 || errs && outcomes["error"] < 5 {
		t.Errorf("outcomes %v: too few of a kind to compare", outcomes)
	}
}

// cancellingFilter is slots, cancelling the cycle's context when it filters
// node at.
type cancellingFilter struct {
	slots
	at     string
	cancel *context.CancelFunc
}

func (p cancellingFilter) Filter(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	if ni.Node().Name == p.at {
		(*p.cancel)()
	}
	return p.slots.Filter(ctx, state, pod, ni)
}

// A counting pass that the context stops after it found nodes keeps them,
// as a recording pass does, and the cycle ends with the context's error;
// filtering again, recording, under a done context would find no node and
// no rejection, and report a FitError ("0/1100 nodes are available") for a
// pod that fit.
func TestCountingPassStoppedKeepsWhatItFound(t *testing.T) {
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for i := 0; i < 1100; i++ {
		cache.AddNode(schedtest.MakeNode(fmt.Sprintf("n%04d", i)).Label("slots", "1").Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	pod := schedtest.MakePod("p").Label("slots", "1").Obj()
	for _, at := range []string{"n0000", "n0040", "n0090"} {
		cycle := func(diagnoseFailuresOnly bool) string {
			var cancel context.CancelFunc
			fw := onePluginFramework(t, snap, cancellingFilter{at: at, cancel: &cancel})
			ctx, c := context.WithCancel(context.Background())
			defer c()
			cancel = c
			// Sampled: the windows run in turn, so where the pass stops
			// does not depend on timing.
			alg := &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: 10}
			state := schedcore.NewCycleState()
			res, _, err := alg.SchedulePodWith(ctx, fw, state, pod, schedruntime.CycleOptions{DiagnoseFailuresOnly: diagnoseFailuresOnly})
			return fmt.Sprint("host ", res.SuggestedHost, " feasible ", res.FeasibleNodes, " evaluated ", res.EvaluatedNodes, " err ", err)
		}
		want, got := cycle(false), cycle(true)
		if got != want {
			t.Errorf("stopped at %s: counting cycle %q, recording %q", at, got, want)
		}
		if !strings.Contains(want, "context canceled") {
			t.Errorf("stopped at %s: %q, want the context's error", at, want)
		}
	}
}
