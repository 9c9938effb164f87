package runtime

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The pod-group scheduling cycle of kube-scheduler v1.37
// (schedule_one_podgroup.go), one function per kube function, without
// CompositePodGroups. A popped entity whose Group is set is scheduled as a
// whole: every member is tried in member order on the snapshot with the
// members before it assumed there (simulation, reverted before the
// outcome is acted on), GangScheduling's PlacementFeasible says whether the
// group can still reach its quorum, and only then are the members placed
// assumed in the cache and bound, or all of them failed with kube's
// messages.

// errPodGroupUnschedulable is kube's error of a group that failed.
var errPodGroupUnschedulable = errors.New("pod group is unschedulable")

// withError is kube's status.WithError(err) on a status with reasons:
// kube's Message puts the error first, ours reads the reasons only, so
// the error joins them in front.
func withError(code schedcore.Code, err error, reasons ...string) *schedcore.Status {
	return schedcore.NewStatus(code, append([]string{err.Error()}, reasons...)...).WithError(err)
}

// groupUnschedulable is fwk.NewStatus(Unschedulable, reasons...).WithError(errPodGroupUnschedulable).
func groupUnschedulable(reasons ...string) *schedcore.Status {
	return withError(schedcore.Unschedulable, errPodGroupUnschedulable, reasons...)
}

// cloneStatus is kube's Status.Clone.
func cloneStatus(st *schedcore.Status) *schedcore.Status {
	if st == nil {
		return nil
	}
	c := schedcore.NewStatus(st.Code(), append([]string(nil), st.Reasons()...)...).WithError(st.Err())
	if st.Plugin() != "" {
		c = c.WithPlugin(st.Plugin())
	}
	return c
}

// revertFns undo simulated assumes, last first (kube's revertFns).
type revertFns []func()

func (r *revertFns) revert() {
	if r == nil {
		return
	}
	for i := len(*r) - 1; i >= 0; i-- {
		(*r)[i]()
	}
	*r = nil
}

// podResult is one member's outcome in a group cycle (kube's
// algorithmResult).
type podResult struct {
	qpi      *schedcore.QueuedPodInfo
	result   ScheduleResult
	state    *schedcore.CycleState
	duration time.Duration
	status   *schedcore.Status
}

// groupResult is a group's outcome (kube's podGroupAlgorithmResult).
type groupResult struct {
	podResults          []podResult
	status              *schedcore.Status
	waitingOnPreemption bool
	placementState      *schedcore.CycleState
	anyScheduled        bool
	// placement is the placement the result is of ("" without TAS).
	placement string
}

// scheduleOnePodGroup runs the pod-group workflow for a popped group
// entity (kube's scheduleOnePodGroup).
func (s *Scheduler) scheduleOnePodGroup(ctx context.Context, g *schedcore.QueuedPodInfo) {
	start := s.Clock.Now()
	s.Cache.UpdateSnapshot(s.snapshot)
	if err := s.reconcilePodGroupWithSnapshot(g.Group); err != nil {
		// Popped before the queue saw the group go: no condition is
		// written, the members come back through the queue.
		g.Group.Object = nil
		s.handlePodGroupFailureBeforeScheduling(ctx, g, err)
		return
	}
	if err := s.validatePodGroup(g.Group); err != nil {
		s.handlePodGroupFailureBeforeScheduling(ctx, g, err)
		return
	}
	fw := s.frameworkForPodGroup(g.Group)
	s.skipPodGroupPodSchedule(ctx, fw, g.Group)
	if len(g.Group.Members) == 0 {
		if err := s.Queue.AddAttemptedPodGroupIfNeeded(s.Logger, g, s.Queue.SchedulingCycle(), nil); err != nil {
			s.Logger.Error(err, "finishing a skipped pod group attempt", "podGroup", g.Group.Key().String())
		}
		return
	}
	s.podGroupCycle(ctx, fw, schedcore.NewCycleState(), g, start)
}

// reconcilePodGroupWithSnapshot takes the snapshot's PodGroup for the
// cycle (the popped entity may hold an older one).
func (s *Scheduler) reconcilePodGroupWithSnapshot(g *schedcore.QueuedPodGroupInfo) error {
	pg, err := s.snapshot.PodGroups().Get(g.Namespace, g.Name)
	if err != nil {
		return err
	}
	g.Object = pg
	return nil
}

// handlePodGroupFailureBeforeScheduling fails every member with err (a
// SchedulerError), writes the condition and requeues the group.
func (s *Scheduler) handlePodGroupFailureBeforeScheduling(ctx context.Context, g *schedcore.QueuedPodInfo, err error) {
	now := s.Clock.Now()
	for _, m := range g.Group.Members {
		fw, ferr := s.FrameworkForPod(m.Pod)
		if ferr != nil {
			s.Logger.Error(ferr, "Error occurred")
			s.Queue.Done(m.Pod.UID)
			continue
		}
		s.handleFailure(ctx, fw, m, schedcore.AsStatus(err), clearNominatedNode, now)
	}
	if pg := g.Group.Object; pg != nil {
		s.updatePodGroupCondition(ctx, pg, metav1.Condition{
			Type:    schedulingv1beta1.PodGroupInitiallyScheduled,
			Status:  metav1.ConditionFalse,
			Reason:  schedulingv1beta1.PodGroupReasonSchedulerError,
			Message: err.Error(),
		})
	}
	if e := s.Queue.AddAttemptedPodGroupIfNeeded(s.Logger, g, s.Queue.SchedulingCycle(), schedcore.AsStatus(err)); e != nil {
		s.Logger.Error(e, "Failed to add pod group back to scheduling queue", "podGroup", g.Group.Key().String())
	}
}

// validatePodGroup checks that the members, queued and already scheduled,
// share the scheduler name, the PodGroup's priority and a preemption
// policy, and that a profile has that name (kube's validatePodGroup with
// PodGroupPreemptionPolicy off, the alpha gate Features does not carry:
// the first member's policy is the group's).
func (s *Scheduler) validatePodGroup(g *schedcore.QueuedPodGroupInfo) error {
	schedulerName := ""
	priority := schedcore.PodGroupPriority(g.Object)
	var policy v1.PreemptionPolicy
	validatePod := func(pod *v1.Pod) error {
		if pod.Spec.SchedulerName != schedulerName {
			return fmt.Errorf("all pods in a single pod group should have the same .spec.schedulerName set, got: %q and %q", pod.Spec.SchedulerName, schedulerName)
		}
		if p := schedcore.PodPriority(pod); p != priority {
			return fmt.Errorf("all pods in a single pod group should have the same priority as the pod group's priority, got %d and %d", p, priority)
		}
		pp := v1.PreemptLowerPriority
		if pod.Spec.PreemptionPolicy != nil {
			pp = *pod.Spec.PreemptionPolicy
		}
		switch {
		case policy == "":
			policy = pp
		case pp != policy:
			return fmt.Errorf("all pods in a single pod group should have the same preemption policy, got %v and %v", pp, policy)
		}
		return nil
	}
	for _, m := range g.Members {
		if schedulerName == "" {
			schedulerName = m.Pod.Spec.SchedulerName
		}
		if err := validatePod(m.Pod); err != nil {
			return err
		}
	}
	state, err := s.snapshot.PodGroupStates().Get(g.Namespace, g.Name)
	if err != nil {
		return fmt.Errorf("failed to get pod group state: %w", err)
	}
	for _, pod := range state.ScheduledPods() {
		if err := validatePod(pod); err != nil {
			return err
		}
	}
	if _, ok := s.Profiles[schedulerName]; !ok {
		return fmt.Errorf("profile not found for scheduler name %q", schedulerName)
	}
	return nil
}

// features are the gates of the profiles (all share them).
func (s *Scheduler) features() schedcore.Features {
	for _, fw := range s.Profiles {
		if fw.handle != nil {
			return fw.handle.Features()
		}
	}
	return schedcore.Features{}
}

// frameworkForPodGroup is the first member's profile (validated).
func (s *Scheduler) frameworkForPodGroup(g *schedcore.QueuedPodGroupInfo) *Framework {
	return s.Profiles[g.Members[0].Pod.Spec.SchedulerName]
}

// skipPodGroupPodSchedule drops the members being deleted (with kube's
// FailedScheduling event) or already assumed; each is Done.
func (s *Scheduler) skipPodGroupPodSchedule(_ context.Context, fw *Framework, g *schedcore.QueuedPodGroupInfo) {
	for i := 0; i < len(g.Members); {
		pod := g.Members[i].Pod
		switch {
		case pod.DeletionTimestamp != nil:
			if fw.handle.Events() != nil {
				fw.handle.Events().Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", "skip schedule deleting pod: %v/%v", pod.Namespace, pod.Name)
			}
		case s.Cache.IsAssumedPod(pod):
		default:
			i++
			continue
		}
		s.Queue.Done(pod.UID)
		g.RemovePod(pod)
	}
}

// initPodSchedulingContext is a member's cycle state in a placement
// (kube's initPodSchedulingContext).
func (s *Scheduler) initPodSchedulingContext(fw *Framework, placementState *schedcore.CycleState) *schedcore.CycleState {
	state := schedcore.NewCycleState()
	s.randMu.Lock()
	state.RecordPluginMetrics = s.Rand.Intn(100) < pluginMetricsSamplePercent && recordsPluginMetrics(fw.recorder)
	s.randMu.Unlock()
	state.SetPodGroupSchedulingCycle(placementState.PodGroupSchedulingCycle())
	state.SetPlacementCycleState(placementState)
	return state
}

// podGroupCycle runs the algorithm, PodGroupPostFilter when the group is
// Unschedulable, and submits the outcome (kube's podGroupCycle).
func (s *Scheduler) podGroupCycle(ctx context.Context, fw *Framework, pgState *schedcore.CycleState, g *schedcore.QueuedPodInfo, start time.Time) {
	result := s.runRootSchedulingAlgorithm(ctx, fw, pgState, g.Group)
	rootStatus := result.status
	result = completePodGroupAlgorithmResult(s, fw, g.Group.Members, pgState, result)
	if r := s.podGroupRecorder(); r != nil {
		r.PodGroupAlgorithmDuration(s.Clock.Since(start))
	}
	// As kube's, the point runs whenever the group is Unschedulable, even
	// without PodGroupPostFilter plugins (the group's message then ends in
	// an empty reason, ", "). DefaultPreemption's runs the schedule func
	// inside a mutation session of the snapshot, which it restores.
	if rootStatus.Code() == schedcore.Unschedulable {
		schedule := func(ctx context.Context) (*schedcore.PodGroupAssignments, *schedcore.Status) {
			res := s.runRootSchedulingAlgorithm(ctx, fw, schedcore.NewCycleState(), g.Group)
			return &schedcore.PodGroupAssignments{ProposedAssignments: makeProposedAssignments(res)}, res.status
		}
		pfResult, st := fw.RunPodGroupPostFilterPlugins(ctx, pgState, g.Group, schedule)
		applyPodGroupPostFilterResult(result, pfResult, st)
	}
	s.submitPodGroupAlgorithmResult(ctx, fw, pgState, g, result, start, rootStatus)
}

// runRootSchedulingAlgorithm runs the algorithm and reverts every
// simulated assume; a success that placed nobody is Unschedulable.
func (s *Scheduler) runRootSchedulingAlgorithm(ctx context.Context, fw *Framework, pgState *schedcore.CycleState, g *schedcore.QueuedPodGroupInfo) *groupResult {
	result, reverts := s.podGroupSchedulingAlgorithm(ctx, fw, pgState, g)
	reverts.revert()
	if result.status.IsSuccess() && !result.anyScheduled {
		result.status = groupUnschedulable()
	}
	return result
}

// completePodGroupAlgorithmResult gives the members the algorithm did not
// reach a copy of the group status (taken before PodGroupPostFilter).
func completePodGroupAlgorithmResult(s *Scheduler, fw *Framework, members []*schedcore.QueuedPodInfo, pgState *schedcore.CycleState, r *groupResult) *groupResult {
	for i := len(r.podResults); i < len(members); i++ {
		placementState := schedcore.NewCycleState()
		placementState.SetPodGroupSchedulingCycle(pgState)
		r.podResults = append(r.podResults, podResult{qpi: members[i], state: s.initPodSchedulingContext(fw, placementState), status: cloneStatus(r.status)})
	}
	return r
}

// applyPodGroupPostFilterResult: a success makes the group wait on
// preemption with the nominations given; an error replaces the status;
// the post-filter's status is appended to the group's otherwise.
func applyPodGroupPostFilterResult(r *groupResult, pf *schedcore.PodGroupPostFilterResult, st *schedcore.Status) {
	if st.IsSuccess() {
		r.waitingOnPreemption = true
		for i := range r.podResults {
			p := r.podResults[i].qpi.Pod
			if pf != nil {
				if ni, ok := pf.NominatingInfos[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}]; ok {
					r.podResults[i].result.NominatingInfo = ni
				}
			}
		}
	}
	if st.IsError() {
		r.status = st
		return
	}
	r.status = cloneStatus(r.status)
	r.status.AppendReason(st.Message()) // kube's Status.String is its Message
}

// makeProposedAssignments lists the placed members of a result.
func makeProposedAssignments(r *groupResult) []schedcore.ProposedAssignment {
	out := make([]schedcore.ProposedAssignment, 0, len(r.podResults))
	for _, pr := range r.podResults {
		if pr.status.IsSuccess() && pr.result.SuggestedHost != "" {
			out = append(out, schedcore.ProposedAssignment{PodInfo: pr.qpi.PodInfo, NodeName: pr.result.SuggestedHost, CycleState: pr.state})
		}
	}
	return out
}

// updatePodGroupCondition sets the PodGroupInitiallyScheduled condition
// on the PodGroup's status, unless it is True and the new one is not, and
// hands a changed status to the driver (kube patches it).
func (s *Scheduler) updatePodGroupCondition(ctx context.Context, pg *schedulingv1beta1.PodGroup, cond metav1.Condition) {
	if old := apimeta.FindStatusCondition(pg.Status.Conditions, cond.Type); old != nil && old.Status == metav1.ConditionTrue && cond.Status != metav1.ConditionTrue {
		return
	}
	cond.ObservedGeneration = pg.Generation
	cond.LastTransitionTime = metav1.NewTime(s.Clock.Now())
	status := pg.Status.DeepCopy()
	if !apimeta.SetStatusCondition(&status.Conditions, cond) {
		return
	}
	if s.Hooks.PodGroupStatus != nil {
		s.Hooks.PodGroupStatus(ctx, pg, status)
	}
}
