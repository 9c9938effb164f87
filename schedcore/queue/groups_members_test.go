package queue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var (
	gp1        = groupMember("pod1", true)
	gp2        = groupMember("pod2", true)
	gp3        = groupMember("pod3", true)
	gatedGP1   = groupMember("pod1", false)
	gatedGP2   = groupMember("pod2", false)
	gatedGP3   = groupMember("pod3", false)
	notFoundGP = groupMember("pod-not-found", true)
)

// groupCase is one row of the member tables: the initial pods and state
// (kube's setupInitialPodGroupState), members added while the group is in
// flight, the operation, and where the group, the pending and the
// incomplete members end up.
type groupCase struct {
	name        string
	initialPods []*v1.Pod
	state       groupState
	pendingPods []*v1.Pod
	do          func(t *testing.T, q *PriorityQueue)
	// where is groupWhere's answer.
	where      string
	pending    []string
	incomplete []string
}

func runGroupCases(t *testing.T, tests []groupCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, _ := newGroupQueue(t, nil)
			setupGroupState(t, q, tt.initialPods, tt.state, testPodGroup())
			for _, pod := range tt.pendingPods {
				q.Add(logger, pod)
			}
			tt.do(t, q)
			if got := groupWhere(t, q); got != tt.where {
				t.Errorf("group: got %q, want %q", got, tt.where)
			}
			if diff := cmp.Diff(podList(tt.pending...), podNames(q.PendingPodGroupPods())); diff != "" {
				t.Errorf("pendingPodGroupPods (-want +got)\n%s", diff)
			}
			if diff := cmp.Diff(podList(tt.incomplete...), podNames(q.IncompletePodGroupPods())); diff != "" {
				t.Errorf("incompletePodGroupPods (-want +got)\n%s", diff)
			}
		})
	}
}

func add(pod *v1.Pod) func(*testing.T, *PriorityQueue) {
	return func(_ *testing.T, q *PriorityQueue) { q.Add(logger, pod) }
}

func del(pod *v1.Pod) func(*testing.T, *PriorityQueue) {
	return func(_ *testing.T, q *PriorityQueue) { q.Delete(pod) }
}

// TestAddPodGroupMember is kube's table of that name.
func TestAddPodGroupMember(t *testing.T) {
	runGroupCases(t, []groupCase{
		{name: "first member added (ungated), creates new pod group in activeQ", do: add(gp1), where: "active pod1"},
		{name: "first member added (gated), creates new pod group directly in unschedulableEntities", do: add(gatedGP1), where: "gated pod1"},
		{name: "matching pod group is currently in flight (last popped), pod (ungated) goes to pendingPodGroupPods", initialPods: []*v1.Pod{gp1}, state: statePopped, do: add(gp2), where: "none", pending: []string{"pod2"}},
		{name: "matching pod group is currently in flight (last popped), pod (gated) goes to pendingPodGroupPods", initialPods: []*v1.Pod{gp1}, state: statePopped, do: add(gatedGP2), where: "none", pending: []string{"pod2"}},
		{name: "existing pod group in activeQ (ungated addition), stays in activeQ", initialPods: []*v1.Pod{gp1}, state: stateActive, do: add(gp2), where: "active pod1,pod2"},
		{name: "existing pod group in activeQ (gated addition), becomes gated and moves to unschedulableEntities", initialPods: []*v1.Pod{gp1}, state: stateActive, do: add(gatedGP2), where: "gated pod1,pod2"},
		{name: "existing pod group in backoffQ (ungated addition), stays in backoffQ", initialPods: []*v1.Pod{gp1}, state: stateBackoff, do: add(gp2), where: "backoff pod1,pod2"},
		{name: "existing pod group in backoffQ (gated addition), becomes gated and moves to unschedulableEntities", initialPods: []*v1.Pod{gp1}, state: stateBackoff, do: add(gatedGP2), where: "gated pod1,pod2"},
		{name: "existing pod group in unschedulableEntities (ungated addition), stays in unschedulableEntities as ungated", initialPods: []*v1.Pod{gp1}, state: stateUnschedulable, do: add(gp2), where: "unschedulable pod1,pod2"},
		{name: "existing pod group in unschedulableEntities (gated addition), stays in unschedulableEntities as ungated", initialPods: []*v1.Pod{gp1}, state: stateUnschedulable, do: add(gatedGP2), where: "unschedulable pod1,pod2"},
		{name: "existing gated pod group in unschedulableEntities (ungated addition), stays in unschedulableEntities as gated", initialPods: []*v1.Pod{gatedGP1}, state: stateGated, do: add(gp2), where: "gated pod1,pod2"},
		{name: "first member added before pod group exists, goes to incompletePodGroupPods", state: stateIncomplete, do: add(gp1), where: "none", incomplete: []string{"pod1"}},
		{name: "existing pod in incompletePodGroupPods, stays in incompletePodGroupPods", initialPods: []*v1.Pod{gp1}, state: stateIncomplete, do: add(gp2), where: "none", incomplete: []string{"pod1", "pod2"}},
	})
}

// TestDeletePodGroupMember is kube's table of that name. Its two "gated"
// rows carry an expectedGated that kube's test never checks; kube's code
// (and ours) leaves a group gated when a gated member is deleted, since
// the group goes back to the pool without PreEnqueue.
func TestDeletePodGroupMember(t *testing.T) {
	runGroupCases(t, []groupCase{
		{name: "delete from pendingPodGroupPods (group in flight)", initialPods: []*v1.Pod{gp1}, state: statePopped, pendingPods: []*v1.Pod{gp2}, do: del(gp2), where: "none"},
		{name: "delete one pending pod where there are more pending pods for a group in flight", initialPods: []*v1.Pod{gp1, gp2, gp3}, state: statePopped, pendingPods: []*v1.Pod{gp2, gp3}, do: del(gp2), where: "none", pending: []string{"pod3"}},
		{name: "delete the only pod of a group in activeQ, completely removes group", initialPods: []*v1.Pod{gp1}, state: stateActive, do: del(gp1), where: "none"},
		{name: "delete one pod of a size-2 group in activeQ, decreases size and keeps in activeQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateActive, do: del(gp2), where: "active pod1"},
		{name: "delete the only pod of a group in backoffQ, completely removes group", initialPods: []*v1.Pod{gp1}, state: stateBackoff, do: del(gp1), where: "none"},
		{name: "delete one pod of a size-2 group in backoffQ, keeps group in backoffQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateBackoff, do: del(gp2), where: "backoff pod1"},
		{name: "delete the only pod of a group in unschedulableEntities, completely removes group", initialPods: []*v1.Pod{gp1}, state: stateUnschedulable, do: del(gp1), where: "none"},
		{name: "delete one pod of a size-2 group in unschedulableEntities, decreases size and keeps in unschedulableEntities", initialPods: []*v1.Pod{gp1, gp2}, state: stateUnschedulable, do: del(gp2), where: "unschedulable pod1"},
		{name: "delete a pod that doesn't exist in any queue or pending map", initialPods: []*v1.Pod{gp1}, state: stateActive, do: del(notFoundGP), where: "active pod1"},
		{name: "delete the only gated pod from a group, ungates the pod group", initialPods: []*v1.Pod{gp1, gatedGP2}, state: stateGated, do: del(gatedGP2), where: "gated pod1"},
		{name: "delete one gated pod from a group where another gated pod remains, group stays gated", initialPods: []*v1.Pod{gp1, gatedGP2, gatedGP3}, state: stateGated, do: del(gatedGP2), where: "gated pod1,pod3"},
		{name: "delete from incompletePodGroupPods", initialPods: []*v1.Pod{gp1}, state: stateIncomplete, do: del(gp1), where: "none"},
		{name: "delete one pod from incompletePodGroupPods with multiple pods", initialPods: []*v1.Pod{gp1, gp2}, state: stateIncomplete, do: del(gp1), where: "none", incomplete: []string{"pod2"}},
	})
}

// TestUpdatePodGroupMember is kube's table of that name: where the group
// goes, that the member holds the new pod wherever it waits, and the
// nominations the update records.
func TestUpdatePodGroupMember(t *testing.T) {
	updatedP2 := groupMember("pod2", true, "update", "true")
	nominatedP2 := updatedP2.DeepCopy()
	nominatedP2.Status.NominatedNodeName = "node1"
	ungatedP1 := groupMember("pod1", true)
	updatedGatedP1 := groupMember("pod1", false, "updated", "true")
	updatedNotFound := groupMember("pod-not-found", true, "updated", "true")

	tests := []struct {
		groupCase
		oldPod, newPod *v1.Pod
		nominated      []string
	}{
		{groupCase: groupCase{name: "update pod in activeQ, keeps pod group in activeQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateActive, where: "active pod1,pod2"}, oldPod: gp2, newPod: updatedP2},
		{groupCase: groupCase{name: "update pod in backoffQ, keeps pod group in backoffQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateBackoff, where: "backoff pod1,pod2"}, oldPod: gp2, newPod: updatedP2},
		{groupCase: groupCase{name: "update pod in unschedulableEntities moves it to activeQ (ungated pod group)", initialPods: []*v1.Pod{gp1, gp2}, state: stateUnschedulable, where: "active pod1,pod2"}, oldPod: gp2, newPod: updatedP2},
		{groupCase: groupCase{name: "update pod in pendingPodGroupPods (group in flight), updates pod in pending buffer", initialPods: []*v1.Pod{gp1}, state: statePopped, pendingPods: []*v1.Pod{gp2}, where: "none", pending: []string{"pod2"}}, oldPod: gp2, newPod: updatedP2},
		{groupCase: groupCase{name: "gated pod update (removal of gate), ungates and moves pod group to activeQ", initialPods: []*v1.Pod{gatedGP1}, state: stateGated, where: "active pod1"}, oldPod: gatedGP1, newPod: ungatedP1},
		{groupCase: groupCase{name: "gated pod update without removal of gate, keeps pod group in unschedulableEntities as gated", initialPods: []*v1.Pod{gatedGP1}, state: stateGated, where: "gated pod1"}, oldPod: gatedGP1, newPod: updatedGatedP1},
		{groupCase: groupCase{name: "ungate one pod but another remains gated, keeps pod group in unschedulableEntities as gated", initialPods: []*v1.Pod{gatedGP1, gatedGP2}, state: stateGated, where: "gated pod1,pod2"}, oldPod: gatedGP1, newPod: ungatedP1},
		{groupCase: groupCase{name: "updating pod that doesn't exist in any queue, creates new pod group in activeQ", state: stateActive, where: "active pod-not-found"}, oldPod: notFoundGP, newPod: updatedNotFound},
		{groupCase: groupCase{name: "update pod to nominated in activeQ, keeps pod group in activeQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateActive, where: "active pod1,pod2"}, oldPod: gp2, newPod: nominatedP2, nominated: []string{"pod2"}},
		{groupCase: groupCase{name: "update pod to nominated in backoffQ, keeps pod group in backoffQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateBackoff, where: "backoff pod1,pod2"}, oldPod: gp2, newPod: nominatedP2, nominated: []string{"pod2"}},
		{groupCase: groupCase{name: "update pod to nominated in unschedulableEntities moves it to activeQ (ungated pod group)", initialPods: []*v1.Pod{gp1, gp2}, state: stateUnschedulable, where: "active pod1,pod2"}, oldPod: gp2, newPod: nominatedP2, nominated: []string{"pod2"}},
		{groupCase: groupCase{name: "update pod to nominated in pendingPodGroupPods (group in flight), updates pod in pending buffer", initialPods: []*v1.Pod{gp1}, state: statePopped, pendingPods: []*v1.Pod{gp2}, where: "none", pending: []string{"pod2"}}, oldPod: gp2, newPod: nominatedP2, nominated: []string{"pod2"}},
		{groupCase: groupCase{name: "update pod in incompletePodGroupPods", initialPods: []*v1.Pod{gp2}, state: stateIncomplete, where: "none", incomplete: []string{"pod2"}}, oldPod: gp2, newPod: updatedP2},
	}
	for _, tt := range tests {
		tt.do = func(t *testing.T, q *PriorityQueue) {
			q.Update(logger, tt.oldPod, tt.newPod)
			// The member holds the new pod wherever it waits.
			q.lock.RLock()
			q.activeQ.lock.RLock()
			got := q.unlockedGetPod(tt.newPod)
			q.activeQ.lock.RUnlock()
			q.lock.RUnlock()
			if got == nil {
				t.Fatalf("%s not found in the queue", tt.newPod.Name)
			}
			if got.Pod != tt.newPod {
				t.Errorf("%s: the queue holds %v, want the updated pod", tt.newPod.Name, got.Pod.Labels)
			}
			var nominated []string
			for _, pi := range q.NominatedPodsForNode("node1") {
				nominated = append(nominated, pi.Pod.Name)
				// Found in its group (or the pending buffer) through the
				// nominator's schedulingGroup, as kube's podRef: the
				// queued pod, not a bare one.
				if pi.Pod.Labels["update"] != "true" {
					t.Errorf("nominated %s comes back without the queued pod's labels: %v", pi.Pod.Name, pi.Pod.Labels)
				}
			}
			if diff := cmp.Diff(tt.nominated, nominated); diff != "" {
				t.Errorf("nominated to node1 (-want +got)\n%s", diff)
			}
		}
		runGroupCases(t, []groupCase{tt.groupCase})
	}
}

// TestActivatePodGroupMember is kube's table of that name.
func TestActivatePodGroupMember(t *testing.T) {
	activate := func(pod *v1.Pod) func(*testing.T, *PriorityQueue) {
		return func(_ *testing.T, q *PriorityQueue) {
			q.Activate(logger, map[string]*v1.Pod{string(pod.UID): pod})
		}
	}
	inFlightActivate := func(t *testing.T, q *PriorityQueue) {
		activate(gp1)(t, q)
		if !hasInFlightEvent(q, schedcore.EventForceActivate) {
			t.Error("no ForceActivate event recorded for the in-flight group")
		}
	}
	runGroupCases(t, []groupCase{
		{name: "activate pod group in unschedulableEntities (ungated), moves pod group to activeQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateUnschedulable, do: activate(gp1), where: "active pod1,pod2"},
		{name: "activate pod group in unschedulableEntities (gated), keeps pod group in unschedulableEntities as gated", initialPods: []*v1.Pod{gatedGP1}, state: stateGated, do: activate(gatedGP1), where: "gated pod1"},
		{name: "activate pod group in backoffQ, moves pod group to activeQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateBackoff, do: activate(gp1), where: "active pod1,pod2"},
		{name: "activate pod group in flight (popped), pod group remains in flight but tracks event", initialPods: []*v1.Pod{gp1, gp2}, state: statePopped, do: inFlightActivate, where: "none"},
		{name: "activating pod that does not exist in any queue or in flight is ignored", do: activate(notFoundGP), where: "none"},
		{name: "activate pod in incompletePodGroupPods is a no-op", initialPods: []*v1.Pod{gp1, gp2}, state: stateIncomplete, do: activate(gp1), where: "none", incomplete: []string{"pod1", "pod2"}},
	})
}

func hasInFlightEvent(q *PriorityQueue, e schedcore.ClusterEvent) bool {
	q.activeQ.lock.RLock()
	defer q.activeQ.lock.RUnlock()
	for el := q.activeQ.inFlightEvents.Front(); el != nil; el = el.Next() {
		if ev, ok := el.Value.(*clusterEvent); ok && ev.event.Label() == e.Label() {
			return true
		}
	}
	return false
}

// TestMoveAllToActiveOrBackoffQueuePodGroupMember is kube's table of that
// name (its row "gated pod group matching gating event", commented out in
// kube, is left out).
func TestMoveAllToActiveOrBackoffQueuePodGroupMember(t *testing.T) {
	move := func(e schedcore.ClusterEvent) func(*testing.T, *PriorityQueue) {
		return func(_ *testing.T, q *PriorityQueue) { q.MoveAllToActiveOrBackoffQueue(logger, e, nil, nil, nil) }
	}
	nodeDelete := schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Delete}
	podDelete := schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.Delete}
	runGroupCases(t, []groupCase{
		{name: "event of interest moves ungated pod group from unschedulableEntities to activeQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateUnschedulable, do: move(nodeAdd), where: "active pod1,pod2"},
		{name: "event not of interest keeps pod group in unschedulableEntities", initialPods: []*v1.Pod{gp1, gp2}, state: stateUnschedulable, do: move(nodeDelete), where: "unschedulable pod1,pod2"},
		{name: "gated pod group not matching gating event stays in unschedulableEntities as gated", initialPods: []*v1.Pod{gatedGP1, gp2}, state: stateGated, do: move(podDelete), where: "gated pod1,pod2"},
		{name: "gated pod group matching event for ungated pod stays in unschedulableEntities as gated", initialPods: []*v1.Pod{gatedGP1, gp2}, state: stateGated, do: move(nodeAdd), where: "gated pod1,pod2"},
		{name: "event received while pod group is in flight is tracked in inFlightEvents", initialPods: []*v1.Pod{gp1, gp2}, state: statePopped, where: "none", do: func(t *testing.T, q *PriorityQueue) {
			move(nodeAdd)(t, q)
			if !hasInFlightEvent(q, nodeAdd) {
				t.Error("no Node/Add event recorded for the in-flight group")
			}
		}},
	})
}

// TestFlushPodGroupMember is kube's TestFlushBackoffQCompletedPodGroupMember
// and TestFlushUnschedulableEntitiesLeftoverPodGroupMember.
func TestFlushPodGroupMember(t *testing.T) {
	flushBackoff := func(d time.Duration) func(*testing.T, *PriorityQueue) {
		return func(_ *testing.T, q *PriorityQueue) {
			q.clock.(interface{ Step(time.Duration) }).Step(d)
			q.flushBackoffQCompleted(logger)
		}
	}
	flushUnschedulable := func(d time.Duration) func(*testing.T, *PriorityQueue) {
		return func(_ *testing.T, q *PriorityQueue) {
			q.clock.(interface{ Step(time.Duration) }).Step(d)
			q.flushUnschedulablePodsLeftover(logger)
		}
	}
	leftover := DefaultPodMaxInUnschedulablePodsDuration + time.Second
	runGroupCases(t, []groupCase{
		{name: "flushing backoffQ after backoff completes moves pod group to activeQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateBackoff, do: flushBackoff(10 * time.Second), where: "active pod1,pod2"},
		{name: "flushing backoffQ before backoff completes keeps pod group in backoffQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateBackoff, do: flushBackoff(0), where: "backoff pod1,pod2"},
		{name: "flushing unschedulable leftover after max duration moves ungated pod group to activeQ", initialPods: []*v1.Pod{gp1, gp2}, state: stateUnschedulable, do: flushUnschedulable(leftover), where: "active pod1,pod2"},
		{name: "flushing unschedulable leftover before max duration keeps pod group in unschedulableEntities", initialPods: []*v1.Pod{gp1, gp2}, state: stateUnschedulable, do: flushUnschedulable(0), where: "unschedulable pod1,pod2"},
		{name: "flushing unschedulable leftover for gated pod group after max duration keeps it in unschedulableEntities as gated", initialPods: []*v1.Pod{gatedGP1, gp2}, state: stateGated, do: flushUnschedulable(leftover), where: "gated pod1,pod2"},
	})
}

// TestAddUnschedulablePodIfNotPresentPodGroupMember is kube's table of that
// name: members handed back after their group's attempt.
func TestAddUnschedulablePodIfNotPresentPodGroupMember(t *testing.T) {
	handBack := func(pod *v1.Pod, plugins ...string) *schedcore.QueuedPodInfo {
		return &schedcore.QueuedPodInfo{PodInfo: schedcore.NewPodInfo(pod), UnschedulablePlugins: sets.New(plugins...)}
	}
	back := func(clearLastPopped, deletePodGroup bool, qs ...*schedcore.QueuedPodInfo) func(*testing.T, *PriorityQueue) {
		return func(t *testing.T, q *PriorityQueue) {
			if clearLastPopped {
				q.activeQ.clearPopped()
			}
			if deletePodGroup {
				q.DeletePodGroup(logger, testPodGroup())
			}
			for _, qi := range qs {
				if err := q.AddUnschedulableIfNotPresent(logger, qi, q.SchedulingCycle()); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	runGroupCases(t, []groupCase{
		{name: "single pod group member added with plugin to pending when group is in flight", initialPods: []*v1.Pod{gp1, gp2}, state: statePopped, do: back(false, false, handBack(gp1, "fooPlugin")), where: "none", pending: []string{"pod1"}},
		{name: "single pod group member added with no plugins (consecutive error) to pending", initialPods: []*v1.Pod{gp1, gp2}, state: statePopped, do: back(false, false, handBack(gp1)), where: "none", pending: []string{"pod1"}},
		{name: "multiple pod group members, including gated added with plugins sequentially to pending when group is in flight", initialPods: []*v1.Pod{gp1, gp2, gp3}, state: statePopped, do: back(false, false, handBack(gp1, "fooPlugin"), handBack(gp2, "barPlugin"), handBack(gatedGP3, "bazPlugin")), where: "none", pending: []string{"pod1", "pod2", "pod3"}},
		{name: "pod group is not last popped entity and no group exists, a new group is created and added to activeQ", do: back(false, false, handBack(gp1, "fooPlugin")), where: "active pod1"},
		{name: "pod group exists in unschedulableEntities, pod is added and group remains in unschedulableEntities", initialPods: []*v1.Pod{gp2}, state: stateUnschedulable, do: back(true, false, handBack(gp1, "fooPlugin")), where: "unschedulable pod1,pod2"},
		{name: "pod group exists in activeQ, pod is added and group remains in activeQ", initialPods: []*v1.Pod{gp2}, state: stateActive, do: back(true, false, handBack(gp1, "fooPlugin")), where: "active pod1,pod2"},
		{name: "pod group exists in backoffQ, pod is added and group remains in backoffQ", initialPods: []*v1.Pod{gp2}, state: stateBackoff, do: back(true, false, handBack(gp1, "fooPlugin")), where: "backoff pod1,pod2"},
		{name: "pod group exists in unschedulableEntities (gated), ungated pod is added and group remains gated in unschedulableEntities", initialPods: []*v1.Pod{gatedGP3}, state: stateGated, do: back(true, false, handBack(gp1, "fooPlugin")), where: "gated pod1,pod3"},
		{name: "requeuing a pod group members after PodGroup was deleted moves them to incompletePodGroupPods", initialPods: []*v1.Pod{gp1, gp2}, state: statePopped, do: back(false, true, handBack(gp1, "fooPlugin"), handBack(gp2, "barPlugin")), where: "none", incomplete: []string{"pod1", "pod2"}},
		{name: "requeuing a pod group members after PodGroup was deleted and is not last popped entity moves them to incompletePodGroupPods", initialPods: []*v1.Pod{gp1, gp2}, state: statePopped, do: back(true, true, handBack(gp1, "fooPlugin"), handBack(gp2, "barPlugin")), where: "none", incomplete: []string{"pod1", "pod2"}},
	})
}
