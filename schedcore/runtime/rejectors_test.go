package runtime_test

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// refuser rejects the pods labelled refuse=<its name> on every node and
// registers one event of its own (a Node event with its label), whose hint
// always queues.
type refuser struct {
	name  string
	event schedcore.ClusterEvent
}

func (r refuser) Name() string { return r.name }
func (r refuser) Filter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ *schedcore.NodeInfo) *schedcore.Status {
	if pod.Labels["refuse"] == r.name {
		return schedcore.NewStatus(schedcore.Unschedulable, "refused by "+r.name)
	}
	return nil
}
func (r refuser) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{{Event: r.event, QueueingHintFn: func(logr.Logger, *v1.Pod, any, any) (schedcore.QueueingHint, error) {
		return schedcore.Queue, nil
	}}}, nil
}

// TestFailedPodsKeepTheirOwnRejectors: the queue files a pod of the
// unschedulable pool under the rejector plugins it is handed
// (AddUnschedulableIfNotPresent), and an event visits only the pods filed
// under the plugins that registered it. The failure handling hands over
// its FitError's own sets: were they shared with, or reused by, a later
// cycle, the first pod's rejectors would turn into the second's and the
// event of its own rejector would no longer move it.
func TestFailedPodsKeepTheirOwnRejectors(t *testing.T) {
	eventA := schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add, CustomLabel: "A"}
	eventB := schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Delete, CustomLabel: "B"}
	reg := schedcore.Registry{
		"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return slots{}, nil
		}},
		"RefuseA": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return refuser{"RefuseA", eventA}, nil
		}},
		"RefuseB": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return refuser{"RefuseB", eventB}, nil
		}},
	}
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}, {Name: "RefuseA"}, {Name: "RefuseB"}}},
	}}
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for _, n := range []string{"n1", "n2", "n3"} {
		cache.AddNode(schedtest.MakeNode(n).Label("slots", "5").Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	profiles := map[string]*schedruntime.Framework{name: fw}
	q := queue.New(fw.QueueSortLess(), profiles)
	s := schedruntime.NewScheduler(cache, q, profiles, snap, &schedruntime.Algorithm{})
	s.SyncBinding = true
	schedule := func(pod *v1.Pod) {
		t.Helper()
		q.Add(s.Logger, pod)
		qpi, ok := q.TryPop(s.Logger)
		if !ok {
			t.Fatalf("%s not in activeQ", pod.Name)
		}
		s.ScheduleOnePod(context.Background(), qpi)
	}
	// Pod a fails by RefuseA, then pod b by RefuseB, with successful
	// cycles around them.
	schedule(schedtest.MakePod("ok-1").Label("slots", "1").Obj())
	schedule(schedtest.MakePod("a").Label("slots", "1").Label("refuse", "RefuseA").Obj())
	schedule(schedtest.MakePod("ok-2").Label("slots", "1").Obj())
	schedule(schedtest.MakePod("b").Label("slots", "1").Label("refuse", "RefuseB").Obj())
	schedule(schedtest.MakePod("ok-3").Label("slots", "1").Obj())
	pool := func() map[string]bool {
		out := map[string]bool{}
		for _, p := range q.UnschedulablePods() {
			out[p.Name] = true
		}
		return out
	}
	if got := pool(); !got["a"] || !got["b"] || len(got) != 2 {
		t.Fatalf("unschedulable pool %v, want a and b", got)
	}
	q.MoveAllToActiveOrBackoffQueue(s.Logger, eventA, nil, schedtest.MakeNode("n4").Obj(), nil)
	if got := pool(); got["a"] || !got["b"] {
		t.Fatalf("after RefuseA's event the pool holds %v, want b only", got)
	}
	q.MoveAllToActiveOrBackoffQueue(s.Logger, eventB, schedtest.MakeNode("n1").Obj(), nil, nil)
	if got := pool(); len(got) != 0 {
		t.Fatalf("after RefuseB's event the pool holds %v, want nothing", got)
	}
}
