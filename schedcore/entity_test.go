package schedcore_test

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestComparePodGroupMembers: kube's PodGroupMemberPodsOrderingFunc —
// priority descending, attempts descending, timestamp ascending, name.
func TestComparePodGroupMembers(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	member := func(name string, prio int32, attempts int, ts time.Time) *schedcore.QueuedPodInfo {
		return &schedcore.QueuedPodInfo{PodInfo: schedcore.NewPodInfo(schedtest.MakePod(name).Priority(prio).Obj()), Attempts: attempts, Timestamp: ts}
	}
	tests := []struct {
		name string
		a, b *schedcore.QueuedPodInfo
		want int
	}{
		{name: "higher priority first", a: member("z", 10, 0, t0.Add(time.Hour)), b: member("a", 5, 9, t0), want: -1},
		{name: "then more attempts first", a: member("z", 5, 2, t0.Add(time.Hour)), b: member("a", 5, 1, t0), want: -1},
		{name: "then older first", a: member("z", 5, 1, t0), b: member("a", 5, 1, t0.Add(time.Second)), want: -1},
		{name: "then by name", a: member("b", 5, 1, t0), b: member("a", 5, 1, t0), want: 1},
		{name: "equal", a: member("a", 5, 1, t0), b: member("a", 5, 1, t0), want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := schedcore.ComparePodGroupMembers(tt.a, tt.b); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// TestQueuedPodGroupInfo: members are kept in member order through
// AddPod/RemovePod/UpdatePod; pods of another group are ignored; the
// entity's priority is the PodGroup's.
func TestQueuedPodGroupInfo(t *testing.T) {
	prio := int32(7)
	pg := &schedulingv1beta1.PodGroup{}
	pg.Namespace, pg.Name, pg.Spec.Priority = "default", "pg", &prio
	member := func(name, group string, p int32) *schedcore.QueuedPodInfo {
		pod := schedtest.MakePod(name).Priority(p).Obj()
		pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
		return &schedcore.QueuedPodInfo{PodInfo: schedcore.NewPodInfo(pod)}
	}
	e := schedcore.NewQueuedPodGroupInfo(pg, v1.DefaultSchedulerName)
	for _, m := range []*schedcore.QueuedPodInfo{member("c", "pg", 1), member("a", "pg", 1), member("hi", "pg", 9), member("x", "other", 100)} {
		e.Group.AddPod(m)
	}
	names := func() []string {
		var out []string
		for _, p := range e.Group.UnscheduledPods() {
			out = append(out, p.Name)
		}
		return out
	}
	if diff := cmp.Diff([]string{"hi", "a", "c"}, names()); diff != "" {
		t.Errorf("members (-want +got)\n%s", diff)
	}
	if e.Group.RemovePod(schedtest.MakePod("a").Obj()) == nil || !slices.Equal(names(), []string{"hi", "c"}) {
		t.Errorf("after RemovePod(a): %v", names())
	}
	updated := member("c", "pg", 1).Pod
	updated.Labels = map[string]string{"new": "1"}
	if m := e.Group.UpdatePod(updated); m == nil || e.Group.UnscheduledPods()[1] != updated {
		t.Errorf("UpdatePod(c) did not replace the pod")
	}
	if e.Priority() != 7 || e.Group.Key().String() != "podgroup/default/pg" || e.Pod.UID != "podgroup/default/pg" {
		t.Errorf("priority %d key %s uid %s", e.Priority(), e.Group.Key(), e.Pod.UID)
	}
}
