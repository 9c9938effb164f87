package runtime_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestAssumedPodIsACopyAtItsNode: the scheduler assumes a copy of the
// queued pod (not a deep one: pods are never changed in place) that has
// the chosen node; the queued pod itself, which the driver's store and the
// informer cache hold, keeps no node. The binding cycle, the cache and the
// driver's hook all see that assumed copy, with the queued pod's terms.
func TestAssumedPodIsACopyAtItsNode(t *testing.T) {
	reg := schedcore.Registry{
		"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return slots{}, nil
		}},
	}
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}}},
	}}
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	cache.AddNode(schedtest.MakeNode("n1").Label("slots", "2").Label("zone", "z").Obj())
	snap := schedcore.NewEmptySnapshot()
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]*schedruntime.Framework{name: fw}
	q := queue.New(fw.QueueSortLess(), profiles)
	s := schedruntime.NewScheduler(cache, q, profiles, snap, &schedruntime.Algorithm{})
	s.SyncBinding = true
	var bound *schedcore.QueuedPodInfo
	s.Hooks.Scheduled = func(_ context.Context, _ *schedruntime.Framework, qpi *schedcore.QueuedPodInfo, node string, _ schedruntime.ScheduleResult) {
		if node != "n1" {
			t.Errorf("bound to %q, want n1", node)
		}
		bound = qpi
	}
	pod := schedtest.MakePod("p").UID("u1").Label("slots", "1").PodAntiAffinity("zone", map[string]string{"app": "x"}).Obj()
	q.Add(s.Logger, pod)
	qpi, ok := q.TryPop(s.Logger)
	if !ok {
		t.Fatal("p not in activeQ")
	}
	queued := qpi.PodInfo
	s.ScheduleOnePod(context.Background(), qpi)
	if bound == nil {
		t.Fatal("p was not bound")
	}
	if pod.Spec.NodeName != "" || qpi.Pod.Spec.NodeName != "" {
		t.Fatalf("the queued pod was given node %q: the assumed pod must be a copy", pod.Spec.NodeName)
	}
	if bound.Pod == pod || bound.Pod.Spec.NodeName != "n1" {
		t.Fatalf("the binding cycle got %p at %q, want a copy of %p at n1", bound.Pod, bound.Pod.Spec.NodeName, pod)
	}
	if bound.Pod.Name != pod.Name || bound.Pod.UID != pod.UID || bound.Pod.Labels["slots"] != "1" {
		t.Errorf("the assumed copy is %s/%s uid %s labels %v, want the queued pod's", bound.Pod.Namespace, bound.Pod.Name, bound.Pod.UID, bound.Pod.Labels)
	}
	if cached, ok := cache.GetPod(pod); !ok || cached != bound.Pod {
		t.Errorf("the cache holds %p, want the assumed copy %p", cached, bound.Pod)
	}
	if !cache.IsAssumedPod(pod) {
		t.Error("the pod is not assumed in the cache after binding (no confirmation came)")
	}
	if len(bound.RequiredAntiAffinityTerms) != 1 || &bound.RequiredAntiAffinityTerms[0] != &queued.RequiredAntiAffinityTerms[0] {
		t.Errorf("the assumed pod does not carry the queued pod's parsed terms")
	}
}
