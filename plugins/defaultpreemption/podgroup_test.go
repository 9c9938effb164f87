package defaultpreemption_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/plugins/defaultpreemption"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestPodGroupPostFilterEligibility transcribes kube v1.37's
// TestPodGroupEvaluator_Preempt (framework/preemption/
// podgrouppreemption_test.go) cases that end before the victims are
// chosen, and the eligibility cases of TestPodGroupEvaluator_SelectVictimsOnDomain:
// a terminating victim of preemption on a member's nominated node, at a
// priority (its PodGroup's, for a member) below the group's, means an
// ongoing preemption (Success, the members' current nominations); a
// member with preemptionPolicy Never makes the group ineligible
// (PodGroupPreemptionPolicy off); otherwise the evaluation goes on (here
// to a schedule function that fails, whose status is returned).
func TestPodGroupPostFilterEligibility(t *testing.T) {
	const low, mid, high = 10, 50, 100
	terminating := func(name, node string, prio int32, group string) *v1.Pod {
		w := schedtest.MakePod(name).UID("uid-" + name).Node(node).Priority(prio)
		p := w.Obj()
		now := metav1.Now()
		p.DeletionTimestamp = &now
		p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
		if group != "" {
			p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
		}
		return p
	}
	plain := func(name, node string, prio int32) *v1.Pod {
		return schedtest.MakePod(name).UID("uid-" + name).Node(node).Priority(prio).Obj()
	}
	member := func(name string, prio int32, nominated string) *v1.Pod {
		g := "preemptor-pg"
		p := schedtest.MakePod(name).UID("uid-" + name).Priority(prio).Obj()
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &g}
		p.Status.NominatedNodeName = nominated
		return p
	}
	group := func(name string, prio int32, all bool) *schedulingv1beta1.PodGroup {
		pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(name)}}
		pg.Spec.Priority = &prio
		pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: 1}
		if all {
			pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
		} else {
			pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{Single: &schedulingv1beta1.SingleDisruptionMode{}}
		}
		return pg
	}
	never := func(p *v1.Pod) *v1.Pod {
		n := v1.PreemptNever
		p.Spec.PreemptionPolicy = &n
		return p
	}
	nominations := func(kv ...string) map[types.NamespacedName]*schedcore.NominatingInfo {
		out := map[types.NamespacedName]*schedcore.NominatingInfo{}
		for i := 0; i < len(kv); i += 2 {
			out[types.NamespacedName{Namespace: "default", Name: kv[i]}] = &schedcore.NominatingInfo{NominatingMode: schedcore.ModeOverride, NominatedNodeName: kv[i+1]}
		}
		return out
	}
	const scheduleFailed = "stub: the group does not fit"
	tests := []struct {
		name      string
		pods      []*v1.Pod
		groups    []*schedulingv1beta1.PodGroup
		prio      int32
		members   []*v1.Pod
		wantCode  schedcore.Code
		wantMsg   string
		wantNomin map[types.NamespacedName]*schedcore.NominatingInfo
	}{
		{name: "a member's nominated node has a terminating victim: ongoing preemption",
			pods: []*v1.Pod{terminating("victim", "node1", low, "")}, prio: high,
			members:  []*v1.Pod{member("p1", high, ""), member("p2", high, "node1")},
			wantCode: schedcore.Success, wantMsg: "pod group preemption: ongoing preemption on nominated nodes", wantNomin: nominations("p1", "", "p2", "node1")},
		{name: "the terminating pod's PodGroup has the lower priority (disruption mode all)",
			pods: []*v1.Pod{terminating("victim", "node1", high, "victim-pg")}, groups: []*schedulingv1beta1.PodGroup{group("victim-pg", low, true)}, prio: high,
			members:  []*v1.Pod{member("p1", high, ""), member("p2", high, "node1")},
			wantCode: schedcore.Success, wantMsg: "pod group preemption: ongoing preemption on nominated nodes", wantNomin: nominations("p1", "", "p2", "node1")},
		{name: "the terminating pod's PodGroup has the lower priority (disruption mode single)",
			pods: []*v1.Pod{terminating("victim", "node1", high, "victim-pg")}, groups: []*schedulingv1beta1.PodGroup{group("victim-pg", low, false)}, prio: high,
			members:  []*v1.Pod{member("p1", high, ""), member("p2", high, "node1")},
			wantCode: schedcore.Success, wantMsg: "pod group preemption: ongoing preemption on nominated nodes", wantNomin: nominations("p1", "", "p2", "node1")},
		{name: "terminating pods on nodes no member is nominated to: eligible",
			pods: []*v1.Pod{terminating("victim", "node2", low, ""), plain("other-victim", "node1", low)}, prio: high,
			members:  []*v1.Pod{member("p1", high, ""), member("p2", high, "node1")},
			wantCode: schedcore.Unschedulable, wantMsg: "pod group preemption: " + scheduleFailed},
		{name: "the terminating pod's PodGroup has a higher priority: eligible",
			pods: []*v1.Pod{terminating("victim", "node1", low, "victim-pg"), plain("other-victim", "node1", low)}, groups: []*schedulingv1beta1.PodGroup{group("victim-pg", high, true)}, prio: mid,
			members:  []*v1.Pod{member("p1", mid, ""), member("p2", mid, "node1")},
			wantCode: schedcore.Unschedulable, wantMsg: "pod group preemption: " + scheduleFailed},
		{name: "a member with preemptionPolicy Never: not eligible",
			pods: []*v1.Pod{plain("p-low", "node1", low)}, prio: high,
			members:  []*v1.Pod{member("p1", high, ""), never(member("p2", high, ""))},
			wantCode: schedcore.Unschedulable, wantMsg: "pod group preemption: not eligible due to preemptionPolicy=Never."},
		{name: "nothing of lower priority",
			pods: []*v1.Pod{plain("p-high", "node1", high)}, prio: high,
			members:  []*v1.Pod{member("p1", high, "")},
			wantCode: schedcore.UnschedulableAndUnresolvable, wantMsg: "pod group preemption: No preemption victims found for incoming preemptor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := schedcore.DefaultFeatures
			f.GenericWorkload = true
			c := schedcore.NewCache(f)
			for _, n := range []string{"node1", "node2"} {
				c.AddNode(schedtest.MakeNode(n).Capacity("cpu", "2", "memory", "4Gi", "pods", "32").Obj())
			}
			for _, pg := range tt.groups {
				c.AddPodGroup(pg)
			}
			preemptor := group("preemptor-pg", tt.prio, false)
			c.AddPodGroup(preemptor)
			for _, p := range tt.pods {
				if err := c.AddPod(p); err != nil {
					t.Fatal(err)
				}
			}
			snap := schedcore.NewEmptySnapshot()
			c.UpdateSnapshot(snap)
			h := schedcore.NewHandle(snap, 1, schedcore.WithFeatures(f))
			p, err := defaultpreemption.New(context.Background(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			g := &schedcore.QueuedPodGroupInfo{Namespace: "default", Name: "preemptor-pg", Object: preemptor}
			for _, m := range tt.members {
				g.AddPod(&schedcore.QueuedPodInfo{PodInfo: schedcore.NewPodInfo(m)})
			}
			schedule := func(context.Context) (*schedcore.PodGroupAssignments, *schedcore.Status) {
				return nil, schedcore.NewStatus(schedcore.Unschedulable, scheduleFailed)
			}
			res, st := p.(schedcore.PodGroupPostFilterPlugin).PodGroupPostFilter(context.Background(), schedcore.NewCycleState(), g, schedule)
			if st.Code() != tt.wantCode || st.Message() != tt.wantMsg {
				t.Errorf("status %v %q, want %v %q", st.Code(), st.Message(), tt.wantCode, tt.wantMsg)
			}
			var got map[types.NamespacedName]*schedcore.NominatingInfo
			if res != nil {
				got = res.NominatingInfos
			}
			if diff := cmp.Diff(tt.wantNomin, got); diff != "" {
				t.Errorf("nominations (-want +got):\n%s", diff)
			}
			if snap.InMutations() {
				t.Error("the mutation session was left open")
			}
		})
	}
}
