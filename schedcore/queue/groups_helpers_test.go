package queue

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The pod group tables transcribe kube's backend/queue/scheduling_queue_test.go
// (v1.37.2) cases of that name: the same pods, initial states and
// expectations. kube's tests configure PreEnqueue and hint maps directly;
// ours build the one profile below through the real framework:
//   - preEnqueuePlugin gates pods without the label "allow" (kube's
//     preEnqueuePlugin{allowlists: ["allow"]}) and registers Pod/Add (as
//     kube's TestMoveAllToActiveOrBackoffQueuePodGroupMember) and
//     Pod/UpdatePodLabel, both always Queue: kube's other tables run
//     without a hint map, where every rejector's answer is
//     queueAfterBackoff, and a pod update there requeues;
//   - otherPlugin registers Node/Add, Queue for pod1 only.

const testPodGroupName = "pg-test"

var pvAdd = schedcore.ClusterEvent{Resource: schedcore.PersistentVolume, ActionType: schedcore.Add}

// groupMember is kube's st.MakePod().Name(name).Namespace("ns1").UID(name)
// .PodGroupName("pg-test"), with the label "allow" when allowed.
func groupMember(name string, allowed bool, labels ...string) *v1.Pod {
	pod := &v1.Pod{}
	pod.Name, pod.Namespace, pod.UID = name, "ns1", types.UID(name)
	pod.Spec.SchedulerName = v1.DefaultSchedulerName
	pg := testPodGroupName
	pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &pg}
	pod.Labels = map[string]string{}
	if allowed {
		pod.Labels["allow"] = ""
	}
	for i := 0; i+1 < len(labels); i += 2 {
		pod.Labels[labels[i]] = labels[i+1]
	}
	return pod
}

func testPodGroup() *schedulingv1beta1.PodGroup {
	pg := &schedulingv1beta1.PodGroup{}
	pg.Namespace, pg.Name = "ns1", testPodGroupName
	return pg
}

func allowGate() *gatePlugin {
	return &gatePlugin{
		name: "preEnqueuePlugin",
		gate: func(p *v1.Pod) bool { _, ok := p.Labels["allow"]; return !ok },
		events: []schedcore.ClusterEventWithHint{
			withHint(schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.Add}, queueAlways),
			withHint(schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.UpdatePodLabel}, queueAlways),
		},
	}
}

func otherPlugin() *filterPlugin {
	return &filterPlugin{name: "otherPlugin", events: []schedcore.ClusterEventWithHint{
		withHint(nodeAdd, func(_ logr.Logger, pod *v1.Pod, _, _ any) (schedcore.QueueingHint, error) {
			if pod.Name == "pod1" {
				return schedcore.Queue, nil
			}
			return schedcore.QueueSkip, nil
		}),
	}}
}

// newGroupQueue returns a queue with GenericWorkload on over the profile
// above (or the given gates).
func newGroupQueue(t *testing.T, opts []Option, gates ...*gatePlugin) (*PriorityQueue, *clocktesting.FakeClock) {
	t.Helper()
	if gates == nil {
		gates = []*gatePlugin{allowGate()}
	}
	f := schedcore.DefaultFeatures
	f.GenericWorkload = true
	return newQueue(t, newFramework(t, []*filterPlugin{otherPlugin()}, gates...), append([]Option{WithFeatures(f)}, opts...)...)
}

type groupState int

// kube's initialQueueState, in its order (the zero value is stateActive).
const (
	stateActive groupState = iota
	statePopped
	stateBackoff
	stateUnschedulable
	stateGated
	stateIncomplete
)

// setupGroupState is kube's setupInitialPodGroupState.
func setupGroupState(t *testing.T, q *PriorityQueue, pods []*v1.Pod, state groupState, pg *schedulingv1beta1.PodGroup) {
	t.Helper()
	if state != stateIncomplete {
		q.AddPodGroup(logger, pg)
	}
	if len(pods) == 0 {
		return
	}
	for _, pod := range pods {
		q.Add(logger, pod)
	}
	key := groupKey(pg.Namespace, pg.Name)
	switch state {
	case statePopped:
		if _, ok := q.TryPop(logger); !ok {
			t.Fatal("nothing to pop")
		}
	case stateBackoff:
		if e := q.activeQ.deleteKey(key); e != nil {
			e.UnschedulableCount = 1
			e.Timestamp = q.clock.Now()
			e.UnschedulablePlugins = sets.New("fooPlugin")
			q.backoffQ.add(logger, e, eventUnscheduledPodAdd, q.metrics)
		}
	case stateUnschedulable:
		if e := q.activeQ.deleteKey(key); e != nil {
			q.unschedulable.addOrUpdate(e, eventUnscheduledPodAdd)
		}
	case stateGated:
		if e := q.activeQ.deleteKey(key); e != nil {
			e.GatingPlugin, e.GatingPluginEvents = "preEnqueuePlugin", []schedcore.ClusterEvent{pvAdd}
			q.unschedulable.addOrUpdate(e, eventUnscheduledPodAdd)
		}
	}
}

// groupWhere says where the test group is: "active", "backoff",
// "unschedulable" or "gated" (in the pool, gated), with its members in
// member order, or "none".
func groupWhere(t *testing.T, q *PriorityQueue) string {
	t.Helper()
	key := groupKey("ns1", testPodGroupName)
	var places []string
	var e *schedcore.QueuedPodInfo
	if x, ok := q.activeQ.queue.GetKey(key); ok {
		places, e = append(places, "active"), x
	}
	if x, ok := q.backoffQ.getKey(key); ok {
		places, e = append(places, "backoff"), x
	}
	if x := q.unschedulable.getKey(key); x != nil {
		place := "unschedulable"
		if x.Gated() {
			place = "gated"
		}
		places, e = append(places, place), x
	}
	switch len(places) {
	case 0:
		return "none"
	case 1:
	default:
		t.Fatalf("group in several queues: %v", places)
	}
	names := make([]string, len(e.Group.Members))
	for i, m := range e.Group.Members {
		names[i] = m.Pod.Name
	}
	return fmt.Sprintf("%s %s", places[0], strings.Join(names, ","))
}

// podNames lists pod names, sorted.
func podNames(pods []*v1.Pod) []string {
	out := []string{}
	for _, p := range pods {
		out = append(out, p.Name)
	}
	sort.Strings(out)
	return out
}

func podList(s ...string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
