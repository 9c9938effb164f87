package engine

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// A listed nominator holds the pending pods of the profiles that name a
// node in status.nominatedNodeName, in the listing's order, as the queue
// would nominate them; bound, finished, deleted pods and pods of no
// profile are not nominated.
func TestListedNominatorHoldsThePendingNominatedPodsOfTheProfiles(t *testing.T) {
	e, err := New(context.Background(), Options{}, Driver{})
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name, nominated string, edit func(*v1.Pod)) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Spec: v1.PodSpec{SchedulerName: v1.DefaultSchedulerName}, Status: v1.PodStatus{NominatedNodeName: nominated}}
		if edit != nil {
			edit(p)
		}
		return p
	}
	now := metav1.Now()
	var n ListedNominator
	if got := n.NominatedPodsForNode("a"); got != nil || n.NumNominatedPods() != 0 {
		t.Fatalf("empty nominator: %v, %d", got, n.NumNominatedPods())
	}
	n.Fill([]*v1.Pod{
		pod("z", "a", nil),
		pod("pending", "", nil),
		pod("bound", "a", func(p *v1.Pod) { p.Spec.NodeName = "b" }),
		pod("deleted", "a", func(p *v1.Pod) { p.DeletionTimestamp = &now }),
		pod("succeeded", "a", func(p *v1.Pod) { p.Status.Phase = v1.PodSucceeded }),
		pod("failed", "a", func(p *v1.Pod) { p.Status.Phase = v1.PodFailed }),
		pod("other-scheduler", "a", func(p *v1.Pod) { p.Spec.SchedulerName = "other" }),
		pod("no-scheduler-name", "a", func(p *v1.Pod) { p.Spec.SchedulerName = "" }),
		pod("b1", "b", nil),
		pod("y", "a", nil),
	}, e.Profiles)
	for node, want := range map[string][]string{"a": {"z", "no-scheduler-name", "y"}, "b": {"b1"}, "c": {}} {
		got := []string{}
		for _, pi := range n.NominatedPodsForNode(node) {
			got = append(got, pi.Pod.Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("nominated to %s: %v, want %v", node, got, want)
		}
	}
	if got := n.NumNominatedPods(); got != 4 {
		t.Errorf("%d nominated pods, want 4", got)
	}
	var _ schedcore.PodNominator = &n
}
