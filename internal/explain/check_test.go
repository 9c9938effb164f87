package explain

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestCheckTurnSaysWhetherTheDryRunAgrees: an explanation as listed of a
// pending pod says whether the dry-run's verdict at the pod's turn is the
// same, and when the dry-run up to its turn is too big, that it was not
// checked.
func TestCheckTurnSaysWhetherTheDryRunAgrees(t *testing.T) {
	gated := pendingPod("gated", 1, "1")
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "wait"}}
	tests := []struct {
		name   string
		cl     *snapshot.Cluster
		pod    *v1.Pod
		budget int64
		want   *report.TurnCheck // Message: a prefix
	}{
		{
			name: "pods ahead fill the nodes: schedulable as listed, not at its turn",
			cl:   &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{pendingPod("a", 1, "3"), pendingPod("b", 2, "3"), pendingPod("c", 3, "3")}},
			pod:  pendingPod("c", 3, "3"),
			want: &report.TurnCheck{Checked: true, Turn: &report.ExplainTurn{Attempt: 1, PlacedBefore: 2}, Message: "0/2 nodes are available: 2 Insufficient cpu."},
		},
		{
			name: "the first pod of the queue: the same node both ways",
			cl:   &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{pendingPod("a", 1, "3"), pendingPod("b", 2, "3")}},
			pod:  pendingPod("a", 1, "3"),
			want: &report.TurnCheck{Checked: true, Agrees: true, Turn: &report.ExplainTurn{Attempt: 1, Node: "n1"}},
		},
		{
			name: "too big for either: unschedulable both ways",
			cl:   &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{pendingPod("a", 1, "3"), pendingPod("huge", 2, "5")}},
			pod:  pendingPod("huge", 2, "5"),
			want: &report.TurnCheck{Checked: true, Agrees: true, Turn: &report.ExplainTurn{Attempt: 1, PlacedBefore: 1}, Message: "0/2 nodes are available: 2 Insufficient cpu."},
		},
		{
			name: "a pod that preempts: unschedulable as listed, placed at its turn",
			cl: &snapshot.Cluster{Nodes: []*v1.Node{node("n1").Obj()}, Pods: []*v1.Pod{
				st.MakePod("low").Namespace("ns").Req("cpu", "3").Priority(1).Node("n1").Obj(),
				st.MakePod("high").Namespace("ns").Req("cpu", "3").Priority(10).Created(1).Obj(),
			}},
			pod:  st.MakePod("high").Namespace("ns").Req("cpu", "3").Priority(10).Created(1).Obj(),
			want: &report.TurnCheck{Checked: true, Turn: &report.ExplainTurn{Attempt: 2, EvictedBefore: 1, Node: "n1"}},
		},
		{
			name: "a pod from a file queues behind the pending pods",
			cl:   &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{pendingPod("a", 1, "3"), pendingPod("b", 2, "3")}},
			pod:  st.MakePod("new").Namespace("ns").Req("cpu", "3").Obj(),
			want: &report.TurnCheck{Checked: true, Turn: &report.ExplainTurn{Attempt: 1, PlacedBefore: 2}, Message: "0/2 nodes are available: 2 Insufficient cpu."},
		},
		{
			name: "a gated pod gets no cycle either way",
			cl:   &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{gated}},
			pod:  gated,
			want: &report.TurnCheck{Checked: true, Agrees: true, NeverAttempted: "it has scheduling gates"},
		},
		{
			name: "a bound pod is not in the dry-run: nothing to check",
			cl:   &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{pendingPod("a", 1, "3"), st.MakePod("b").Namespace("ns").Node("n2").Obj()}},
			pod:  st.MakePod("b").Namespace("ns").Node("n2").Obj(),
		},
		{
			name:   "the pods ahead alone are over the budget: not started",
			cl:     &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{pendingPod("a", 1, "1"), pendingPod("b", 2, "1"), pendingPod("c", 3, "1")}},
			pod:    pendingPod("c", 3, "1"),
			budget: 5,
			want:   &report.TurnCheck{Skipped: "the dry-run up to its turn evaluates at least 6 nodes (2 pods ahead and itself × 2 nodes), over the check's 5"},
		},
		{
			name: "an unschedulable pod's dry-run runs on past its first attempt: stopped at the budget",
			cl: &snapshot.Cluster{Nodes: twoNodes(), Pods: []*v1.Pod{pendingPod("a", 1, "3"), pendingPod("b", 2, "3"), pendingPod("c", 3, "3"),
				pendingPod("d", 4, "3"), pendingPod("e", 5, "3")}},
			pod:    pendingPod("c", 3, "3"),
			budget: 6,
			want:   &report.TurnCheck{Skipped: "the dry-run up to its turn evaluates more than 6 nodes (scheduling attempts × 2 nodes), the check's bound"},
		},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := options(t)
			rep, err := Run(ctx, tt.cl, tt.pod, o)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckTurn(ctx, tt.cl, tt.pod, rep, o, tt.budget); err != nil {
				t.Fatal(err)
			}
			got := rep.AtTurn
			if got != nil && tt.want != nil && tt.want.Message != "" && strings.HasPrefix(got.Message, tt.want.Message) {
				cp := *got
				cp.Message = tt.want.Message
				got = &cp
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("AtTurn (-want +got):\n%s", d)
			}
		})
	}
}

// TestCheckTurnOnTheExampleCluster: on examples/cluster.yaml, every
// pending pod's check gives the dry-run's own answer (node, or message),
// and the six pods dryrun reports unschedulable that fit as listed are the
// disagreements.
func TestCheckTurnOnTheExampleCluster(t *testing.T) {
	cl, err := snapshot.LoadPaths([]string{"../../examples/cluster.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	o := options(t)
	dr, err := dryrun.Run(ctx, cl, dryrun.Options{Config: o.Config, Registry: o.Registry})
	if err != nil {
		t.Fatal(err)
	}
	placed, failed := map[string]string{}, map[string]string{}
	for _, p := range dr.Placements {
		placed[p.Pod] = p.Node
	}
	for _, u := range dr.Unschedulable {
		failed[u.Pod] = u.Message
	}
	var disagree []string
	checked := 0
	for _, p := range cl.Pods {
		key := p.Namespace + "/" + p.Name
		node, ok := placed[key]
		msg, unsched := failed[key]
		if !ok && !unsched {
			continue // bound
		}
		rep, err := Run(ctx, cl, p, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckTurn(ctx, cl, p, rep, o, 0); err != nil {
			t.Fatal(err)
		}
		c := rep.AtTurn
		if c == nil || !c.Checked || c.Turn == nil {
			t.Errorf("%s: not checked: %+v", key, c)
			continue
		}
		checked++
		if c.Turn.Node != node {
			t.Errorf("%s: at its turn on %q, the dry-run placed it on %q", key, c.Turn.Node, node)
		}
		if unsched && !strings.HasPrefix(msg, strings.TrimSuffix(c.Message, ".")) {
			t.Errorf("%s: at its turn %q, the dry-run's message %q", key, c.Message, msg)
		}
		if c.Agrees != ((rep.Selected == "") == unsched) {
			t.Errorf("%s: agrees %v, but selected as listed %q and the dry-run's node %q", key, c.Agrees, rep.Selected, node)
		}
		if !c.Agrees {
			disagree = append(disagree, key)
		}
	}
	want := []string{"ingress/ingress-nginx-5", "batch/render-2", "batch/render-3", "batch/render-4", "batch/render-5", "data/zookeeper-3"}
	if d := cmp.Diff(want, disagree); d != "" {
		t.Errorf("disagreements (-want +got):\n%s", d)
	}
	if checked != len(dr.Placements)+len(dr.Unschedulable) {
		t.Errorf("checked %d pods, the dry-run has %d", checked, len(dr.Placements)+len(dr.Unschedulable))
	}
}
