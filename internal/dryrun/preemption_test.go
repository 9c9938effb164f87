package dryrun

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// preemptionCluster: two 2-cpu nodes full of low-priority pods, a PDB
// guarding the pods on n0, and two pending pods: "urgent" (priority 100)
// and "polite" (priority 100, preemptionPolicy Never).
func preemptionCluster() *snapshot.Cluster {
	never := v1.PreemptNever
	cl := &snapshot.Cluster{}
	for _, n := range []string{"n0", "n1"} {
		cl.Nodes = append(cl.Nodes, schedtest.MakeNode(n).Capacity("cpu", "2", "memory", "8Gi").Obj())
	}
	cl.Pods = []*v1.Pod{
		schedtest.MakePod("guarded-a").Namespace("ns").Node("n0").Label("app", "guarded").Priority(1).Req("cpu", "1").Obj(),
		schedtest.MakePod("guarded-b").Namespace("ns").Node("n0").Label("app", "guarded").Priority(1).Req("cpu", "1").Obj(),
		schedtest.MakePod("batch-a").Namespace("ns").Node("n1").Priority(5).Req("cpu", "1").Obj(),
		schedtest.MakePod("batch-b").Namespace("ns").Node("n1").Priority(5).Req("cpu", "1").Obj(),
		schedtest.MakePod("urgent").Namespace("ns").Priority(100).Req("cpu", "1").Created(1).Obj(),
		func() *v1.Pod {
			p := schedtest.MakePod("polite").Namespace("ns").Priority(100).Req("cpu", "2").Created(2).Obj()
			p.Spec.PreemptionPolicy = &never
			return p
		}(),
	}
	cl.PDBs = []*policyv1.PodDisruptionBudget{{
		ObjectMeta: metav1.ObjectMeta{Name: "guard", Namespace: "ns"},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}}
	return cl
}

func TestPreemption(t *testing.T) {
	tests := []struct {
		name          string
		opts          Options
		wantPlaced    []string
		wantEvictions []report.Eviction
		wantNominated []report.Nomination
		wantMessages  map[string]string
	}{
		{
			name:       "the victim is taken from the node without PDB violations and the preemptor lands there",
			wantPlaced: []string{"ns/urgent->n1"},
			// batch-a and batch-b tie on priority and (missing) start time:
			// the first in node order is reprieved.
			wantEvictions: []report.Eviction{{Pod: "ns/batch-b", Node: "n1", Preemptor: "ns/urgent"}},
			wantNominated: []report.Nomination{{Pod: "ns/urgent", Node: "n1"}},
			wantMessages: map[string]string{
				"ns/polite": "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never.",
			},
		},
		{
			name: "--no-preemption leaves both pods pending with kube's plain message",
			opts: Options{NoPreemption: true},
			wantMessages: map[string]string{
				"ns/urgent": "0/2 nodes are available: 2 Insufficient cpu.",
				"ns/polite": "0/2 nodes are available: 2 Insufficient cpu.",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := runCluster(t, preemptionCluster(), nil, tc.opts)
			if diff := cmp.Diff(tc.wantPlaced, placements(rep)); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
			want := tc.wantEvictions
			if want == nil {
				want = []report.Eviction{}
			}
			if diff := cmp.Diff(want, rep.Evictions); diff != "" {
				t.Errorf("evictions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNominated, rep.Nominations); diff != "" {
				t.Errorf("nominations (-want +got):\n%s", diff)
			}
			got := map[string]string{}
			for _, u := range rep.Unschedulable {
				got[u.Pod] = u.Message
			}
			if diff := cmp.Diff(tc.wantMessages, got); diff != "" {
				t.Errorf("unschedulable (-want +got):\n%s", diff)
			}
		})
	}
}
