package schedcore

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The pod-group extension points (kube v1.37's workload-aware scheduling,
// GenericWorkload and TopologyAwareWorkloadScheduling). A pod-group cycle
// tries a group's members in placements (sets of nodes); per placement
// PlacementFeasible says after each member whether the group can still
// reach its quorum; with several feasible placements PlacementScore ranks
// them; when the group fails, PodGroupPostFilter (group preemption) may
// make room. The three states these plugins get are *CycleState values:
// the group's (PodGroupCycleState in kube), the placement's
// (PlacementCycleState, reached from a member's state by
// CycleState.PlacementCycleState) and each member's own.

// Placement is a set of nodes a pod group is tried on (kube's
// fwk.Placement). Name identifies it in messages and is chosen by the
// PlacementGenerate plugin (a topology domain's value); the one implicit
// placement of all nodes has an empty name.
type Placement struct {
	Name  string
	Nodes []*NodeInfo
}

// ProposedAssignment is one member placed in a placement during a
// pod-group cycle (kube's fwk.ProposedAssignment): the member, its node and
// the cycle state its scheduling left (what group preemption replays
// PreFilter extensions and Reserve on).
type ProposedAssignment struct {
	PodInfo    *PodInfo
	NodeName   string
	CycleState *CycleState
}

// Pod returns the member.
func (a ProposedAssignment) Pod() *v1.Pod {
	if a.PodInfo == nil {
		return nil
	}
	return a.PodInfo.Pod
}

// PodGroupAssignments are a placement and the members a pod-group cycle
// placed in it (kube's fwk.PodGroupAssignments); every member is one of
// the group's PodGroupInfo.UnscheduledPods.
type PodGroupAssignments struct {
	*Placement
	ProposedAssignments []ProposedAssignment
}

// PlacementProgress is where a placement's trial stands after a member
// (kube's framework.PlacementProgress): Remaining members not tried yet in
// this cycle, Scheduled members placed (bound or assumed before the
// cycle, plus those placed in this placement so far).
type PlacementProgress struct {
	Remaining int
	Scheduled int
}

// PlacementFeasiblePlugin says after each member of a pod group is tried
// in a placement whether the group can still be placed there (kube's
// framework.PlacementFeasiblePlugin, internal to its framework: only
// GangScheduling is one, and the framework wires it with GenericWorkload
// on whatever the profile lists). Wait: not yet, more members may make it;
// Unschedulable: give the placement up, the remaining members are not
// tried; Success: the group is placed, and stays so for the remaining
// members.
type PlacementFeasiblePlugin interface {
	Plugin
	PlacementFeasible(ctx context.Context, placementState *CycleState, podGroup PodGroupInfo, progress PlacementProgress) *Status
}

// GeneratePlacementsResult is what a PlacementGenerate plugin proposes
// (kube's fwk.GeneratePlacementsResult); placements may overlap; none
// means no feasible placement.
type GeneratePlacementsResult struct {
	Placements []*Placement
}

// PlacementGeneratePlugin divides a parent placement (all nodes) into the
// placements a pod group is tried on (kube's fwk.PlacementGeneratePlugin).
// A profile has at most one; without one the group is tried on the parent.
type PlacementGeneratePlugin interface {
	Plugin
	GeneratePlacements(ctx context.Context, podGroupState *CycleState, podGroup PodGroupInfo, parent *Placement) (*GeneratePlacementsResult, *Status)
}

// PlacementScore is one placement's score from one plugin (kube's
// fwk.PlacementScore), what NormalizePlacementScore rescales.
type PlacementScore struct {
	Placement *Placement
	Score     int64
}

// PlacementPluginScores are a placement's weighted, normalized scores per
// plugin and their total (kube's fwk.PlacementPluginScores, without its
// tie-breaking Randomizer: ties are the algorithm's to break).
type PlacementPluginScores struct {
	Placement  *Placement
	Scores     []PluginScore
	TotalScore int64
}

// PlacementScoreExtensions rescales a plugin's placement scores into
// [MinNodeScore, MaxNodeScore] once every feasible placement is scored
// (kube's fwk.PlacementScoreExtensions).
type PlacementScoreExtensions interface {
	NormalizePlacementScore(ctx context.Context, podGroupState *CycleState, podGroup PodGroupInfo, scores []PlacementScore) *Status
}

// PlacementScorePlugin ranks the placements where a pod group was found
// feasible (kube's fwk.PlacementScorePlugin). state is the placement's
// state; assignments are the members placed there.
// PlacementScoreExtensions returns nil when the scores need no
// normalization.
type PlacementScorePlugin interface {
	Plugin
	ScorePlacement(ctx context.Context, placementState *CycleState, podGroup PodGroupInfo, assignments *PodGroupAssignments) (int64, *Status)
	PlacementScoreExtensions() PlacementScoreExtensions
}

// PodGroupSchedulingFunc runs a pod group's scheduling algorithm again
// (on whatever the caller changed in the snapshot, such as victims
// removed) and returns the members it could place (kube's
// fwk.PodGroupSchedulingFunc).
type PodGroupSchedulingFunc func(ctx context.Context) (*PodGroupAssignments, *Status)

// PodGroupPostFilterResult nominates nodes for a group's members (kube's
// fwk.PodGroupPostFilterResult); only members with a nominated node are in
// it.
type PodGroupPostFilterResult struct {
	NominatingInfos map[types.NamespacedName]*NominatingInfo
}

// PodGroupPostFilterPlugin runs when a pod-group cycle ends Unschedulable
// (kube's fwk.PodGroupPostFilterPlugin): group preemption. Unschedulable:
// the next plugin is tried; UnschedulableAndUnresolvable: no later plugin
// can help; Success: the group can be placed (its nominations in the
// result); Error: an internal error.
type PodGroupPostFilterPlugin interface {
	Plugin
	PodGroupPostFilter(ctx context.Context, podGroupState *CycleState, podGroup PodGroupInfo, schedule PodGroupSchedulingFunc) (*PodGroupPostFilterResult, *Status)
}
