package queue

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestAddPodGroup is kube's table of that name: the observed PodGroup is
// recorded and the members waiting for it enter the queue.
func TestAddPodGroup(t *testing.T) {
	pg := testPodGroup()
	runGroupCases(t, []groupCase{
		{name: "add pod group without waiting pods", state: stateIncomplete, do: addPodGroup(pg), where: "none"},
		{name: "add pod group moves pods from incompletePodGroupPods to activeQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateIncomplete, do: addPodGroup(pg), where: "active pod1,pod2"},
		{name: "add pod group moves gated pods from incompletePodGroupPods to unschedulableEntities", initialPods: []*v1.Pod{gatedGP1, gp2}, state: stateIncomplete, do: addPodGroup(pg), where: "gated pod1,pod2"},
	})
}

func addPodGroup(pg *schedulingv1beta1.PodGroup) func(*testing.T, *PriorityQueue) {
	return func(t *testing.T, q *PriorityQueue) {
		q.AddPodGroup(logger, pg)
		checkObserved(t, q, pg)
	}
}

// checkObserved checks the observed PodGroup and that a queued entity
// carries it.
func checkObserved(t *testing.T, q *PriorityQueue, want *schedulingv1beta1.PodGroup) {
	t.Helper()
	if got := q.podGroups[groupKey(want.Namespace, want.Name)]; got != want {
		t.Errorf("observed PodGroup %v, want %v", got, want)
	}
	if e, ok := q.GetPodGroup(want.Name, want.Namespace); ok && e.Group.PodGroup() != want {
		t.Errorf("queued entity carries %v, want %v", e.Group.PodGroup(), want)
	}
}

// TestUpdatePodGroup is kube's table of that name: the new object replaces
// the observed one and the queued entity's, which stays where it is.
func TestUpdatePodGroup(t *testing.T) {
	updated := testPodGroup()
	updated.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: 2}
	update := func(t *testing.T, q *PriorityQueue) {
		q.UpdatePodGroup(logger, updated)
		checkObserved(t, q, updated)
	}
	runGroupCases(t, []groupCase{
		{name: "update pod group without pods", state: stateActive, do: update, where: "none"},
		{name: "update active pod group", initialPods: []*v1.Pod{gp1, gp2}, state: stateActive, do: update, where: "active pod1,pod2"},
		{name: "update backoff pod group", initialPods: []*v1.Pod{gp1, gp2}, state: stateBackoff, do: update, where: "backoff pod1,pod2"},
		{name: "update unschedulable pod group", initialPods: []*v1.Pod{gp1, gp2}, state: stateUnschedulable, do: update, where: "unschedulable pod1,pod2"},
		{name: "update gated pod group", initialPods: []*v1.Pod{gatedGP1, gp2}, state: stateGated, do: update, where: "gated pod1,pod2"},
		{name: "update in-flight pod group", initialPods: []*v1.Pod{gp1, gp2}, state: statePopped, do: update, where: "none"},
	})
}

// TestDeletePodGroup is kube's table of that name: the members go back to
// incompletePodGroupPods.
func TestDeletePodGroup(t *testing.T) {
	pg := testPodGroup()
	deletePG := func(t *testing.T, q *PriorityQueue) {
		q.DeletePodGroup(logger, pg)
		if _, ok := q.podGroups[groupKey(pg.Namespace, pg.Name)]; ok {
			t.Error("the PodGroup is still observed")
		}
	}
	runGroupCases(t, []groupCase{
		{name: "delete active pod group moves pods to incompletePodGroupPods", initialPods: []*v1.Pod{gp1, gp2}, state: stateActive, do: deletePG, where: "none", incomplete: []string{"pod1", "pod2"}},
		{name: "delete backoff pod group moves pods to incompletePodGroupPods", initialPods: []*v1.Pod{gp1, gp2}, state: stateBackoff, do: deletePG, where: "none", incomplete: []string{"pod1", "pod2"}},
		{name: "delete unschedulable pod group moves pods to incompletePodGroupPods", initialPods: []*v1.Pod{gp1, gp2}, state: stateUnschedulable, do: deletePG, where: "none", incomplete: []string{"pod1", "pod2"}},
		{name: "delete gated pod group moves pods to incompletePodGroupPods", initialPods: []*v1.Pod{gatedGP1, gp2}, state: stateGated, do: deletePG, where: "none", incomplete: []string{"pod1", "pod2"}},
		{name: "delete in-flight pod group moves pending pods to incompletePodGroupPods", initialPods: []*v1.Pod{gp1, gp2}, state: statePopped, pendingPods: []*v1.Pod{gp1, gp2}, do: deletePG, where: "none", incomplete: []string{"pod1", "pod2"}},
		{name: "delete in-flight pod group with no pending pods", initialPods: []*v1.Pod{gp1, gp2}, state: statePopped, do: deletePG, where: "none"},
		{name: "delete pod group with no pods", do: deletePG, where: "none"},
	})
}

// TestAddAttemptedPodGroupIfNeeded is kube's table of that name: the
// attempted group is a one-member entity of pod1 stamped at the start; the
// members handed back (pending) decide whether it comes back, the status
// how (counts, backoff, timestamp).
func TestAddAttemptedPodGroupIfNeeded(t *testing.T) {
	mid := int32(100)
	pod1, pod2 := groupMember("pod1", true), groupMember("pod2", true)
	pod1.Spec.Priority, pod2.Spec.Priority = &mid, &mid
	tests := []struct {
		name              string
		disableBackoff    bool
		blockOnPreEnqueue bool
		// pending are the members handed back, with their rejectors.
		pending       map[*v1.Pod][]string
		setErrors     bool
		status        *schedcore.Status
		unschedulable int
		errors        int
		where         string
		size          int
		preserved     bool
	}{
		{name: "No pending pods, pod group is not enqueued", where: "none", size: 1},
		{name: "Pods present, pod group scheduling had an error, and pod group not backing off", pending: map[*v1.Pod][]string{pod1: nil, pod2: nil}, status: schedcore.NewStatus(schedcore.Error), disableBackoff: true, errors: 1, where: "active", size: 2},
		{name: "Pods present, pod group scheduling result is unschedulable, and pod group not backing off", pending: map[*v1.Pod][]string{pod1: {"fakePlugin"}, pod2: nil}, setErrors: true, status: schedcore.NewStatus(schedcore.Unschedulable), disableBackoff: true, unschedulable: 1, where: "active", size: 2},
		{name: "Pods present, pod group scheduling result is unschedulable, and pod group not backing off, but blocked on PreEnqueue", pending: map[*v1.Pod][]string{pod1: {"fakePlugin"}, pod2: nil}, status: schedcore.NewStatus(schedcore.Unschedulable), disableBackoff: true, blockOnPreEnqueue: true, unschedulable: 1, where: "gated", size: 2},
		{name: "Pods present, pod group scheduling result is Error, and pod group backing off", pending: map[*v1.Pod][]string{pod1: nil, pod2: nil}, status: schedcore.NewStatus(schedcore.Error), errors: 1, where: "backoff", size: 2},
		{name: "Pods present, pod group scheduling result is Unschedulable, and pod group backing off", pending: map[*v1.Pod][]string{pod1: {"fakePlugin"}, pod2: nil}, setErrors: true, status: schedcore.NewStatus(schedcore.Unschedulable), unschedulable: 1, where: "backoff", size: 2},
		{name: "Pods present, pod group scheduling result is Error, and pod group backing off, but blocked on PreEnqueue", pending: map[*v1.Pod][]string{pod1: nil, pod2: nil}, status: schedcore.NewStatus(schedcore.Error), blockOnPreEnqueue: true, errors: 1, where: "gated", size: 2},
		{name: "Unschedulable pods are present but pod group scheduling was successful, requeue to active queue directly and preserve timestamp", pending: map[*v1.Pod][]string{pod1: {"fakePlugin"}, pod2: nil}, where: "active", size: 2, preserved: true},
		{name: "New pods only are present and pod group scheduling was successful, requeue to active queue directly with new timestamp", pending: map[*v1.Pod][]string{pod2: nil}, where: "active", size: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var opts []Option
			if tt.disableBackoff {
				opts = append(opts, WithPodInitialBackoffDuration(0), WithPodMaxBackoffDuration(0))
			}
			gates := []*gatePlugin{{name: "noop", gate: func(*v1.Pod) bool { return false }}}
			if tt.blockOnPreEnqueue {
				gates = []*gatePlugin{{name: "testPlugin", gate: func(*v1.Pod) bool { return true }}}
			}
			q, clk := newGroupQueue(t, opts, gates...)
			pg := testPodGroup()
			q.AddPodGroup(logger, pg)
			attempted := schedcore.NewQueuedPodGroupInfo(pg, v1.DefaultSchedulerName)
			m1 := q.newQueuedPodInfo(pod1)
			attempted.Group.AddPod(m1)
			attempted.Timestamp = m1.Timestamp
			old := attempted.Timestamp
			for pod, plugins := range tt.pending {
				m := q.newQueuedPodInfo(pod)
				m.UnschedulablePlugins.Insert(plugins...)
				q.pending.add(m)
			}
			if tt.setErrors {
				attempted.ConsecutiveErrorsCount = 5 // reset by a rejection
			}
			clk.Step(time.Second)
			if err := q.AddAttemptedPodGroupIfNeeded(logger, attempted, q.SchedulingCycle(), tt.status); err != nil {
				t.Fatal(err)
			}
			got := attempted
			if e, ok := q.GetPodGroup(pg.Name, pg.Namespace); ok {
				got = e
			}
			if tt.preserved && !got.Timestamp.Equal(old) {
				t.Errorf("timestamp %v, want it preserved (%v)", got.Timestamp, old)
			}
			if !tt.preserved && tt.where != "none" && !got.Timestamp.Equal(clk.Now()) {
				t.Errorf("timestamp %v, want now (%v)", got.Timestamp, clk.Now())
			}
			if got.UnschedulableCount != tt.unschedulable || got.ConsecutiveErrorsCount != tt.errors {
				t.Errorf("counts unschedulable=%d errors=%d, want %d and %d", got.UnschedulableCount, got.ConsecutiveErrorsCount, tt.unschedulable, tt.errors)
			}
			where := groupWhere(t, q)
			if tt.where == "none" && where != "none" || tt.where != "none" && where[:len(tt.where)] != tt.where {
				t.Errorf("group %q, want in %q", where, tt.where)
			}
			if q.pending.len() != 0 {
				t.Errorf("pendingPodGroupPods not cleared: %v", podNames(q.pending.list()))
			}
			if got.Group.Size() != tt.size {
				t.Errorf("size %d, want %d", got.Group.Size(), tt.size)
			}
		})
	}
}

// TestPodGroupEntityLifecycle follows one group through Pop and its
// requeue: Pop moves every member in flight and counts an attempt on the
// group and each member; a member arriving meanwhile waits in pending; the
// members the cycle hands back and the newcomer come back in one entity
// after AddAttemptedPodGroupIfNeeded (here: rejected, so into backoffQ);
// the group then pops again.
func TestPodGroupEntityLifecycle(t *testing.T) {
	q, clk := newGroupQueue(t, nil)
	q.AddPodGroup(logger, testPodGroup())
	q.Add(logger, gp1)
	q.Add(logger, gp2)
	e, ok := q.TryPop(logger)
	if !ok || e.Group == nil {
		t.Fatalf("TryPop = %v, %v; want the group", e, ok)
	}
	if got := podNames(q.InFlightPods()); !cmp.Equal(got, []string{"pod1", "pod2"}) {
		t.Errorf("in flight %v, want pod1, pod2", got)
	}
	attempts := []int{e.Attempts}
	for _, m := range e.Group.Members {
		attempts = append(attempts, m.Attempts)
	}
	if !cmp.Equal(attempts, []int{1, 1, 1}) {
		t.Errorf("attempts (group, members) %v, want 1 1 1", attempts)
	}
	if q.SchedulingCycle() != 1 {
		t.Errorf("scheduling cycle %d, want 1 (one per entity)", q.SchedulingCycle())
	}

	q.Add(logger, gp3)
	if diff := cmp.Diff([]string{"pod3"}, podNames(q.PendingPodGroupPods())); diff != "" {
		t.Errorf("pending (-want +got)\n%s", diff)
	}
	// The cycle rejects both members: the FailureHandler hands them back.
	for _, m := range e.Group.Members {
		m.UnschedulablePlugins.Insert("fooPlugin")
		if err := q.AddUnschedulableIfNotPresent(logger, m, q.SchedulingCycle()); err != nil {
			t.Fatal(err)
		}
	}
	if len(q.InFlightPods()) != 0 {
		t.Errorf("still in flight: %v", podNames(q.InFlightPods()))
	}
	if err := q.AddAttemptedPodGroupIfNeeded(logger, e, q.SchedulingCycle(), schedcore.NewStatus(schedcore.Unschedulable)); err != nil {
		t.Fatal(err)
	}
	if got := groupWhere(t, q); got != "backoff pod1,pod2,pod3" {
		t.Fatalf("group %q, want backoff pod1,pod2,pod3 (members with more attempts first)", got)
	}
	g, _ := q.GetPodGroup(testPodGroupName, "ns1")
	// The group's first rejection: 1s (below the cap 10s × √3) from now,
	// aligned down to the whole second.
	if want := clk.Now().Add(time.Second).Truncate(time.Second); !g.BackoffExpiration.Equal(want) {
		t.Errorf("backoff expires %v, want %v", g.BackoffExpiration, want)
	}
	if g.UnschedulableCount != 1 {
		t.Errorf("UnschedulableCount %d, want 1", g.UnschedulableCount)
	}
	clk.Step(3 * time.Second)
	if e2, ok := q.TryPop(logger); !ok || e2.Group == nil || e2.Attempts != 2 {
		t.Errorf("second pop %v, %v; want the group with 2 attempts", e2, ok)
	}
}

// TestPodGroupOrder: groups and single pods share activeQ, ordered by
// QueueSort on entities (the PodGroup's spec.priority, the group's
// timestamp: its first member's); members inside a group by priority,
// attempts, timestamp, then name.
func TestPodGroupOrder(t *testing.T) {
	q, clk := newGroupQueue(t, nil)
	high := int32(1000)
	pgHigh := testPodGroup()
	pgHigh.Name = "high"
	pgHigh.Spec.Priority = &high
	q.AddPodGroup(logger, pgHigh)
	q.AddPodGroup(logger, testPodGroup())

	single := groupMember("single", true)
	single.Spec.SchedulingGroup = nil
	single.Spec.Priority = &high
	q.Add(logger, groupMember("b", true))
	clk.Step(time.Second)
	q.Add(logger, single)
	clk.Step(time.Second)
	a := groupMember("a", true)
	q.Add(logger, a)
	h := groupMember("h", true)
	h.Spec.SchedulingGroup.PodGroupName = &pgHigh.Name
	q.Add(logger, h)
	pri := groupMember("prio", true)
	pri.Spec.Priority = &high
	q.Add(logger, pri)

	var got []string
	for {
		e, ok := q.TryPop(logger)
		if !ok {
			break
		}
		if e.Group == nil {
			got = append(got, "pod "+e.Pod.Name)
			continue
		}
		got = append(got, fmt.Sprintf("group %s %v", e.Group.Name, podNames(e.Group.UnscheduledPods())))
		if e.Group.Name == testPodGroupName {
			var order []string
			for _, p := range e.Group.UnscheduledPods() {
				order = append(order, p.Name)
			}
			// prio first (priority), then b (older), then a.
			if diff := cmp.Diff([]string{"prio", "b", "a"}, order); diff != "" {
				t.Errorf("member order (-want +got)\n%s", diff)
			}
		}
	}
	// The single pod (1000, t+1s) goes before group high (1000, t+2s);
	// pg-test has priority 0 whatever its members'.
	want := []string{"pod single", "group high [h]", "group pg-test [a b prio]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pop order (-want +got)\n%s", diff)
	}
}

// TestPodGroupPendingPods: PendingPods and Lengths count the members of
// queued groups and those waiting outside the queues, with kube's extended
// summary line; with the gate off, a member is a pod and the line is the
// short one.
func TestPodGroupPendingPods(t *testing.T) {
	q, _ := newGroupQueue(t, nil)
	q.AddPodGroup(logger, testPodGroup())
	q.Add(logger, gp1)
	q.Add(logger, gatedGP2)
	orphan := groupMember("orphan", true)
	other := "other"
	orphan.Spec.SchedulingGroup.PodGroupName = &other
	q.Add(logger, orphan)
	pods, summary := q.PendingPods()
	if want := "activeQ:0; backoffQ:0; unschedulableEntities:2; pendingPodGroupMemberPods:0; incompletePodGroupPods:1"; summary != want {
		t.Errorf("summary %q, want %q", summary, want)
	}
	if diff := cmp.Diff([]string{"orphan", "pod1", "pod2"}, podNames(pods)); diff != "" {
		t.Errorf("pending pods (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(schedcore.QueueLengths{Gated: 2, IncompletePodGroupPods: 1}, q.Lengths()); diff != "" {
		t.Errorf("lengths (-want +got)\n%s", diff)
	}

	off, _ := newQueue(t, newFramework(t, nil, allowGate()))
	off.AddPodGroup(logger, testPodGroup())
	off.Add(logger, gp1)
	off.Add(logger, gp2)
	_, summary = off.PendingPods()
	if want := "activeQ:2; backoffQ:0; unschedulableEntities:0"; summary != want {
		t.Errorf("gate off: summary %q, want %q", summary, want)
	}
	if e, ok := off.TryPop(logger); !ok || e.Group != nil {
		t.Errorf("gate off: popped %v, want a pod", e)
	}
}

// TestWithPodGroupsFalse: a driver without a pod-group cycle keeps members
// single pods with the gate on.
func TestWithPodGroupsFalse(t *testing.T) {
	q, _ := newGroupQueue(t, []Option{WithPodGroups(false)})
	q.AddPodGroup(logger, testPodGroup())
	q.Add(logger, gp1)
	if e, ok := q.TryPop(logger); !ok || e.Group != nil || e.Pod.Name != "pod1" {
		t.Errorf("popped %v, want pod1 alone", e)
	}
}

// TestIsEntityWorthRequeuing: a group is worth requeuing when any member
// is, with the strongest strategy among its members (kube's
// isEntityWorthRequeuing over isPodWorthRequeuing).
func TestIsEntityWorthRequeuing(t *testing.T) {
	member := func(pod *v1.Pod, unschedulable, pending []string) *schedcore.QueuedPodInfo {
		m := &schedcore.QueuedPodInfo{PodInfo: schedcore.NewPodInfo(pod)}
		m.UnschedulablePlugins = sets.New(unschedulable...)
		m.PendingPlugins = sets.New(pending...)
		return m
	}
	tests := []struct {
		name    string
		members []*schedcore.QueuedPodInfo
		want    queueingStrategy
	}{
		{name: "no member's rejector queues on the event", members: []*schedcore.QueuedPodInfo{member(gp1, []string{"fooPlugin"}, nil), member(gp2, []string{"otherPlugin"}, nil)}, want: queueSkip},
		{name: "one member's Unschedulable rejector queues: after backoff", members: []*schedcore.QueuedPodInfo{member(gp1, []string{"otherPlugin"}, nil), member(gp2, []string{"otherPlugin"}, nil)}, want: queueAfterBackoff},
		{name: "one member's Pending rejector queues: at once", members: []*schedcore.QueuedPodInfo{member(gp2, []string{"otherPlugin"}, nil), member(gp1, nil, []string{"otherPlugin"})}, want: queueImmediately},
		{name: "a member with no rejector: after backoff", members: []*schedcore.QueuedPodInfo{member(gp2, []string{"fooPlugin"}, nil), member(gp1, nil, nil)}, want: queueAfterBackoff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newGroupQueue(t, nil)
			e := schedcore.NewQueuedPodGroupInfo(testPodGroup(), v1.DefaultSchedulerName)
			for _, m := range tt.members {
				e.Group.AddPod(m)
			}
			q.lock.Lock()
			got := q.isEntityWorthRequeuing(logger, e, nodeAdd, nil, &v1.Node{})
			q.lock.Unlock()
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
