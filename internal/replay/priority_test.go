package replay_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestTracePodsGetTheirPriorityClassesPriority: a trace's pods without
// spec.priority get their priorityClassName's value and preemption policy
// (or the globalDefault class's), as admission and the dry-run give them,
// so a replay of a dump written by hand preempts as its dry-run does.
func TestTracePodsGetTheirPriorityClassesPriority(t *testing.T) {
	never := v1.PreemptNever
	classes := []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
		{ObjectMeta: metav1.ObjectMeta{Name: "polite"}, Value: 500, PreemptionPolicy: &never},
		{ObjectMeta: metav1.ObjectMeta{Name: "standard"}, Value: 10, GlobalDefault: true},
	}
	class := func(name, pc string) *v1.Pod {
		p := st.MakePod(name).Namespace("ns").Req("cpu", "3").Obj()
		p.Spec.PriorityClassName = pc
		return p
	}
	type prio struct {
		Priority int32
		Policy   string
	}
	tests := []struct {
		name         string
		pod          *v1.Pod
		want         prio
		wantWarnings int
	}{
		{"a class's value", class("a", "high"), prio{1000, ""}, 0},
		{"a class's preemption policy", class("b", "polite"), prio{500, "Never"}, 0},
		{"no class: the globalDefault class's", class("c", ""), prio{10, ""}, 0},
		{"spec.priority set: kept", func() *v1.Pod { p := class("d", "high"); p.Spec.Priority = ptr(int32(7)); return p }(), prio{7, ""}, 0},
		{"a system class the dump leaves out", class("e", "system-node-critical"), prio{2000001000, ""}, 0},
		{"a class the dump lacks: 0 and a warning", class("f", "gone"), prio{0, ""}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := &snapshot.Cluster{Nodes: []*v1.Node{st.MakeNode("n1").Capacity("cpu", "4", "pods", "10").Obj()},
				Pods: []*v1.Pod{tt.pod}, PriorityClasses: classes}
			tr, err := replay.FromCluster(cl)
			if err != nil {
				t.Fatal(err)
			}
			p := tr.Pods[0].Pod
			got := prio{Priority: schedcore.PodPriority(p)}
			if p.Spec.PreemptionPolicy != nil {
				got.Policy = string(*p.Spec.PreemptionPolicy)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("priority (-want +got):\n%s", d)
			}
			if len(cl.Warnings) != tt.wantWarnings {
				t.Errorf("warnings %q, want %d", cl.Warnings, tt.wantWarnings)
			}
		})
	}
}

// TestReplayPreemptsByPriorityClassAsTheDryRun: a pending pod whose
// priority comes only from its class preempts a running pod in a replay,
// as in the dry-run of the same objects.
func TestReplayPreemptsByPriorityClassAsTheDryRun(t *testing.T) {
	load := func() *snapshot.Cluster {
		urgent := st.MakePod("urgent").Namespace("ns").Req("cpu", "3").Obj()
		urgent.Spec.PriorityClassName = "high"
		return &snapshot.Cluster{
			Nodes:           []*v1.Node{st.MakeNode("n1").Capacity("cpu", "4", "pods", "10").Obj()},
			Pods:            []*v1.Pod{st.MakePod("low").Namespace("ns").Req("cpu", "3").Node("n1").Obj(), urgent},
			PriorityClasses: []*schedulingv1.PriorityClass{{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}},
		}
	}
	o := defaults(t)
	tr := mustTrace(t, load())
	res := mustRun(t, tr, o)
	if got := res.Placements["ns/urgent"]; got != "n1" {
		t.Errorf("replay placed ns/urgent on %q, want n1 (after preempting ns/low)", got)
	}
	dry := load()
	dry.ResolvePriorities() // as the dryrun verb loads a dump
	if want := dryRunOutcome(t, dry, o)["ns/urgent"]; want != "n1" {
		t.Errorf("the dry-run placed ns/urgent on %q", want)
	}
}

func ptr[T any](v T) *T { return &v }
