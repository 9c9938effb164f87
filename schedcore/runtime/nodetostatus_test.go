package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestFilterDiagnosisCountsEachNodeOnce checks the filter loop's bookkeeping
// of rejections: a pod whose nominated node is rejected has that node
// filtered twice (first on its own, then with every node), and it must
// still count once, with the status of the second pass; every plugin that
// rejected some node is listed, though the loop records each distinct
// plugin and code once rather than once per node.
func TestFilterDiagnosisCountsEachNodeOnce(t *testing.T) {
	reg := schedcore.Registry{
		"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return slots{}, nil
		}},
		"Veto": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return veto{}, nil }},
	}
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}, {Name: "Veto"}}},
	}}
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	// n0..n9 have i slots; the odd ones from n5 on are vetoed.
	for i := 0; i < 10; i++ {
		n := schedtest.MakeNode(fmt.Sprintf("n%d", i)).Label("slots", strconv.Itoa(i))
		if i >= 5 && i%2 == 1 {
			n = n.Label("veto", "yes")
		}
		cache.AddNode(n.Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, nominated string
		slots           int
		wantFeasible    int
		wantRejected    int
	}{
		{name: "no nominated node", slots: 4, wantFeasible: 3, wantRejected: 7},
		{name: "nominated node rejected", nominated: "n1", slots: 4, wantFeasible: 3, wantRejected: 7},
		{name: "nominated node vetoed", nominated: "n9", slots: 4, wantFeasible: 3, wantRejected: 7},
		{name: "nominated node rejected, nothing fits", nominated: "n1", slots: 20, wantRejected: 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := schedtest.MakePod("p").Label("slots", strconv.Itoa(tc.slots)).Obj()
			pod.Status.NominatedNodeName = tc.nominated
			alg := &schedruntime.Algorithm{Snapshot: snap, EvaluateAllNodes: true}
			res, diag, err := alg.SchedulePod(context.Background(), fw, schedcore.NewCycleState(), pod)
			var fe *schedcore.FitError
			if tc.wantFeasible == 0 && !errors.As(err, &fe) {
				t.Fatalf("err %v, want a FitError", err)
			}
			if tc.wantFeasible > 0 && err != nil {
				t.Fatal(err)
			}
			if got := diag.NodeToStatus.Len(); got != tc.wantRejected {
				t.Errorf("%d nodes with a status, want %d", got, tc.wantRejected)
			}
			if tc.wantFeasible > 0 && res.EvaluatedNodes != 10 {
				t.Errorf("EvaluatedNodes %d, want 10", res.EvaluatedNodes)
			}
			seen := map[string]int{}
			diag.NodeToStatus.ForEachExplicitNode(func(node string, s *schedcore.Status) { seen[node]++ })
			for node, n := range seen {
				if n != 1 {
					t.Errorf("node %s listed %d times", node, n)
				}
			}
			want := sets.New("Slots", "Veto")
			if tc.wantFeasible == 0 {
				want = sets.New("Slots")
				if msg := "0/10 nodes are available: 10 not enough slots."; fe.Error() != msg {
					t.Errorf("message %q, want %q", fe.Error(), msg)
				}
			}
			if !diag.UnschedulablePlugins.Equal(want) {
				t.Errorf("unschedulable plugins %v, want %v", sets.List(diag.UnschedulablePlugins), sets.List(want))
			}
			if tc.nominated == "n9" {
				if s := diag.NodeToStatus.Get("n9"); s.Plugin() != "Veto" {
					t.Errorf("n9's status is %v from %q, want Veto's", s, s.Plugin())
				}
			}
		})
	}
}

// TestFailedCycleKeepsItsRejections: a successful cycle gives its
// rejections' list to the next cycles (Release); a failed cycle's list is
// its FitError's until the failure is handled (the driver's hook sees every
// rejection), then goes back too: the FitError keeps its message, the same
// however many cycles follow, and no longer reaches the list.
func TestFailedCycleKeepsItsRejections(t *testing.T) {
	reg := schedcore.Registry{
		"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return slots{}, nil
		}},
		"Veto": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return veto{}, nil }},
	}
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}, {Name: "Veto"}}},
	}}
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for i := 0; i < 10; i++ {
		n := schedtest.MakeNode(fmt.Sprintf("n%d", i)).Label("slots", strconv.Itoa(i))
		if i >= 5 && i%2 == 1 {
			n = n.Label("veto", "yes")
		}
		cache.AddNode(n.Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]*schedruntime.Framework{name: fw}
	q := queue.New(fw.QueueSortLess(), profiles)
	s := schedruntime.NewScheduler(cache, q, profiles, snap, &schedruntime.Algorithm{})
	s.SyncBinding = true
	var failures []*schedcore.FitError
	var seen []int // rejected nodes the driver saw, per failure
	s.Hooks.Failed = func(_ context.Context, _ *schedruntime.Framework, _ *schedcore.QueuedPodInfo, _ string, st *schedcore.Status, _ *schedcore.NominatingInfo) {
		var fe *schedcore.FitError
		if !errors.As(st.AsError(), &fe) {
			t.Fatalf("failure %v, want a FitError", st.AsError())
		}
		failures = append(failures, fe)
		seen = append(seen, fe.Diagnosis.NodeToStatus.Len())
		for i := 0; i < 10; i++ {
			node := fmt.Sprintf("n%d", i)
			if st, ok := fe.Diagnosis.NodeToStatus.Explicit(node); !ok || st.IsSuccess() {
				t.Errorf("%s: status %v (explicit %v) in the FitError the driver is handed, want its rejection", node, st, ok)
			}
		}
	}
	schedule := func(pod *v1.Pod) {
		t.Helper()
		q.Add(s.Logger, pod)
		qpi, ok := q.TryPop(s.Logger)
		if !ok {
			t.Fatalf("%s not in activeQ", pod.Name)
		}
		s.ScheduleOnePod(context.Background(), qpi)
	}
	schedule(schedtest.MakePod("big").Label("slots", "20").Obj())
	if len(failures) != 1 {
		t.Fatalf("%d failures, want the big pod's", len(failures))
	}
	fe := failures[0]
	if seen[0] != 10 {
		t.Fatalf("the big pod's FitError had %d rejected nodes in the failure hook, want 10", seen[0])
	}
	// The failure is handled: the rejections went back to later cycles
	// and the FitError dropped them; a list another cycle fills must not
	// be reachable from it.
	if fe.Diagnosis.NodeToStatus != nil {
		t.Fatalf("the handled FitError still holds its node statuses (%d)", fe.Diagnosis.NodeToStatus.Len())
	}
	const want = "0/10 nodes are available: 10 not enough slots."
	if got := fe.Error(); got != want {
		t.Fatalf("the kept FitError reads %q, want %q", got, want)
	}
	// Successful cycles that reject nodes too, and reuse the lists they
	// give back.
	for i := 0; i < 20; i++ {
		schedule(schedtest.MakePod(fmt.Sprintf("small-%d", i)).Label("slots", "1").Obj())
	}
	if len(failures) != 1 {
		t.Fatalf("%d failures, want only the big pod's", len(failures))
	}
	if got := fe.Error(); got != want {
		t.Errorf("the kept FitError reads %q after later cycles, want %q", got, want)
	}
}
