package live

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestPodStatusPatch(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC))
	earlier := metav1.NewTime(now.Add(-time.Hour))
	const msg = "0/3 nodes are available: 3 Insufficient cpu."
	pending := func(conds ...v1.PodCondition) *v1.Pod {
		p := schedtest.MakePod("p").Obj()
		p.Generation = 2
		p.Status.Conditions = conds
		return p
	}
	failedCond := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable, Message: msg, ObservedGeneration: 2, LastTransitionTime: earlier}
	withNNN := func(p *v1.Pod, n string) *v1.Pod { p.Status.NominatedNodeName = n; return p }
	override := func(n string) *schedcore.NominatingInfo {
		return &schedcore.NominatingInfo{NominatedNodeName: n, NominatingMode: schedcore.ModeOverride}
	}
	tests := []struct {
		name       string
		pod        *v1.Pod
		reason     string
		msg        string
		nominating *schedcore.NominatingInfo
		want       string
	}{
		{
			name: "the first failure adds the condition, transitioned now, observed at the pod's generation",
			pod:  pending(), reason: v1.PodReasonUnschedulable, msg: msg,
			want: `{"status":{"conditions":[{"lastProbeTime":null,"lastTransitionTime":"2026-11-01T12:00:00Z","message":"0/3 nodes are available: 3 Insufficient cpu.","observedGeneration":2,"reason":"Unschedulable","status":"False","type":"PodScheduled"}]}}`,
		},
		{
			name: "the same failure again sends nothing",
			pod:  pending(failedCond), reason: v1.PodReasonUnschedulable, msg: msg,
		},
		{
			name: "a new message keeps the transition time of the unchanged status",
			pod:  pending(failedCond), reason: v1.PodReasonUnschedulable, msg: "0/4 nodes are available: 4 Too many pods.",
			want: `{"status":{"$setElementOrder/conditions":[{"type":"PodScheduled"}],"conditions":[{"message":"0/4 nodes are available: 4 Too many pods.","type":"PodScheduled"}]}}`,
		},
		{
			name: "a scheduler error after unschedulable changes the reason",
			pod:  pending(failedCond), reason: v1.PodReasonSchedulerError, msg: msg,
			want: `{"status":{"$setElementOrder/conditions":[{"type":"PodScheduled"}],"conditions":[{"reason":"SchedulerError","type":"PodScheduled"}]}}`,
		},
		{
			name: "a nomination sets the nominated node name",
			pod:  pending(failedCond), reason: v1.PodReasonUnschedulable, msg: msg, nominating: override("n2"),
			want: `{"status":{"nominatedNodeName":"n2"}}`,
		},
		{
			name: "clearing the nomination removes the nominated node name",
			pod:  withNNN(pending(failedCond), "n2"), reason: v1.PodReasonUnschedulable, msg: msg, nominating: override(""),
			want: `{"status":{"nominatedNodeName":null}}`,
		},
		{
			name: "a no-op nomination leaves the nominated node name",
			pod:  withNNN(pending(failedCond), "n2"), reason: v1.PodReasonUnschedulable, msg: msg,
			nominating: &schedcore.NominatingInfo{NominatedNodeName: "n3", NominatingMode: schedcore.ModeNoop},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.pod.DeepCopy()
			patch, err := podStatusPatch(tt.pod, unschedulableCondition(tt.pod, tt.reason, tt.msg), tt.nominating, now)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(patch)); diff != "" {
				t.Errorf("patch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.pod); diff != "" {
				t.Errorf("the pod was modified (-before +after):\n%s", diff)
			}
		})
	}
}
