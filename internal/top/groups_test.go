package top

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// TestListPendingGroups: the pending pods are gathered by the PodGroup
// they name; each group gets its PodGroup's policy and condition, a group
// whose PodGroup is not there is missing, oldest first; pods in no group
// make no group.
func TestListPendingGroups(t *testing.T) {
	train := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train"}}
	train.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: 8}
	train.Status.Conditions = []metav1.Condition{{Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionFalse, Reason: "Unschedulable",
		Message: "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining"}}
	basic := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "serve"}}
	basic.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
	other := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "idle"}}
	pods := []PendingPod{
		{Namespace: "ml", Name: "train-0", Age: 5 * time.Minute, PodGroup: "train"},
		{Namespace: "ml", Name: "train-1", Age: 4 * time.Minute, PodGroup: "train"},
		{Namespace: "ml", Name: "serve-0", Age: time.Minute, PodGroup: "serve"},
		{Namespace: "ml", Name: "orphan-0", Age: 2 * time.Minute, PodGroup: "missing"},
		{Namespace: "web", Name: "web-0", Age: 9 * time.Minute},
	}
	for _, tc := range []struct {
		name    string
		objects []runtime.Object
		pods    []PendingPod
		want    []PendingGroup
	}{
		{name: "groups with their PodGroups", objects: []runtime.Object{train, basic, other}, pods: pods, want: []PendingGroup{
			{Namespace: "ml", Name: "train", Policy: "gang", MinCount: 8, Pending: 2, Age: 5 * time.Minute,
				Status: "False", Reason: "Unschedulable", Message: "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining"},
			{Namespace: "ml", Name: "missing", Pending: 1, Age: 2 * time.Minute, Missing: true},
			{Namespace: "ml", Name: "serve", Policy: "basic", Pending: 1, Age: time.Minute},
		}},
		{name: "no pod in a group lists nothing", objects: []runtime.Object{train}, pods: pods[4:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ListPendingGroups(context.Background(), fake.NewClientset(tc.objects...), "", tc.pods)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("groups (-want +got):\n%s", d)
			}
		})
	}
}

// TestListPendingNamesThePodGroup: a pending pod's PodGroup is its
// spec.schedulingGroup.podGroupName.
func TestListPendingNamesThePodGroup(t *testing.T) {
	g := "train"
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ml", Name: "train-0"}, Spec: v1.PodSpec{SchedulingGroup: &v1.PodSchedulingGroup{PodGroupName: &g}},
		Status: v1.PodStatus{Phase: v1.PodPending}}
	got, err := ListPending(context.Background(), fake.NewClientset(pod), "", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].PodGroup != "train" {
		t.Errorf("pending %+v; want ml/train-0 in PodGroup train", got)
	}
}
