package schedcore_test

import (
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestCycleStatePodGroupMarkers: a member's state carries its group's
// state and its placement's (kube's SetPodGroupSchedulingCycle and
// SetPlacementCycleState); a clone shares them, as kube's Clone; a reset
// state is a single pod's again.
func TestCycleStatePodGroupMarkers(t *testing.T) {
	group, placement, member := schedcore.NewCycleState(), schedcore.NewCycleState(), schedcore.NewCycleState()
	if member.IsPodGroupSchedulingCycle() || member.PodGroupSchedulingCycle() != nil || member.PlacementCycleState() != nil {
		t.Fatalf("a new state is in no pod-group cycle")
	}
	var nilState *schedcore.CycleState
	if nilState.IsPodGroupSchedulingCycle() || nilState.PodGroupSchedulingCycle() != nil || nilState.PlacementCycleState() != nil {
		t.Fatalf("a nil state answers as a single pod's")
	}
	member.SetPodGroupSchedulingCycle(group)
	member.SetPlacementCycleState(placement)
	if !member.IsPodGroupSchedulingCycle() || member.PodGroupSchedulingCycle() != group || member.PlacementCycleState() != placement {
		t.Fatalf("markers not kept")
	}
	c := member.Clone()
	if c.PodGroupSchedulingCycle() != group || c.PlacementCycleState() != placement {
		t.Errorf("a clone shares the group's and the placement's states")
	}
	group.SetPlacementCycleState(placement)
	if group.ParentPlacementCycleState() != placement {
		t.Errorf("a group's parent placement is the field PlacementCycleState reads")
	}
	member.SetPodGroupSchedulingCycle(nil)
	if member.IsPodGroupSchedulingCycle() {
		t.Errorf("unmarked (handed to binding), the member's state is no pod-group cycle's")
	}
	c.Reset()
	if c.IsPodGroupSchedulingCycle() || c.PlacementCycleState() != nil {
		t.Errorf("a reset state is in no pod-group cycle")
	}
}

func TestProposedAssignmentPod(t *testing.T) {
	p := schedtest.MakePod("p").Obj()
	if got := (schedcore.ProposedAssignment{PodInfo: schedcore.NewPodInfo(p)}).Pod(); got != p {
		t.Errorf("Pod() = %v, want the member", got)
	}
	if got := (schedcore.ProposedAssignment{}).Pod(); got != nil {
		t.Errorf("Pod() of an empty assignment = %v, want nil", got)
	}
}
