package e2e

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// TestRunPreemptsALowerPriorityPod: a high-priority pod that fits nowhere
// makes `run` preempt as kube-scheduler does: the low-priority victim gets
// the DisruptionTarget condition (PreemptionByScheduler) and is deleted, the
// preemptor gets status.nominatedNodeName, a Preempted event is recorded,
// and once the victim is gone (no kubelet here: the test finishes the
// graceful deletion, as the kubelet would) the preemptor is bound to the
// nominated node.
func TestRunPreemptsALowerPriorityPod(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group, profile, node = "run-preempt", "kubectl-sched-preempt", "run-preempt-a"
	for name, v := range map[string]int32{"e2e-preempt-high": 1000, "e2e-preempt-low": 10} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v}
		if _, err := c.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.Client.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	groupNodes(ctx, t, c.Client, group, cluster.NodeSpec{Name: node, Zone: "zone-a", CPU: "1", Memory: "8Gi"})
	ns := createNamespace(ctx, t, c.Client, "run-preempt")
	startRun(t, c, runOptions{profile: profile})

	low := ourPod("low", "800m", profile, group)
	low.Spec.PriorityClassName = "e2e-preempt-low"
	createPods(ctx, t, c.Client, ns, low)
	waitForPod(ctx, t, c.Client, ns, low.Name, bound)

	high := ourPod("high", "800m", profile, group)
	high.Spec.PriorityClassName = "e2e-preempt-high"
	createPods(ctx, t, c.Client, ns, high)

	victim := waitForPod(ctx, t, c.Client, ns, low.Name, func(p *v1.Pod) bool { return p.DeletionTimestamp != nil })
	dt := podCondition(victim, v1.DisruptionTarget)
	if dt == nil || dt.Status != v1.ConditionTrue || dt.Reason != v1.PodReasonPreemptionByScheduler ||
		dt.Message != profile+": preempting to accommodate a higher priority pod" {
		t.Errorf("victim's DisruptionTarget condition = %+v", dt)
	}
	got := waitForPod(ctx, t, c.Client, ns, high.Name, func(p *v1.Pod) bool { return p.Status.NominatedNodeName != "" })
	if got.Status.NominatedNodeName != node {
		t.Errorf("high nominated to %q, want %s", got.Status.NominatedNodeName, node)
	}
	// The first attempt's message ends in the preemption outcome; a retry
	// while the victim terminates says the pod waits for it.
	found := fitErrorMessage(ctx, t, c.Client, group, "Insufficient cpu") + " preemption: found a potential placement for pod on node " + node + ", preempting 1 victims"
	waiting := fitErrorMessage(ctx, t, c.Client, group, "Insufficient cpu") + " preemption: not eligible due to a terminating pod on the nominated node."
	if ps := podCondition(got, v1.PodScheduled); ps == nil || ps.Message != found && ps.Message != waiting {
		t.Errorf("high's PodScheduled condition = %+v, want the message %q", ps, found)
	}
	ev := waitForEvent(ctx, t, c.Client, ns, low.Name, "Preempted")
	if want := "Preempted by pod " + string(got.UID) + " on node " + node; ev.Note != want {
		t.Errorf("Preempted event note = %q, want %q", ev.Note, want)
	}

	// The kubelet would stop the victim and remove it; there is none.
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, low.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().Pods(ns).Get(ctx, low.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	}); err != nil {
		t.Fatalf("victim not gone: %v", err)
	}
	got = waitForPod(ctx, t, c.Client, ns, high.Name, bound)
	if got.Spec.NodeName != node {
		t.Errorf("high bound to %s, want %s", got.Spec.NodeName, node)
	}
}
