package drain

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// gateOptions are options with GenericWorkload set as asked: the default
// profile and the engine both follow it, as `--feature-gates` does.
func gateOptions(t *testing.T, generic bool) Options {
	t.Helper()
	f := schedcore.DefaultFeatures
	f.GenericWorkload = generic
	cfg, err := engine.LoadConfigWithFeatures("", f)
	if err != nil {
		t.Fatal(err)
	}
	o := options(t)
	o.Config, o.Features = cfg, f
	return o
}

// member is a running Job pod of PodGroup group (spec.schedulingGroup).
func member(name, group, node, cpu string, created int64) *v1.Pod {
	p := ready(owned(st.MakePod(name).Namespace("default").Req("cpu", cpu).Node(node).Created(created).Obj(), "batch/v1", "Job", group))
	g := group
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &g}
	return p
}

func gangPodGroup(name string, minCount int32) *schedulingv1beta1.PodGroup {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}
	pg.Status.Conditions = []metav1.Condition{{Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionTrue, Reason: "Scheduled"}}
	return pg
}

// TestDrainGangs: with GenericWorkload on, the evicted members of a gang
// are re-placed through the pod-group cycle, so they come back together
// or not at all, and drain reports the gangs it breaks; with the gate off
// they are single pods and no gang is reported.
func TestDrainGangs(t *testing.T) {
	// "old" is drained. "a" has 1 cpu free, "b" 500m: of two 1-cpu
	// members one fits.
	nodes := []*v1.Node{node("old", "8"), node("a", "4"), node("b", "4")}
	fillers := []*v1.Pod{rsPod("fill-a", "a", "3", 1), rsPod("fill-b", "b", "3500m", 1)}
	tight := append(fillers,
		member("train-0", "train", "old", "1", 5), member("train-1", "train", "old", "1", 5),
		member("train-2", "train", "a", "0", 5), member("train-3", "train", "b", "0", 5))
	roomy := []*v1.Pod{
		member("train-0", "train", "old", "1", 5), member("train-1", "train", "old", "1", 5),
		member("train-2", "train", "a", "1", 5), member("train-3", "train", "b", "1", 5),
	}
	lost := func(pods []*v1.Pod) []*v1.Pod {
		out := append([]*v1.Pod(nil), pods...)
		out[1] = out[1].DeepCopy()
		out[1].OwnerReferences = nil
		return out
	}
	const fitMsg = "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient cpu."
	tests := []struct {
		name    string
		generic bool
		pods    []*v1.Pod
		force   bool
		basic   bool
		moves   []string
		// reasons are the messages of pods left pending.
		reasons map[string]string
		gangs   []report.DrainGang
		broken  int
	}{
		{name: "a gang whose evicted members all fit is whole", generic: true, pods: roomy,
			moves: []string{"default/train-0 -> a", "default/train-1 -> b"},
			gangs: []report.DrainGang{{PodGroup: "default/train", Policy: "gang", MinCount: 4, Members: 4, Evicted: 2, Placed: 2}}},
		{name: "a gang of which one evicted member fits gets neither back", generic: true, pods: tight,
			moves: []string{"default/train-0 -> <pending>", "default/train-1 -> <pending>"},
			// The member placed before the group failed gets the group's
			// status, the one that did not fit its FitError.
			reasons: map[string]string{
				"default/train-0": "pod group is unschedulable, minCount (4) cannot be satisfied: 3 scheduled, 0 remaining" + noVictims,
				"default/train-1": fitMsg,
			},
			gangs: []report.DrainGang{{PodGroup: "default/train", Policy: "gang", MinCount: 4, Members: 4, Evicted: 2, Pending: 2, Broken: true,
				Message: "pod group is unschedulable, minCount (4) cannot be satisfied: 3 scheduled, 0 remaining" + noVictims}},
			broken: 1},
		{name: "with the gate off the members are single pods: one fits", generic: false, pods: tight,
			moves: []string{"default/train-0 -> a", "default/train-1 -> <pending>"}},
		// Three members left of minCount 4: GangScheduling's PreEnqueue
		// holds the recreated one, though it would fit.
		{name: "a member nothing recreates breaks its gang and holds the others", generic: true, pods: lost(roomy), force: true,
			moves:   []string{"default/train-0 -> <pending>"},
			reasons: map[string]string{"default/train-0": "waiting for minCount pods from a gang to appear in scheduling queue"},
			gangs: []report.DrainGang{{PodGroup: "default/train", Policy: "gang", MinCount: 4, Members: 4, Evicted: 2, Pending: 1, Lost: 1, Broken: true,
				Message: "waiting for minCount pods from a gang to appear in scheduling queue"}},
			broken: 1},
		{name: "a lost member of a basic group breaks it", generic: true, pods: lost(roomy), force: true, basic: true,
			moves: []string{"default/train-0 -> a"},
			gangs: []report.DrainGang{{PodGroup: "default/train", Policy: "basic", Members: 4, Evicted: 2, Placed: 1, Lost: 1, Broken: true,
				Message: "1 evicted member(s) not recreated"}},
			broken: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pg := gangPodGroup("train", 4)
			if tc.basic {
				pg.Spec.SchedulingPolicy = schedulingv1beta1.PodGroupSchedulingPolicy{Basic: &schedulingv1beta1.BasicSchedulingPolicy{}}
			}
			cl := &snapshot.Cluster{Nodes: nodes, Pods: tc.pods, Workloads: snapshot.Workloads{PodGroups: []*schedulingv1beta1.PodGroup{pg}}}
			o := gateOptions(t, tc.generic)
			o.Force = tc.force
			r, err := Run(context.Background(), cl, []string{"old"}, o)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.moves, moves(r)); d != "" {
				t.Errorf("moves (-want +got):\n%s", d)
			}
			for _, m := range r.Moves {
				if want, ok := tc.reasons[m.Pod]; ok && m.Reason != want {
					t.Errorf("%s: %q, want %q", m.Pod, m.Reason, want)
				}
			}
			if d := cmp.Diff(tc.gangs, r.Gangs); d != "" {
				t.Errorf("gangs (-want +got):\n%s", d)
			}
			if r.Summary.BrokenGangs != tc.broken || (tc.broken > 0 && r.Complete) {
				t.Errorf("summary %+v complete %v; want %d broken", r.Summary, r.Complete, tc.broken)
			}
		})
	}
}

// TestDrainGangsTable: the table's group section and summary.
func TestDrainGangsTable(t *testing.T) {
	r := &report.Drain{Action: "cordon", Nodes: []report.DrainNode{{Node: "old", Drained: true}},
		Gangs: []report.DrainGang{
			{PodGroup: "default/infer", Policy: "basic", Members: 3, Evicted: 1, Placed: 1},
			{PodGroup: "default/train", Policy: "gang", MinCount: 4, Members: 4, Evicted: 2, Pending: 2, Broken: true,
				Message: "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining, " + fmt.Sprint("and a long tail that the table cuts at eighty characters")},
		},
		Summary: report.DrainSummary{Evicted: 3, Placed: 1, Pending: 2, BrokenGangs: 1}}
	var b strings.Builder
	if err := report.WriteDrain(&b, r, "table"); err != nil {
		t.Fatal(err)
	}
	want := `Drain (cordon): old

POD  FROM  TO  REASON

Pod groups that lose members (kube binds a gang's pending members together or not at all):
PODGROUP       MIN  MEMBERS  EVICTED  PLACED  PENDING  LOST  GANG    MESSAGE
default/infer  -    3        1        1       0        0     whole   -
default/train  4    4        2        0       2        0     broken  minCount (4) cannot be satisfied: 3 scheduled, 0 remaining, and a long tail t...

Evicted: 3, placed: 1, pending: 2, lost: 0, refused: 0, stay: 0, preempted: 0, gangs broken: 1 of 2

Some pods would not find a node, or could not leave (exit status 3).
`
	if d := cmp.Diff(want, b.String()); d != "" {
		t.Errorf("table (-want +got):\n%s", d)
	}
}

// noVictims is the tail kube's default profile gives a gang that fails:
// DefaultPreemption's PodGroupPostFilter found nothing to evict (its
// UnschedulableAndUnresolvable drops DynamicResources' sentence).
const noVictims = ", pod group preemption: No preemption victims found for incoming preemptor"
