package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// seen is a filter and scorer that passes every node and scores it 0,
// recording the nodes it is called on.
type seen struct {
	mu              sync.Mutex
	filtered, score map[string]bool
}

func (*seen) Name() string { return "Seen" }
func (p *seen) Filter(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.filtered[ni.Name()] = true
	return nil
}
func (p *seen) Score(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) (int64, *schedcore.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.score[ni.Name()] = true
	return 0, nil
}

// reset forgets the nodes recorded, and returns them, sorted.
func (p *seen) reset() (filtered, scored []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for n := range p.filtered {
		filtered = append(filtered, n)
	}
	for n := range p.score {
		scored = append(scored, n)
	}
	sort.Strings(filtered)
	sort.Strings(scored)
	p.filtered, p.score = map[string]bool{}, map[string]bool{}
	return filtered, scored
}

var (
	_ schedcore.FilterPlugin = (*seen)(nil)
	_ schedcore.ScorePlugin  = (*seen)(nil)
)

// placementFramework is a framework over snap with Slots, Veto and a Seen
// of its own, the profile's percentageOfNodesToScore left to the adaptive
// rule (so that large node lists are sampled, from a rotating start).
func placementFramework(t *testing.T, snap *schedcore.Snapshot) (*schedruntime.Framework, *seen) {
	t.Helper()
	rec := &seen{filtered: map[string]bool{}, score: map[string]bool{}}
	reg := schedcore.Registry{
		"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return slots{}, nil
		}},
		"Veto": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return veto{}, nil }},
		"Seen": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return rec, nil }},
	}
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}, {Name: "Veto"}, {Name: "Seen"}}},
	}}
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fw, rec
}

// placementOutcome is what a cycle decided and which nodes it filtered
// and scored.
type placementOutcome struct {
	Host                string
	Evaluated, Feasible int
	Err                 string
	Filtered, Scored    []string
}

func runPlacementCycle(fw *schedruntime.Framework, rec *seen, alg *schedruntime.Algorithm, pod *v1.Pod) placementOutcome {
	res, _, err := alg.SchedulePodWith(context.Background(), fw, schedcore.NewCycleState(), pod, schedruntime.CycleOptions{ReuseScoreBuffers: true, DiagnoseFailuresOnly: true})
	o := placementOutcome{Host: res.SuggestedHost, Evaluated: res.EvaluatedNodes, Feasible: res.FeasibleNodes}
	if err != nil {
		o.Err = err.Error()
	}
	o.Filtered, o.Scored = rec.reset()
	return o
}

// TestSchedulePodOverPlacement: with a placement assumed in the snapshot
// (Snapshot.AssumePlacement), the single-pod algorithm filters and scores
// the placement's nodes only, counts them in the FitError, samples them
// from a start that rotates over them, and tries a nominated node only
// when it is in the placement: cycle after cycle, it decides as the
// algorithm over a snapshot made of only those nodes, listed in the
// placement's order.
func TestSchedulePodOverPlacement(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	var nodes, inPlacement []*v1.Node
	for i := range 600 {
		n := schedtest.MakeNode(fmt.Sprintf("n%03d", i)).Label("slots", strconv.Itoa(rng.Intn(4)))
		if rng.Intn(10) == 0 {
			n.Label("veto", "yes")
		}
		nodes = append(nodes, n.Obj())
		if i%3 != 0 {
			inPlacement = append(inPlacement, n.Obj())
		}
	}
	// The placement lists its nodes in an order of its own.
	rng.Shuffle(len(inPlacement), func(i, j int) { inPlacement[i], inPlacement[j] = inPlacement[j], inPlacement[i] })
	snap := schedcore.NewSnapshot(nil, nodes)
	only := schedcore.NewSnapshot(nil, inPlacement)
	var placement []*schedcore.NodeInfo
	for _, ni := range only.List() {
		placement = append(placement, snap.NodeInfo(ni.Name()))
	}
	if err := snap.AssumePlacement("p", placement); err != nil {
		t.Fatal(err)
	}
	fw, rec := placementFramework(t, snap)
	onlyFw, onlyRec := placementFramework(t, only)
	alg, onlyAlg := &schedruntime.Algorithm{Snapshot: snap}, &schedruntime.Algorithm{Snapshot: only}
	outside, inside := nodes[0].Name, inPlacement[7].Name
	pods := []*v1.Pod{
		schedtest.MakePod("any").Label("slots", "0").Obj(),
		schedtest.MakePod("three").Label("slots", "3").Obj(),
		schedtest.MakePod("none").Label("slots", "9").Obj(),
		schedtest.MakePod("nominated-outside").Label("slots", "0").Obj(),
		schedtest.MakePod("nominated-inside").Label("slots", "0").Obj(),
	}
	pods[3].Status.NominatedNodeName = outside
	pods[4].Status.NominatedNodeName = inside
	placed := map[string]bool{}
	for _, ni := range placement {
		placed[ni.Name()] = true
	}
	for round := range 4 {
		for _, pod := range pods {
			got := runPlacementCycle(fw, rec, alg, pod)
			want := runPlacementCycle(onlyFw, onlyRec, onlyAlg, pod)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("round %d, pod %s: cycle over the placement differs from one over a snapshot of its nodes (-only its nodes +placement):\n%s", round, pod.Name, diff)
			}
			for _, n := range append(got.Filtered, got.Scored...) {
				if !placed[n] {
					t.Fatalf("round %d, pod %s: node %s outside the placement was filtered or scored", round, pod.Name, n)
				}
			}
		}
	}
	got := runPlacementCycle(fw, rec, alg, pods[4])
	if got.Host != inside || got.Evaluated != 1 {
		t.Errorf("a nominated node in the placement that fits is chosen alone: got %+v", got)
	}
	got = runPlacementCycle(fw, rec, alg, pods[2])
	if want := "0/400 nodes are available:"; len(got.Err) < len(want) || got.Err[:len(want)] != want {
		t.Errorf("FitError: got %q, want the placement's node count (%q...)", got.Err, want)
	}

	// Forgotten: every node again.
	snap.ForgetPlacement()
	got = runPlacementCycle(fw, rec, alg, pods[2])
	if want := "0/600 nodes are available:"; len(got.Err) < len(want) || got.Err[:len(want)] != want {
		t.Errorf("FitError without placement: got %q, want %q...", got.Err, want)
	}
	// A placement of no node: no node to schedule on.
	if err := snap.AssumePlacement("empty", nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := alg.SchedulePod(context.Background(), fw, schedcore.NewCycleState(), pods[0]); !errors.Is(err, schedruntime.ErrNoNodesAvailable) {
		t.Errorf("empty placement: got %v, want %v", err, schedruntime.ErrNoNodesAvailable)
	}
}
