package runtime

import (
	"context"
	"testing"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestUpdatePodGroupCondition transcribes kube's TestUpdatePodGroupCondition
// (schedule_one_podgroup_test.go, §6 U7): a True condition never goes back
// to False, the same status keeps its LastTransitionTime, the generation
// is observed, and an unchanged condition writes nothing.
func TestUpdatePodGroupCondition(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cond := func(status metav1.ConditionStatus, reason, msg string, at time.Time, gen int64) metav1.Condition {
		return metav1.Condition{Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: status, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(at), ObservedGeneration: gen}
	}
	tests := []struct {
		name     string
		existing []metav1.Condition
		set      metav1.Condition
		want     []metav1.Condition // nil: nothing written
	}{
		{"first condition", nil, cond(metav1.ConditionFalse, "Unschedulable", "m", time.Time{}, 0),
			[]metav1.Condition{cond(metav1.ConditionFalse, "Unschedulable", "m", t0.Add(time.Hour), 3)}},
		{"True never regresses", []metav1.Condition{cond(metav1.ConditionTrue, "Scheduled", "", t0, 3)}, cond(metav1.ConditionFalse, "Unschedulable", "m", time.Time{}, 0), nil},
		{"False to True", []metav1.Condition{cond(metav1.ConditionFalse, "Unschedulable", "m", t0, 2)}, cond(metav1.ConditionTrue, "Scheduled", "", time.Time{}, 0),
			[]metav1.Condition{cond(metav1.ConditionTrue, "Scheduled", "", t0.Add(time.Hour), 3)}},
		{"same status keeps its transition time", []metav1.Condition{cond(metav1.ConditionFalse, "Unschedulable", "m", t0, 2)}, cond(metav1.ConditionFalse, "Unschedulable", "n", time.Time{}, 0),
			[]metav1.Condition{cond(metav1.ConditionFalse, "Unschedulable", "n", t0, 3)}},
		{"unchanged writes nothing", []metav1.Condition{cond(metav1.ConditionFalse, "Unschedulable", "m", t0, 3)}, cond(metav1.ConditionFalse, "Unschedulable", "m", time.Time{}, 0), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []metav1.Condition
			s := &Scheduler{Clock: clocktesting.NewFakePassiveClock(t0.Add(time.Hour))}
			s.Hooks.PodGroupStatus = func(_ context.Context, _ *schedulingv1beta1.PodGroup, st *schedulingv1beta1.PodGroupStatus) {
				got = st.Conditions
			}
			pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: "pg", Generation: 3}, Status: schedulingv1beta1.PodGroupStatus{Conditions: tt.existing}}
			s.updatePodGroupCondition(context.Background(), pg, tt.set)
			if len(got) != len(tt.want) {
				t.Fatalf("written %v, want %v", got, tt.want)
			}
			for i := range got {
				if !got[i].LastTransitionTime.Equal(&tt.want[i].LastTransitionTime) {
					t.Errorf("LastTransitionTime %v, want %v", got[i].LastTransitionTime, tt.want[i].LastTransitionTime)
				}
				got[i].LastTransitionTime, tt.want[i].LastTransitionTime = metav1.Time{}, metav1.Time{}
				if got[i] != tt.want[i] {
					t.Errorf("condition %+v, want %+v", got[i], tt.want[i])
				}
			}
		})
	}
}

// TestGroupStatusMessages: kube's Status.Message puts an attached error
// first; the group statuses are built to read the same here.
func TestGroupStatusMessages(t *testing.T) {
	tests := []struct {
		st   *schedcore.Status
		want string
	}{
		{groupUnschedulable(), "pod group is unschedulable"},
		{groupUnschedulable("minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"), "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"},
		{cloneStatus(groupUnschedulable("x")), "pod group is unschedulable, x"},
	}
	for _, tt := range tests {
		if got := tt.st.Message(); got != tt.want {
			t.Errorf("Message() = %q, want %q", got, tt.want)
		}
		if got := tt.st.AsError(); got != errPodGroupUnschedulable {
			t.Errorf("AsError() = %v, want errPodGroupUnschedulable", got)
		}
	}
}
