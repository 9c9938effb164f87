package replay_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

var groupT0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// groupAt is groupT0 plus seconds.
func groupAt(sec int) metav1.Time {
	return metav1.NewTime(groupT0.Add(time.Duration(sec) * time.Second))
}

// withGates are kube's defaults with GenericWorkload on, for the engine and
// the default profile.
func withGates(t *testing.T) replay.Options {
	t.Helper()
	f := schedcore.DefaultFeatures
	f.GenericWorkload = true
	cfg, err := engine.LoadConfigWithFeatures("", f)
	if err != nil {
		t.Fatal(err)
	}
	o := defaults(t)
	o.Config, o.Features = cfg, f
	return o
}

func tracePodGroup(name string, minCount int32, created int, deleted *int) *schedulingv1beta1.PodGroup {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: name, CreationTimestamp: groupAt(created)}}
	pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}
	if deleted != nil {
		d := groupAt(*deleted)
		pg.DeletionTimestamp = &d
	}
	return pg
}

// traceMembers are n pods of group arriving at created (and leaving at
// deleted, unless nil), requesting cpu.
func traceMembers(group string, n int, cpu string, created int, deleted *int) []*v1.Pod {
	var out []*v1.Pod
	for i := range n {
		p := st.MakePod(fmt.Sprintf("%s-%d", group, i)).Namespace("ml").Req("cpu", cpu).Obj()
		p.CreationTimestamp = groupAt(created)
		if deleted != nil {
			d := groupAt(*deleted)
			p.DeletionTimestamp = &d
		}
		g := group
		p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &g}
		out = append(out, p)
	}
	return out
}

// TestReplayPodGroups: with GenericWorkload on, PodGroups arrive and
// leave at their times and their members are scheduled by the pod-group
// cycle: a gang binds whole once its minCount members are there, a gang
// that does not fit binds none until room is freed, members that arrive
// before their PodGroup wait for it; the result counts the groups.
func TestReplayPodGroups(t *testing.T) {
	nodes := []*v1.Node{
		st.MakeNode("n1").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj(),
		st.MakeNode("n2").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj(),
	}
	leave := 600
	type want struct {
		groups  []replay.GroupResult
		summary [3]int // groups, scheduled, with members pending
		// pending counts the pods pending at the end.
		pending int
	}
	tests := []struct {
		name   string
		groups []*schedulingv1beta1.PodGroup
		pods   []*v1.Pod
		want   want
	}{
		// eval fails every few seconds from 10 s on, at the group's
		// backoff pace; the departure finds it backing off, until 4 s
		// later.
		{name: "a gang binds whole once its members are there, the next once the first leaves",
			groups: []*schedulingv1beta1.PodGroup{tracePodGroup("train", 3, 0, nil), tracePodGroup("eval", 3, 0, nil)},
			pods:   append(traceMembers("train", 3, "2", 0, &leave), traceMembers("eval", 3, "2", 10, nil)...),
			want: want{groups: []replay.GroupResult{
				{PodGroup: "ml/train", Policy: "gang", MinCount: 3, Members: 3, Placed: 3, Scheduled: true, FirstPlaced: ptrTime(groupAt(0).Time),
					Condition: &replay.GroupCondition{Status: "True", Reason: "Scheduled"}},
				{PodGroup: "ml/eval", Policy: "gang", MinCount: 3, Members: 3, Placed: 3, Scheduled: true, FirstPlaced: ptrTime(groupAt(leave + 4).Time),
					Condition: &replay.GroupCondition{Status: "True", Reason: "Scheduled"}},
			}, summary: [3]int{2, 2, 0}}},
		{name: "a gang that never fits binds none and keeps kube's condition",
			groups: []*schedulingv1beta1.PodGroup{tracePodGroup("big", 3, 0, nil)},
			pods:   traceMembers("big", 3, "3", 0, nil),
			want: want{groups: []replay.GroupResult{
				{PodGroup: "ml/big", Policy: "gang", MinCount: 3, Members: 3, Pending: 3,
					Condition: &replay.GroupCondition{Status: "False", Reason: "Unschedulable", Message: "minCount (3) cannot be satisfied: 2 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor"}},
			}, summary: [3]int{1, 0, 1}, pending: 3}},
		{name: "members that arrive before their PodGroup wait for it",
			groups: []*schedulingv1beta1.PodGroup{tracePodGroup("late", 2, 60, nil)},
			pods:   traceMembers("late", 2, "1", 0, nil),
			want: want{groups: []replay.GroupResult{
				{PodGroup: "ml/late", Policy: "gang", MinCount: 2, Members: 2, Placed: 2, Scheduled: true, FirstPlaced: ptrTime(groupAt(60).Time),
					Condition: &replay.GroupCondition{Status: "True", Reason: "Scheduled"}},
			}, summary: [3]int{1, 1, 0}}},
		{name: "a PodGroup deleted before its members arrive leaves them waiting",
			groups: []*schedulingv1beta1.PodGroup{tracePodGroup("gone", 2, 0, ptrInt(5))},
			pods:   traceMembers("gone", 2, "1", 10, nil),
			want:   want{summary: [3]int{0, 0, 0}, pending: 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := &snapshot.Cluster{Nodes: nodes, Pods: tc.pods, Workloads: snapshot.Workloads{PodGroups: tc.groups}}
			res := mustRun(t, mustTrace(t, cl), withGates(t))
			if d := cmp.Diff(tc.want.groups, res.PodGroups); d != "" {
				t.Errorf("groups (-want +got):\n%s", d)
			}
			s := res.Summary
			if got := [3]int{s.PodGroups, s.PodGroupsScheduled, s.PodGroupsPending}; got != tc.want.summary {
				t.Errorf("summary groups, scheduled, pending = %v; want %v", got, tc.want.summary)
			}
			if s.Pending != tc.want.pending {
				t.Errorf("%d pods pending; want %d", s.Pending, tc.want.pending)
			}
		})
	}
}

// TestReplayPodGroupsGateOff: with the gate off the members are single
// pods (two of three fit) and no group is reported.
func TestReplayPodGroupsGateOff(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes:     []*v1.Node{st.MakeNode("n1").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj(), st.MakeNode("n2").Capacity("cpu", "4", "memory", "16Gi", "pods", "110").Obj()},
		Pods:      traceMembers("big", 3, "3", 0, nil),
		Workloads: snapshot.Workloads{PodGroups: []*schedulingv1beta1.PodGroup{tracePodGroup("big", 3, 0, nil)}},
	}
	res := mustRun(t, mustTrace(t, cl), defaults(t))
	if res.PodGroups != nil || res.Summary.PodGroups != 0 || res.Summary.Placed != 2 {
		t.Errorf("gate off: groups %v, summary %+v; want none and 2 placed", res.PodGroups, res.Summary)
	}
}

// TestTracePodGroupErrors: a PodGroup named twice or deleted before it is
// created is a trace error naming it.
func TestTracePodGroupErrors(t *testing.T) {
	early := -10
	for _, tc := range []struct {
		name   string
		groups []*schedulingv1beta1.PodGroup
		want   string
	}{
		{"named twice", []*schedulingv1beta1.PodGroup{tracePodGroup("a", 1, 0, nil), tracePodGroup("a", 1, 0, nil)}, "PodGroup ml/a: invalid trace: also at trace"},
		{"deleted before it is created", []*schedulingv1beta1.PodGroup{tracePodGroup("a", 1, 0, &early)}, "PodGroup ml/a: invalid trace: metadata.deletionTimestamp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := &snapshot.Cluster{Nodes: []*v1.Node{st.MakeNode("n1").Obj()}, Workloads: snapshot.Workloads{PodGroups: tc.groups}}
			_, err := replay.FromCluster(cl)
			if !errors.Is(err, replay.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want ErrInvalid containing %q", err, tc.want)
			}
		})
	}
}

func ptrTime(t time.Time) *time.Time { return &t }

func ptrInt(i int) *int { return &i }
