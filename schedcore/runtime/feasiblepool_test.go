package runtime_test

import (
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// keptNodes is slotFilter (which scores a node by its free slots) keeping,
// against the rule, the feasible nodes PreScore was handed, so that a test
// can look at that list after the cycle.
type keptNodes struct {
	slotFilter
	kept *[]*schedcore.NodeInfo
}

func (p keptNodes) PreScore(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, nodes []*schedcore.NodeInfo) *schedcore.Status {
	*p.kept = nodes
	return nil
}

var _ schedcore.PreScorePlugin = keptNodes{}

// TestFeasibleListsAreReused checks the feasible-node lists that cycles
// hand to the next ones (SchedulePod gives its list back when the cycle is
// over): a cycle finds exactly the nodes that fit, whatever an earlier
// cycle's list held (a reused list starts empty), and a given-back list
// keeps no node (it is cleared).
func TestFeasibleListsAreReused(t *testing.T) {
	var calls atomic.Int64
	var kept []*schedcore.NodeInfo
	_, snap := slotNodes()
	fw := onePluginFramework(t, snap, keptNodes{slotFilter: slotFilter{slots: slots{}, calls: &calls}, kept: &kept})
	alg := &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: 100}
	// Nodes n00..n19 have i%5 free slots: a pod wanting w slots fits on
	// (5-w)*4 of them.
	for round, want := range []int{4, 1, 3, 0, 2, 4, 1, 0, 3} {
		pod := schedtest.MakePod(fmt.Sprintf("p%d", round)).Label("slots", strconv.Itoa(want)).Obj()
		kept = nil
		res, _, err := alg.SchedulePod(context.Background(), fw, schedcore.NewCycleState(), pod)
		if err != nil {
			t.Fatalf("round %d (%d slots): %v", round, want, err)
		}
		if got, fit := res.FeasibleNodes, (5-want)*4; got != fit || res.EvaluatedNodes != 20 {
			t.Errorf("round %d (%d slots): %d feasible of %d evaluated, want %d of 20", round, want, got, res.EvaluatedNodes, fit)
		}
		if len(kept) == 0 {
			t.Fatalf("round %d: PreScore saw no nodes", round)
		}
		for i, ni := range kept {
			if ni != nil {
				t.Errorf("round %d: the cycle's feasible list still holds %s at %d after the cycle", round, ni.Name(), i)
				break
			}
		}
	}
}

// TestSampledPassFindsTheFirstFeasibleNodes checks a sampled filter pass
// (percentageOfNodesToScore below 100) against a walk node by node: from
// the rotating start, the first nodes that fit, as many as the sample
// asks for, and as many nodes evaluated as that walk took, whatever the
// share of nodes that fit (the pass filters in windows sized by it).
func TestSampledPassFindsTheFirstFeasibleNodes(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	const numNodes = 1000
	free := map[string]int{}
	for i := 0; i < numNodes; i++ {
		name := fmt.Sprintf("n%04d", i)
		free[name] = rng.Intn(10)
		cache.AddNode(schedtest.MakeNode(name).Label("slots", strconv.Itoa(free[name])).Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	var calls atomic.Int64
	var kept []*schedcore.NodeInfo
	fw := onePluginFramework(t, snap, keptNodes{slotFilter: slotFilter{calls: &calls}, kept: &kept})
	alg := &schedruntime.Algorithm{Snapshot: snap, PercentageOfNodesToScore: 10}
	toFind := int(schedruntime.NumFeasibleNodesToFind(nil, 10, numNodes))
	list := snap.List()
	start := 0
	for round := 0; round < 200; round++ {
		want := rng.Intn(11) // 10: no node fits
		if round%7 == 0 {
			want = 9 // about one node in ten
		}
		var fit []string
		walked := 0
		for k := 0; k < numNodes && len(fit) < toFind; k++ {
			walked++
			if n := list[(start+k)%numNodes].Node().Name; free[n] >= want {
				fit = append(fit, n)
			}
		}
		pod := schedtest.MakePod(fmt.Sprintf("p%d", round)).Label("slots", strconv.Itoa(want)).Obj()
		res, diag, err := alg.SchedulePod(context.Background(), fw, schedcore.NewCycleState(), pod)
		start = (start + walked) % numNodes
		if len(fit) == 0 {
			if err == nil {
				t.Fatalf("round %d (%d slots): placed on %s, want no fit", round, want, res.SuggestedHost)
			}
			if diag.NodeToStatus.Len() != numNodes {
				t.Errorf("round %d (%d slots): %d nodes rejected, want %d", round, want, diag.NodeToStatus.Len(), numNodes)
			}
			continue
		}
		if err != nil {
			t.Fatalf("round %d (%d slots): %v", round, want, err)
		}
		best := fit[0]
		for _, n := range fit {
			if free[n] > free[best] || free[n] == free[best] && n < best {
				best = n
			}
		}
		if res.FeasibleNodes != len(fit) || res.EvaluatedNodes != walked || res.SuggestedHost != best {
			t.Errorf("round %d (%d slots): %d feasible of %d evaluated, chose %s; want %d of %d, %s",
				round, want, res.FeasibleNodes, res.EvaluatedNodes, res.SuggestedHost, len(fit), walked, best)
		}
	}
}
