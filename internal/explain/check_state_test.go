package explain

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// checkBothWays explains pod and checks its turn twice: with CheckTurn,
// whose dry-run loads the cluster again, and with State.CheckTurn, whose
// dry-run runs on the engine the explanation was of. The two
// explanations, turn check included, must be the same. It returns the
// state's, and whether the state's engine ran the dry-run.
func checkBothWays(t *testing.T, cl *snapshot.Cluster, pod *v1.Pod, o Options, budget int64) (*report.Explanation, bool) {
	t.Helper()
	ctx := context.Background()
	want, err := Run(ctx, cl, pod, o)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckTurn(ctx, cl, pod, want, o, budget); err != nil {
		t.Fatal(err)
	}
	s, err := NewState(ctx, cl, o)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Explain(ctx, pod)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckTurn(ctx, pod, got, budget, nil); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s/%s: the turn checked on the explanation's engine (-new engine +same engine):\n%s", pod.Namespace, pod.Name, d)
	}
	return got, s.spent
}

// TestStateCheckTurnAnswersAsANewEngine: on the example clusters (plain,
// DRA, GPUs, gangs with the Workload API), every pod's explanation and
// turn check are the same whether the dry-run loads the cluster again or
// runs on the explanation's engine, and the pending pods of the dump are
// the ones whose check runs on the explanation's engine.
func TestStateCheckTurnAnswersAsANewEngine(t *testing.T) {
	generic := schedcore.DefaultFeatures
	generic.GenericWorkload = true
	tests := []struct {
		name     string
		paths    []string
		features *schedcore.Features
	}{
		{name: "the example cluster", paths: []string{"../../examples/cluster.yaml"}},
		{name: "DRA claims from templates", paths: []string{"../../examples/dra.yaml"}},
		{name: "the GPU cluster", paths: []string{"../../examples/gpu-cluster.yaml"}},
		{name: "gangs waiting, with the Workload API", paths: []string{"../../examples/gang-cluster.yaml", "../../examples/gang-pending.yaml"}, features: &generic},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl, err := snapshot.LoadPaths(tt.paths, nil)
			if err != nil {
				t.Fatal(err)
			}
			o := options(t)
			if tt.features != nil {
				if o.Config, err = engine.LoadConfigWithFeatures("", *tt.features); err != nil {
					t.Fatal(err)
				}
				o.Features = *tt.features
			}
			pending, checked := 0, 0
			for _, p := range cl.Pods {
				rep, shared := checkBothWays(t, cl, p, o, 0)
				if p.Spec.NodeName != "" {
					if shared {
						t.Errorf("%s/%s: bound, but the state's engine was spent", p.Namespace, p.Name)
					}
					continue
				}
				pending++
				if shared {
					checked++
				}
				if rep.AtTurn == nil || !rep.AtTurn.Checked {
					t.Errorf("%s/%s: turn not checked: %+v", p.Namespace, p.Name, rep.AtTurn)
				}
			}
			if pending == 0 || checked != pending {
				t.Errorf("%d of %d pending pods checked on the explanation's engine", checked, pending)
			}
		})
	}
}

// TestStateCheckTurnSpendsTheState: after a turn check on its engine, the
// state explains nothing more; a pod from a file leaves it as it was.
func TestStateCheckTurnSpendsTheState(t *testing.T) {
	ctx := context.Background()
	a := pendingPod("a", 1, "3")
	cl := &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{a, pendingPod("b", 2, "3")}}
	o := options(t)
	o.Source = SourceFile
	file := pendingPod("new", 3, "1")
	s, err := NewState(ctx, cl, o)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Explain(ctx, file)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckTurn(ctx, file, rep, 0, nil); err != nil || s.spent {
		t.Fatalf("a pod from a file: err %v, spent %v", err, s.spent)
	}
	s.o.Source = SourceSnapshot
	rep, err = s.Explain(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckTurn(ctx, a, rep, 0, nil); err != nil || !s.spent {
		t.Fatalf("a pending pod of the dump: err %v, spent %v", err, s.spent)
	}
	if _, err := s.Explain(ctx, a); err != ErrStateSpent {
		t.Errorf("Explain after the check: err %v, want %v", err, ErrStateSpent)
	}
	if err := s.CheckTurn(ctx, a, rep, 0, nil); err != ErrStateSpent {
		t.Errorf("CheckTurn after the check: err %v, want %v", err, ErrStateSpent)
	}
}

// TestStateCheckTurnOnGeneratedClusters: the same on generated clusters
// with spreading, affinities, preemption and nominations, for pods at the
// head of the queue and further back.
func TestStateCheckTurnOnGeneratedClusters(t *testing.T) {
	for _, name := range []string{"Mixed/500Nodes", "SchedulingPodAntiAffinity/500Nodes", "TopologySpreading/500Nodes"} {
		t.Run(name, func(t *testing.T) {
			w, err := workload.Generate(name, workload.Params{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			cl := w.Cluster()
			var pending []*v1.Pod
			for _, p := range cl.Pods {
				if p.Spec.NodeName == "" {
					pending = append(pending, p)
				}
			}
			engine.SortQueueOrder(pending)
			o := options(t)
			for _, k := range []int{0, 1, 2, 5, 20, 60} {
				if k >= len(pending) {
					continue
				}
				rep, shared := checkBothWays(t, cl, pending[k], o, 0)
				if !shared || rep.AtTurn == nil || !rep.AtTurn.Checked {
					t.Errorf("%s (queue place %d): checked on the explanation's engine %v, check %+v", schedcore.PodName(pending[k]), k, shared, rep.AtTurn)
				}
			}
		})
	}
}
