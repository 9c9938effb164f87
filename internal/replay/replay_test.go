package replay_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	openbNodes = "../../testdata/openb/openb_node_list_all_node.csv"
	openbPods  = "../../testdata/openb/openb_pod_list_default.csv"
)

// defaults are kube's default configuration and the in-tree plugins.
func defaults(t testing.TB) replay.Options {
	t.Helper()
	cfg, err := engine.LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	return replay.Options{Options: engine.Options{Config: cfg, Registry: reg}}
}

func mustRun(t testing.TB, tr *replay.Trace, o replay.Options) *replay.Result {
	t.Helper()
	res, err := replay.Run(context.Background(), tr, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func mustTrace(t testing.TB, cl *snapshot.Cluster) *replay.Trace {
	t.Helper()
	tr, err := replay.FromCluster(cl)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// outcome is each pod's node, or "" when it was not placed.
func dryRunOutcome(t testing.TB, cl *snapshot.Cluster, o replay.Options) map[string]string {
	t.Helper()
	rep, err := dryrun.Run(context.Background(), cl, dryrun.Options{Config: o.Config, Registry: o.Registry, Seed: o.Seed, UseSeed: o.UseSeed})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range rep.Placements {
		out[p.Pod] = p.Node
	}
	for _, u := range rep.Unschedulable {
		out[u.Pod] = ""
	}
	return out
}

func replayOutcome(res *replay.Result, tr *replay.Trace) map[string]string {
	out := map[string]string{}
	for _, p := range tr.Pods {
		if p.Pod.Spec.NodeName == "" {
			out[schedcore.PodName(p.Pod)] = res.Placements[schedcore.PodName(p.Pod)]
		}
	}
	return out
}

// secondApart re-times the pending pods to arrive a second apart, in
// order, so that a replay spans minutes rather than openb's months (the
// pods left unschedulable are retried every five minutes, as kube does).
func secondApart(cl *snapshot.Cluster) *snapshot.Cluster {
	for i, p := range cl.Pods {
		p.CreationTimestamp = metav1.NewTime(openb.Epoch.Add(time.Duration(i) * time.Second))
	}
	return cl
}

// loadOpenb reads the first limit pods of openb's default trace and every
// everyNth node.
func loadOpenb(t testing.TB, limit, everyNth int, departures bool) *snapshot.Cluster {
	t.Helper()
	o := openb.Options{Limit: limit, Departures: departures}
	nodes, pods, err := openb.LoadFiles(openbNodes, openbPods, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		// What the API server (and the snapshot loader) fills in.
		p.Spec.SchedulerName = v1.DefaultSchedulerName
	}
	if everyNth > 1 {
		var some []*v1.Node
		for i, n := range nodes {
			if i%everyNth == 0 {
				some = append(some, n)
			}
		}
		nodes = some
	}
	return &snapshot.Cluster{Nodes: nodes, Pods: pods, Namespaces: []*v1.Namespace{openb.NamespaceObject(o)}}
}

func TestReplayWithoutDeparturesEqualsTheDryRunInArrivalOrder(t *testing.T) {
	tests := []struct {
		name string
		load func(t testing.TB) *snapshot.Cluster
		seed bool
	}{
		{
			name: "openb's first 800 pods, arriving a second apart, overfill a twenty-fifth of its nodes",
			load: func(t testing.TB) *snapshot.Cluster { return secondApart(loadOpenb(t, 800, 25, false)) },
		},
		{
			name: "openb's first 800 pods with seeded tie-breaks",
			load: func(t testing.TB) *snapshot.Cluster { return secondApart(loadOpenb(t, 800, 25, false)) },
			seed: true,
		},
		{
			name: "the shipped example (affinity, spread, taints, priorities, preemption) arriving at one instant",
			load: func(t testing.TB) *snapshot.Cluster {
				cl, err := snapshot.LoadPaths([]string{"../../examples/cluster.yaml"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range cl.Pods {
					if p.Spec.NodeName == "" {
						p.CreationTimestamp = metav1.Time{}
					}
				}
				return cl
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := defaults(t)
			o.Seed, o.UseSeed = 7, tt.seed
			cl := tt.load(t)
			want := dryRunOutcome(t, cl, o)
			tr := mustTrace(t, tt.load(t))
			got := replayOutcome(mustRun(t, tr, o), tr)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("replay differs from the dry-run (-dryrun +replay):\n%s", diff)
			}
			placed := 0
			for _, n := range got {
				if n != "" {
					placed++
				}
			}
			if placed == 0 || placed == len(got) {
				t.Errorf("%d of %d pods placed: the case must place some and leave some", placed, len(got))
			}
		})
	}
}

func TestSweepRunsJobsSideBySideWithTheResultsOfRunningThemOneByOne(t *testing.T) {
	tr := contended(t, 300)
	var jobs []replay.Job
	for seed := int64(1); seed <= 3; seed++ {
		o := defaults(t)
		o.Seed, o.UseSeed = seed, true
		jobs = append(jobs, replay.Job{Name: fmt.Sprint("seed ", seed), Trace: tr, Options: o})
	}
	done := 0
	got, err := replay.Sweep(context.Background(), jobs, 2, func(d, total int) { done = d })
	if err != nil {
		t.Fatal(err)
	}
	if done != len(jobs) {
		t.Errorf("progress reported %d jobs done, want %d", done, len(jobs))
	}
	for i, j := range jobs {
		want := mustRun(t, j.Trace, j.Options)
		if diff := cmp.Diff(want.Events, got[i].Events); diff != "" {
			t.Errorf("%s: the sweep's events differ from a run on its own (-alone +sweep):\n%s", j.Name, diff)
		}
	}
	// A failing job names itself and stops the sweep.
	bad := jobs[0]
	bad.Name, bad.Trace = "empty", &replay.Trace{Start: tr.Start}
	if _, err := replay.Sweep(context.Background(), []replay.Job{jobs[1], bad}, 2, nil); err == nil || err.Error() != "empty: the trace has no nodes" {
		t.Errorf("got %v, want the failing job's error", err)
	}
}
