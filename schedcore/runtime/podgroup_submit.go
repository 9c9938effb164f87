package runtime

import (
	"context"
	"fmt"
	"time"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// submitPodGroupAlgorithmResult acts on the outcome: with a success the
// placed members are assumed in the cache, reserved, permitted and bound;
// every other member fails with kube's status for its case; then the
// condition, the metric and the group's requeue (kube's
// submitPodGroupAlgorithmResult).
func (s *Scheduler) submitPodGroupAlgorithmResult(ctx context.Context, fw *Framework, pgState *schedcore.CycleState, g *schedcore.QueuedPodInfo, r *groupResult, start time.Time, rootStatus *schedcore.Status) {
	members := g.Group.Members
	if len(r.podResults) != len(members) {
		s.Logger.Error(fmt.Errorf("some pods were not processed"), "scheduling error for pod group", "podGroup", g.Group.Key().String())
		r.status = schedcore.NewStatus(schedcore.Error, "scheduling error for pod group, some pods were not processed")
		r.podResults = nil
		completePodGroupAlgorithmResult(s, fw, members, pgState, r)
	}
	now := s.Clock.Now()
	for i, m := range members {
		pr := r.podResults[i]
		podStart := now.Add(-pr.duration)
		switch {
		case r.status.IsError():
			st := r.status
			if pr.status.IsError() {
				st = pr.status
			}
			s.handleFailure(ctx, fw, m, st, clearNominatedNode, podStart)
		case !pr.status.IsSuccess():
			s.handleFailure(ctx, fw, m, pr.status, pr.result.NominatingInfo, podStart)
		case r.status.IsSuccess():
			pr.state.SetPodGroupSchedulingCycle(nil)
			assumed, st := s.prepareForBindingCycle(ctx, pr.state, fw, m, pr.result)
			if !st.IsSuccess() {
				s.handleFailure(ctx, fw, assumed, st, clearNominatedNode, podStart)
				continue
			}
			s.startBindingCycle(ctx, pr.state, fw, pr.result, assumed, podStart)
		case r.status.IsRejected() && r.waitingOnPreemption:
			s.handleFailure(ctx, fw, m, r.status, pr.result.NominatingInfo, podStart)
		case r.status.IsRejected():
			s.handleFailure(ctx, fw, m, withError(schedcore.Unschedulable, errPodGroupUnschedulable, r.status.Message()), clearNominatedNode, podStart)
		default:
			err := fmt.Errorf("received unexpected pod group scheduling algorithm status code: %s", r.status.Code())
			s.handleFailure(ctx, fw, m, schedcore.AsStatus(err), clearNominatedNode, podStart)
		}
	}
	if s.SyncBinding {
		// A member's failure may have rejected members waiting at Permit.
		s.ResolveWaiting(ctx)
	}

	var cond metav1.Condition
	switch {
	case r.status.IsSuccess():
		cond = metav1.Condition{Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionTrue, Reason: "Scheduled", Message: r.status.Message()}
	case r.status.IsRejected():
		cond = metav1.Condition{Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionFalse, Reason: schedulingv1beta1.PodGroupReasonUnschedulable, Message: r.status.Message()}
	default:
		cond = metav1.Condition{Type: schedulingv1beta1.PodGroupInitiallyScheduled, Status: metav1.ConditionFalse, Reason: schedulingv1beta1.PodGroupReasonSchedulerError, Message: r.status.AsError().Error()}
	}
	if pg := g.Group.Object; pg != nil {
		s.updatePodGroupCondition(ctx, pg, cond)
	}

	if rec := s.podGroupRecorder(); rec != nil {
		result := "error"
		switch {
		case r.status.IsSuccess():
			result = "scheduled"
		case r.status.IsRejected() && r.waitingOnPreemption:
			result = "waiting_on_preemption"
		case r.status.IsRejected():
			result = "unschedulable"
		}
		rec.PodGroupAttempt(fw.profileName, result, s.Clock.Since(start))
	}
	if err := s.Queue.AddAttemptedPodGroupIfNeeded(s.Logger, g, s.Queue.SchedulingCycle(), rootStatus); err != nil {
		s.Logger.Error(err, "Failed to add attempted pod group to scheduling queue", "podGroup", g.Group.Key().String())
	}
}

// PodGroupMetricsRecorder is an optional interface of a MetricsRecorder
// for the pod-group cycle's metrics (kube's scheduler_podgroup_* and
// placement metrics).
type PodGroupMetricsRecorder interface {
	// PodGroupAttempt observes one pod-group cycle: result is
	// "scheduled", "unschedulable", "waiting_on_preemption" or "error"
	// (podgroup_schedule_attempts_total,
	// podgroup_scheduling_attempt_duration_seconds).
	PodGroupAttempt(profile, result string, d time.Duration)
	// PodGroupAlgorithmDuration observes the group algorithm's time
	// (podgroup_scheduling_algorithm_duration_seconds).
	PodGroupAlgorithmDuration(d time.Duration)
	// GeneratedPlacements counts the placements generated
	// (generated_placements_total).
	GeneratedPlacements(profile string, n int)
	// PlacementEvaluation observes one placement tried: result is
	// "feasible" or "infeasible" (placement_evaluations_total,
	// placement_evaluation_duration_seconds).
	PlacementEvaluation(profile, result string, d time.Duration)
}

func (s *Scheduler) podGroupRecorder() PodGroupMetricsRecorder {
	r, _ := s.Recorder.(PodGroupMetricsRecorder)
	return r
}
