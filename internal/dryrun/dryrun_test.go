package dryrun

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func node(name, zone string) *v1.Node {
	return schedtest.MakeNode(name).Label("kubernetes.io/hostname", name).Label("topology.kubernetes.io/zone", zone).
		Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj()
}

func runCluster(t *testing.T, cl *snapshot.Cluster, mutate func(*configv1.KubeSchedulerConfiguration), o Options) *report.DryRun {
	t.Helper()
	cfg, err := engine.LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if mutate != nil {
		mutate(cfg)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	o.Config, o.Registry = cfg, reg
	rep, err := Run(context.Background(), cl, o)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func placements(r *report.DryRun) []string {
	var out []string
	for _, p := range r.Placements {
		out = append(out, p.Pod+"->"+p.Node)
	}
	return out
}

// identical nodes and pods: every pod ties on many nodes.
func tieCluster() *snapshot.Cluster {
	cl := &snapshot.Cluster{}
	for _, n := range []string{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"} {
		cl.Nodes = append(cl.Nodes, node(n, "z"))
	}
	for i := 0; i < 24; i++ {
		cl.Pods = append(cl.Pods, schedtest.MakePod("p"+string(rune('a'+i))).Namespace("ns").Req("cpu", "100m").Created(int64(i)).Obj())
	}
	return cl
}

func TestTiesGoToTheLowestNameUnlessSeeded(t *testing.T) {
	rep := runCluster(t, tieCluster(), nil, Options{})
	if got := rep.Placements[0].Node; got != "n0" {
		t.Errorf("first pod on %s, want n0 (lowest name among tied nodes)", got)
	}
	seeded := placements(runCluster(t, tieCluster(), nil, Options{Seed: 7, UseSeed: true}))
	again := placements(runCluster(t, tieCluster(), nil, Options{Seed: 7, UseSeed: true}))
	if d := cmp.Diff(seeded, again); d != "" {
		t.Errorf("same seed, different placements (-first +second):\n%s", d)
	}
	other := placements(runCluster(t, tieCluster(), nil, Options{Seed: 8, UseSeed: true}))
	if cmp.Equal(seeded, other) {
		t.Errorf("seeds 7 and 8 gave the same placements; the seed is not used")
	}
}

func TestResultsDoNotDependOnParallelism(t *testing.T) {
	cl := &snapshot.Cluster{}
	for i := 0; i < 150; i++ {
		cl.Nodes = append(cl.Nodes, node("node-"+string(rune('a'+i/26))+string(rune('a'+i%26)), "z"+string(rune('0'+i%3))))
	}
	for i := 0; i < 60; i++ {
		p := schedtest.MakePod("w"+string(rune('a'+i/26))+string(rune('a'+i%26))).Namespace("ns").Label("app", "w").
			Req("cpu", "300m", "memory", "1Gi").Created(int64(i)).
			SpreadConstraint(1, "topology.kubernetes.io/zone", v1.ScheduleAnyway, map[string]string{"app": "w"}, nil)
		cl.Pods = append(cl.Pods, p.Obj())
	}
	var want []string
	for _, par := range []int32{1, 2, 16} {
		// Adaptive node sampling (percentageOfNodesToScore 0) is the case
		// where goroutine timing could leak into which nodes are found.
		got := placements(runCluster(t, cl, func(c *configv1.KubeSchedulerConfiguration) { c.Parallelism = &par }, Options{}))
		if want == nil {
			want = got
			continue
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("parallelism %d differs from 1 (-want +got):\n%s", par, d)
		}
	}
}

func TestARejectedPodIsRetriedWhenAPlacementMayHelpIt(t *testing.T) {
	// "follower" wants to share a zone with an app=leader pod, but is
	// queued first (higher priority). Its first attempt fails; placing
	// the leader is an AssignedPod/Add event InterPodAffinity's hint accepts,
	// so the follower is retried and lands in the leader's zone.
	cl := &snapshot.Cluster{Nodes: []*v1.Node{node("a", "z1"), node("b", "z2")}}
	cl.Pods = append(cl.Pods,
		schedtest.MakePod("follower").Namespace("ns").Priority(10).Req("cpu", "100m").
			PodAffinity("topology.kubernetes.io/zone", map[string]string{"app": "leader"}).Obj(),
		schedtest.MakePod("leader").Namespace("ns").Label("app", "leader").Req("cpu", "3").Obj(),
	)
	rep := runCluster(t, cl, nil, Options{})
	if d := cmp.Diff([]string{"ns/leader->a", "ns/follower->a"}, placements(rep)); d != "" {
		t.Fatalf("placements (-want +got):\n%s", d)
	}
	if got := rep.Placements[1].Attempts; got != 2 {
		t.Errorf("follower attempts = %d, want 2", got)
	}
}

func TestUnschedulableAndGatedPodsAreReported(t *testing.T) {
	cl := &snapshot.Cluster{Nodes: []*v1.Node{node("a", "z1")}}
	cl.Pods = append(cl.Pods,
		schedtest.MakePod("huge").Namespace("ns").Req("cpu", "64").Obj(),
		schedtest.MakePod("gated").Namespace("ns").Req("cpu", "1").SchedulingGates("example.com/wait").Obj(),
		schedtest.MakePod("other").Namespace("ns").SchedulerName("someone-else").Obj(),
		schedtest.MakePod("done").Namespace("ns").Node("a").Req("cpu", "4").Phase(v1.PodSucceeded).Obj(),
	)
	rep := runCluster(t, cl, nil, Options{})
	// Queue order: same priority and creation time, so namespace/name.
	want := []report.Unschedulable{
		{Pod: "ns/gated", Message: "Scheduling is blocked due to non-empty scheduling gates", Reason: "SchedulingGated"},
		{Pod: "ns/huge", Message: "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.", Reason: "Unschedulable", Plugins: []string{"NodeResourcesFit"}, Attempts: 1},
	}
	if d := cmp.Diff(want, rep.Unschedulable); d != "" {
		t.Errorf("unschedulable (-want +got):\n%s", d)
	}
	if rep.Summary.Pending != 2 || rep.Summary.Scheduled != 0 {
		t.Errorf("summary = %+v, want 2 pending (the other scheduler's pod is not ours), 0 scheduled", rep.Summary)
	}
}

func TestTheInputIsNotModified(t *testing.T) {
	cl := tieCluster()
	before := cl.Pods[0].DeepCopy()
	runCluster(t, cl, nil, Options{})
	if d := cmp.Diff(before, cl.Pods[0]); d != "" {
		t.Errorf("input pod changed (-before +after):\n%s", d)
	}
}

// TestProgressCountsEveryAttempt: the progress callback hears every
// attempt, its counts never go down, and at the end they are the report's.
func TestProgressCountsEveryAttempt(t *testing.T) {
	cl := tieCluster()
	// Two pods that fit nowhere.
	for _, n := range []string{"huge-1", "huge-2"} {
		cl.Pods = append(cl.Pods, schedtest.MakePod(n).Namespace("ns").Req("cpu", "64").Created(100).Obj())
	}
	type call struct{ placed, failing, total int }
	var calls []call
	rep := runCluster(t, cl, nil, Options{Progress: func(placed, failing, total int) { calls = append(calls, call{placed, failing, total}) }})
	if len(calls) < len(cl.Pods) {
		t.Fatalf("%d progress calls for %d pods", len(calls), len(cl.Pods))
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].placed < calls[i-1].placed || calls[i].total != len(cl.Pods) {
			t.Errorf("call %d: %+v after %+v", i, calls[i], calls[i-1])
		}
	}
	want := call{len(rep.Placements), len(rep.Unschedulable), len(cl.Pods)}
	if got := calls[len(calls)-1]; got != want || want.failing != 2 {
		t.Errorf("last call %+v, want %+v (2 unschedulable)", got, want)
	}
}

// TestLoadedBeforeTheFirstAttempt: the benchmark's CPU clock starts at
// Loaded, so it must come once, after the loading and before any
// scheduling attempt, and Ran after the last.
func TestLoadedBeforeTheFirstAttempt(t *testing.T) {
	var seq []string
	runCluster(t, tieCluster(), nil, Options{
		Loaded:   func() { seq = append(seq, "loaded") },
		Progress: func(int, int, int) { seq = append(seq, "attempt") },
		Ran:      func() { seq = append(seq, "ran") },
	})
	if len(seq) < 3 || seq[0] != "loaded" || seq[len(seq)-1] != "ran" {
		t.Fatalf("calls %v: want loaded, the attempts, ran", seq)
	}
	for _, c := range seq[1 : len(seq)-1] {
		if c != "attempt" {
			t.Fatalf("calls %v: want loaded once, the attempts, ran", seq)
		}
	}
}

// InPlace changes where the loading fills in the pods' UIDs (in the
// caller's objects, no copy of every pod), never the report: the same
// placements, failures, groups and node usage as a run on copies.
func TestInPlaceSameReport(t *testing.T) {
	gen := func() *snapshot.Cluster {
		w, err := workload.Generate("Mixed/500Nodes", workload.Params{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return w.Cluster()
	}
	want := runCluster(t, gen(), nil, Options{})
	cl := gen()
	got := runCluster(t, cl, nil, Options{InPlace: true})
	want.Summary.DurationSeconds, want.Summary.PodsPerSecond = 0, 0
	got.Summary.DurationSeconds, got.Summary.PodsPerSecond = 0, 0
	if len(want.Placements) == 0 || len(want.Unschedulable) == 0 {
		t.Fatalf("%d placements, %d unschedulable: want both", len(want.Placements), len(want.Unschedulable))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report with InPlace (-copies +in place):\n%s", diff)
	}
	for _, p := range cl.Pods {
		if p.UID == "" {
			t.Fatalf("pod %s/%s has no UID: the run was not in place", p.Namespace, p.Name)
		}
	}
}
