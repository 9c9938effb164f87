package podgrouppodscount

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.PodGroupPodsCount

// ErrReasonNoPodsAssigned is normalization's error when every placement
// scored 0 (kube's words).
const ErrReasonNoPodsAssigned = "no pods from pod group are assigned to any of the candidate placements"

// PodGroupPodsCount scores placements by the members they hold.
type PodGroupPodsCount struct {
	h *schedcore.Handle
}

var (
	_ schedcore.PlacementScorePlugin     = (*PodGroupPodsCount)(nil)
	_ schedcore.PlacementScoreExtensions = (*PodGroupPodsCount)(nil)
)

// New returns the plugin; it takes no args.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	return &PodGroupPodsCount{h: h}, nil
}

// Name returns Name.
func (pl *PodGroupPodsCount) Name() string { return Name }

// ScorePlacement is the group's scheduled members (assumed and bound, from
// the cycle's snapshot) plus those placed in the placement: counting the
// scheduled ones too keeps the relative differences between placements
// small.
func (pl *PodGroupPodsCount) ScorePlacement(_ context.Context, _ *schedcore.CycleState, podGroup schedcore.PodGroupInfo, a *schedcore.PodGroupAssignments) (int64, *schedcore.Status) {
	key := podGroup.Key()
	st, err := pl.h.Snapshot().PodGroupStates().Get(key.Namespace, key.Name)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	return int64(st.ScheduledPodsCount() + len(a.ProposedAssignments)), nil
}

// PlacementScoreExtensions returns the plugin: it normalizes.
func (pl *PodGroupPodsCount) PlacementScoreExtensions() schedcore.PlacementScoreExtensions {
	return pl
}

// NormalizePlacementScore rescales by the highest count:
// MinScore + score*(MaxScore-MinScore)/max.
func (pl *PodGroupPodsCount) NormalizePlacementScore(_ context.Context, _ *schedcore.CycleState, _ schedcore.PodGroupInfo, scores []schedcore.PlacementScore) *schedcore.Status {
	var maxCount int64
	for _, s := range scores {
		maxCount = max(maxCount, s.Score)
	}
	if maxCount == 0 {
		// kube: GangScheduling is assumed never to let a group with no
		// member placed through.
		return schedcore.AsStatus(errors.New(ErrReasonNoPodsAssigned))
	}
	for i := range scores {
		scores[i].Score = schedcore.MinNodeScore + scores[i].Score*(schedcore.MaxNodeScore-schedcore.MinNodeScore)/maxCount
	}
	return nil
}
