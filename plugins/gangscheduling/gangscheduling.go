package gangscheduling

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.GangScheduling

// PermitTimeout is how long a gang's member waits at Permit for the quorum
// before it is rejected (kube's permitTimeoutDuration).
const PermitTimeout = 5 * time.Minute

// The plugin's reasons, kube v1.37's words.
const (
	// ErrReasonPodGroupNotFound gates a member whose PodGroup is not known
	// (format: the PodGroup's name, quoted).
	ErrReasonPodGroupNotFound = "waiting for pods's pod group %q to appear in scheduling queue"
	// ErrReasonQuorumNotMet gates a gang's member while fewer than minCount
	// members are known.
	ErrReasonQuorumNotMet = "waiting for minCount pods from a gang to appear in scheduling queue"
	// ReasonWaitingForQuorum is the Permit Wait of a gang's member while
	// fewer than minCount are scheduled.
	ReasonWaitingForQuorum = "waiting for minCount pods from a gang to be scheduled"
	// ReasonMinCountUnsatisfiable ends a placement's trial: minCount,
	// scheduled, remaining.
	ReasonMinCountUnsatisfiable = "minCount (%d) cannot be satisfied: %d scheduled, %d remaining"
	// ReasonMinCountNotYetSatisfied is PlacementFeasible's Wait: minCount,
	// scheduled, remaining.
	ReasonMinCountNotYetSatisfied = "minCount (%d) is not yet satisfied: %d scheduled, %d remaining"
)

// GangScheduling enforces all-or-nothing scheduling of a gang PodGroup's
// members.
type GangScheduling struct {
	h *schedcore.Handle
}

var (
	_ schedcore.PreEnqueuePlugin        = (*GangScheduling)(nil)
	_ schedcore.PermitPlugin            = (*GangScheduling)(nil)
	_ schedcore.PlacementFeasiblePlugin = (*GangScheduling)(nil)
	_ schedcore.EnqueueExtensions       = (*GangScheduling)(nil)
)

// New returns the plugin; it takes no args.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	return &GangScheduling{h: h}, nil
}

// Name returns Name.
func (pl *GangScheduling) Name() string { return Name }

// groupName returns the PodGroup a pod names, "" for a pod in no group.
func groupName(pod *v1.Pod) string {
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		return *g.PodGroupName
	}
	return ""
}

// PreEnqueue gates a member until its PodGroup is known and, for a gang,
// until the cache knows minCount members.
func (pl *GangScheduling) PreEnqueue(_ context.Context, pod *v1.Pod) *schedcore.Status {
	name := groupName(pod)
	if pod.Spec.SchedulingGroup == nil {
		return nil
	}
	m := pl.h.PodGroupManager()
	var pg *schedulingv1beta1.PodGroup
	err := fmt.Errorf("no pod group manager")
	if m != nil {
		pg, err = m.PodGroups().Get(pod.Namespace, name)
	}
	if err != nil {
		// The pod is unschedulable until its PodGroup object is created.
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf(ErrReasonPodGroupNotFound, name))
	}
	gang := pg.Spec.SchedulingPolicy.Gang
	if gang == nil {
		return nil
	}
	st, err := m.PodGroupStates().Get(pod.Namespace, name)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if st.AllPodsCount() < int(gang.MinCount) {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonQuorumNotMet)
	}
	return nil
}

// Permit holds a gang's member until minCount members are scheduled (the
// cache's count, this member assumed included), then allows the members
// waiting at Permit.
func (pl *GangScheduling) Permit(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ string) (*schedcore.Status, time.Duration) {
	if pod.Spec.SchedulingGroup == nil {
		return nil, 0
	}
	name := groupName(pod)
	pg, err := pl.h.Snapshot().PodGroups().Get(pod.Namespace, name)
	if err != nil {
		return schedcore.AsStatus(fmt.Errorf("failed to get podGroup %s/%s: %w", pod.Namespace, name, err)), 0
	}
	m := pl.h.PodGroupManager()
	if m == nil {
		return schedcore.AsStatus(fmt.Errorf("failed to get podGroup %s/%s: no pod group manager", pod.Namespace, name)), 0
	}
	st, err := m.PodGroupStates().Get(pod.Namespace, pg.Name)
	if err != nil {
		return schedcore.AsStatus(err), 0
	}
	gang := pg.Spec.SchedulingPolicy.Gang
	if gang == nil {
		return nil, 0
	}
	if st.ScheduledPodsCount() < int(gang.MinCount) {
		// Activate the unscheduled members in case they were waiting for
		// this one to be scheduled.
		pl.h.Activate(st.UnscheduledPods())
		return schedcore.NewStatus(schedcore.Wait, ReasonWaitingForQuorum), PermitTimeout
	}
	// The quorum is met: allow this member and every waiting one.
	for uid := range st.AssumedPods() {
		if wp := pl.h.GetWaitingPod(uid); wp != nil {
			wp.Allow(Name)
		}
	}
	return nil, 0
}

// PlacementFeasible says, after a member was tried in a placement,
// whether the group can still reach minCount there (1 for a basic group).
func (pl *GangScheduling) PlacementFeasible(_ context.Context, _ *schedcore.CycleState, podGroup schedcore.PodGroupInfo, progress schedcore.PlacementProgress) *schedcore.Status {
	minCount := minCount(podGroup)
	remaining, scheduled := progress.Remaining, progress.Scheduled
	if remaining+scheduled < minCount {
		// Not enough members remain to reach minCount.
		return schedcore.NewStatus(schedcore.Unschedulable, fmt.Sprintf(ReasonMinCountUnsatisfiable, minCount, scheduled, remaining))
	}
	if scheduled < minCount {
		// The remaining members may reach it.
		return schedcore.NewStatus(schedcore.Wait, fmt.Sprintf(ReasonMinCountNotYetSatisfied, minCount, scheduled, remaining))
	}
	return nil
}

// minCount is a group's gang minCount, 1 for a basic group.
func minCount(podGroup schedcore.PodGroupInfo) int {
	pg := podGroup.PodGroup()
	if pg == nil || pg.Spec.SchedulingPolicy.Gang == nil {
		return 1
	}
	return int(pg.Spec.SchedulingPolicy.Gang.MinCount)
}

// EventsToRegister lists kube's events and hints: a member added (pending
// or bound) may complete a gang (spec.schedulingGroup is immutable, so pod
// updates cannot); a PodGroup added may ungate its members; a PodGroup
// update may, when it lowers a gang's minCount.
func (pl *GangScheduling) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add}, QueueingHintFn: pl.isSchedulableAfterPodAdded},
		{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Add}, QueueingHintFn: pl.isSchedulableAfterPodAdded},
		{Event: schedcore.ClusterEvent{Resource: schedcore.PodGroup, ActionType: schedcore.Add}, QueueingHintFn: pl.isSchedulableAfterPodGroupAdded},
		{Event: schedcore.ClusterEvent{Resource: schedcore.PodGroup, ActionType: schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterPodGroupUpdated},
	}, nil
}

// isSchedulableAfterPodAdded: Queue when the added pod names the same
// group as the rejected pod.
func (pl *GangScheduling) isSchedulableAfterPodAdded(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	_, added, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if pod.Spec.SchedulingGroup == nil || added.Spec.SchedulingGroup == nil {
		return schedcore.QueueSkip, nil
	}
	if sameGroup(pod, added.Namespace, groupName(added)) {
		return schedcore.Queue, nil
	}
	return schedcore.QueueSkip, nil
}

// isSchedulableAfterPodGroupAdded: Queue when the added PodGroup is the
// rejected pod's.
func (pl *GangScheduling) isSchedulableAfterPodGroupAdded(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	_, added, err := helper.As[*schedulingv1beta1.PodGroup](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if pod.Spec.SchedulingGroup == nil {
		return schedcore.QueueSkip, nil
	}
	if sameGroup(pod, added.Namespace, added.Name) {
		return schedcore.Queue, nil
	}
	return schedcore.QueueSkip, nil
}

// isSchedulableAfterPodGroupUpdated: Queue only when the rejected pod's
// PodGroup was a gang before and after and its minCount decreased.
func (pl *GangScheduling) isSchedulableAfterPodGroupUpdated(_ logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	oldPG, newPG, err := helper.As[*schedulingv1beta1.PodGroup](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if pod.Spec.SchedulingGroup == nil {
		return schedcore.QueueSkip, nil
	}
	if !sameGroup(pod, newPG.Namespace, newPG.Name) {
		return schedcore.QueueSkip, nil
	}
	oldGang, newGang := oldPG.Spec.SchedulingPolicy.Gang, newPG.Spec.SchedulingPolicy.Gang
	// Updates to non-gang policies cannot make the waiting pods schedulable.
	if oldGang == nil || newGang == nil {
		return schedcore.QueueSkip, nil
	}
	if newGang.MinCount >= oldGang.MinCount {
		return schedcore.QueueSkip, nil
	}
	return schedcore.Queue, nil
}

// sameGroup reports whether pod names the group namespace/name (kube's
// areSameHierarchy without CompositePodGroup: the keys are equal).
func sameGroup(pod *v1.Pod, namespace, name string) bool {
	return pod.Namespace == namespace && groupName(pod) == name
}
