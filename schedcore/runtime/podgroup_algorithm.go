package runtime

import (
	"context"
	"errors"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// podGroupSchedulingAlgorithm tries the group over placements with
// TopologyAwareWorkloadScheduling, else in one implicit placement of all
// nodes; the reverts undo what the returned result assumed.
func (s *Scheduler) podGroupSchedulingAlgorithm(ctx context.Context, fw *Framework, pgState *schedcore.CycleState, g *schedcore.QueuedPodGroupInfo) (*groupResult, revertFns) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if fw.handle != nil && fw.handle.Features().TopologyAwareWorkloadScheduling {
		return s.podGroupSchedulingPlacementAlgorithm(ctx, fw, pgState, g)
	}
	placementState := schedcore.NewCycleState()
	placementState.SetPodGroupSchedulingCycle(pgState)
	return s.podGroupSchedulingDefaultAlgorithm(ctx, fw, placementState, g)
}

// podGroupSchedulingDefaultAlgorithm tries the members one by one in the
// current placement, asking PlacementFeasible before the first and after
// each; it stops once the group can no longer be feasible (kube's
// podGroupSchedulingDefaultAlgorithm). A result that is not a success has
// nothing assumed.
func (s *Scheduler) podGroupSchedulingDefaultAlgorithm(ctx context.Context, fw *Framework, placementState *schedcore.CycleState, g *schedcore.QueuedPodGroupInfo) (result *groupResult, reverts revertFns) {
	defer func() {
		if !result.status.IsSuccess() {
			reverts.revert()
			result.anyScheduled = false
		}
	}()
	result = &groupResult{
		podResults:     make([]podResult, 0, len(g.Members)),
		status:         groupUnschedulable(),
		placementState: placementState,
	}
	state, err := s.snapshot.PodGroupStates().Get(g.Namespace, g.Name)
	if err != nil {
		result.status = schedcore.AsStatus(fmt.Errorf("failed to get podGroup state for podGroup %s/%s to compute gang feasibility: %w", g.Namespace, g.Name, err))
		return result, nil
	}
	progress := schedcore.PlacementProgress{Remaining: len(g.UnscheduledPods()), Scheduled: state.ScheduledPodsCount()}
	st := fw.RunPlacementFeasiblePlugins(ctx, placementState, g, progress)
	result.status = st
	if st.IsError() {
		result.status = schedcore.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", st.AsError()))
		return result, nil
	}
	if st.Code() == schedcore.Unschedulable {
		result.status = groupUnschedulable(st.Reasons()...)
		return result, nil
	}
	anyScheduled := false
	for _, m := range g.Members {
		pr, revert := s.podGroupPodSchedulingAlgorithm(ctx, fw, placementState, m)
		result.podResults = append(result.podResults, pr)
		if revert != nil {
			reverts = append(reverts, revert)
		}
		if !pr.status.IsSuccess() && !pr.status.IsRejected() {
			result.status = schedcore.AsStatus(fmt.Errorf("failed to schedule other pod from a pod group: %w", pr.status.AsError()))
			break
		}
		progress.Remaining--
		if pr.status.IsSuccess() {
			progress.Scheduled++
		}
		st := fw.RunPlacementFeasiblePlugins(ctx, placementState, g, progress)
		if st.IsError() {
			result.status = schedcore.AsStatus(fmt.Errorf("failed to evaluate placement feasibility: %w", st.AsError()))
			break
		}
		result.status = st
		if st.Code() == schedcore.Unschedulable {
			break
		}
		anyScheduled = anyScheduled || pr.status.IsSuccess()
	}
	if result.status.IsWait() {
		result.status = groupUnschedulable(result.status.Reasons()...)
	}
	result.anyScheduled = anyScheduled
	return result, reverts
}

// podGroupPodSchedulingAlgorithm schedules one member: filter and score
// over the placement's nodes, no per-pod PostFilter, then assume in the
// snapshot and Reserve; the revert undoes both.
func (s *Scheduler) podGroupPodSchedulingAlgorithm(ctx context.Context, fw *Framework, placementState *schedcore.CycleState, qpi *schedcore.QueuedPodInfo) (podResult, func()) {
	state := s.initPodSchedulingContext(fw, placementState)
	start := s.Clock.Now()
	result, st := s.podGroupMemberAlgorithm(ctx, fw, state, qpi)
	if !st.IsSuccess() {
		return podResult{qpi: qpi, result: result, state: state, duration: s.Clock.Since(start), status: st}, nil
	}
	st, revert := s.assumeAndReserveInSnapshot(ctx, fw, state, qpi, result.SuggestedHost)
	if !st.IsSuccess() {
		return podResult{qpi: qpi, result: ScheduleResult{NominatingInfo: clearNominatedNode}, state: state, duration: s.Clock.Since(start), status: st}, nil
	}
	return podResult{qpi: qpi, result: result, state: state, duration: s.Clock.Since(start)}, revert
}

// podGroupMemberAlgorithm is kube's schedulingAlgorithm in a pod-group
// cycle: a member that fits nowhere is Unschedulable with its FitError and
// no nomination (PodGroupPostFilter may give one later). It runs with the
// scheduler loop's options (loopCycle): nothing reads a member's scores
// but the chosen node's and the runner-up's (the placement scores come
// from the PlacementScore plugins), so it scores into the framework's
// buffers instead of clearing and listing every node's.
func (s *Scheduler) podGroupMemberAlgorithm(ctx context.Context, fw *Framework, state *schedcore.CycleState, qpi *schedcore.QueuedPodInfo) (ScheduleResult, *schedcore.Status) {
	result, diag, err := s.Algorithm.SchedulePodWith(ctx, fw, state, qpi.Pod, loopCycle)
	if err == nil {
		if diag != nil {
			diag.NodeToStatus.Release()
		}
		return result, nil
	}
	if errors.Is(err, ErrNoNodesAvailable) {
		return ScheduleResult{NominatingInfo: clearNominatedNode}, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable).WithError(err)
	}
	var fitErr *schedcore.FitError
	if !errors.As(err, &fitErr) {
		return ScheduleResult{NominatingInfo: clearNominatedNode}, schedcore.AsStatus(err)
	}
	fitErr.Settle()
	return ScheduleResult{}, schedcore.NewStatus(schedcore.Unschedulable).WithError(fitErr)
}

// assumeAndReserveInSnapshot assumes the member on node in the snapshot
// only and runs Reserve (kube's assumeAndReserveWithRevert in a pod-group
// cycle); the revert runs Unreserve, forgets the pod and gives it back its
// nomination.
func (s *Scheduler) assumeAndReserveInSnapshot(ctx context.Context, fw *Framework, state *schedcore.CycleState, qpi *schedcore.QueuedPodInfo, node string) (*schedcore.Status, func()) {
	podCopy := new(v1.Pod)
	*podCopy = *qpi.Pod
	podCopy.Spec.NodeName = node
	pi := qpi.PodInfo.ForPod(podCopy)
	if err := s.snapshot.AssumePod(pi); err != nil {
		return schedcore.AsStatus(err), nil
	}
	s.Queue.DeleteNominatedPodIfExists(podCopy)
	undo := func() {
		fw.RunReservePluginsUnreserve(ctx, state, podCopy, node)
		if err := s.snapshot.ForgetPod(podCopy); err != nil {
			s.Logger.Error(err, "ForgetPod failed", "pod", schedcore.PodName(podCopy))
		}
		if nn := podCopy.Status.NominatedNodeName; nn != "" {
			s.Queue.AddNominatedPod(s.Logger, pi, &schedcore.NominatingInfo{NominatedNodeName: nn, NominatingMode: schedcore.ModeOverride})
		}
	}
	if st := fw.RunReservePluginsReserve(ctx, state, podCopy, node); !st.IsSuccess() {
		undo()
		if st.IsRejected() {
			return schedcore.NewStatus(st.Code()).WithError(singleNodeFitError(qpi.Pod, node, st)), nil
		}
		return st, nil
	}
	return nil, undo
}

// podGroupSchedulingPlacementAlgorithm tries the group in each placement
// the generator makes (reverting each), and picks the best feasible one by
// the placement scores (kube's podGroupSchedulingPlacementAlgorithm).
// Placements come in the generator's order (TopologyPlacementGenerator:
// by domain name); equal totals go to the earliest (kube: at random).
func (s *Scheduler) podGroupSchedulingPlacementAlgorithm(ctx context.Context, fw *Framework, pgState *schedcore.CycleState, g *schedcore.QueuedPodGroupInfo) (final *groupResult, _ revertFns) {
	allNodes := s.snapshot.ListNodesInPlacement()
	pgState.RecordPluginMetrics = recordsPluginMetrics(fw.recorder)
	placements, st := fw.RunPlacementGeneratePlugins(ctx, pgState, g, allNodes)
	if !st.IsSuccess() {
		return &groupResult{status: st}, nil
	}
	rec := s.podGroupRecorder()
	if rec != nil {
		rec.GeneratedPlacements(fw.profileName, len(placements))
	}
	parentName, parentNodes, hadParent := s.snapshot.Placement()
	defer func() {
		s.snapshot.ForgetPlacement()
		if hadParent {
			if err := s.snapshot.AssumePlacement(parentName, parentNodes); err != nil {
				final.status = schedcore.AsStatus(fmt.Errorf("failed to restore parent pod group placement: %w", err))
			}
		}
	}()
	var anyResult *groupResult
	var successful []*groupResult
	var feasible []*schedcore.Placement
	var outcomes []PlacementOutcome
	observe := s.Hooks.Placements
	for _, p := range placements {
		evalStart := s.Clock.Now()
		s.snapshot.ForgetPlacement()
		if err := s.snapshot.AssumePlacement(p.Name, p.Nodes); err != nil {
			return &groupResult{status: schedcore.AsStatus(fmt.Errorf("failed to assume pod group placement: %w", err))}, nil
		}
		placementState := schedcore.NewCycleState()
		placementState.SetPodGroupSchedulingCycle(pgState)
		result, reverts := s.podGroupSchedulingDefaultAlgorithm(ctx, fw, placementState, g)
		reverts.revert()
		result.placement = p.Name
		if result.status.IsError() {
			return result, nil
		}
		if anyResult == nil {
			anyResult = result
		}
		outcome := "infeasible"
		if result.status.IsSuccess() {
			outcome = "feasible"
			successful = append(successful, result)
			feasible = append(feasible, p)
		}
		if observe != nil {
			o := PlacementOutcome{Name: p.Name, Nodes: len(p.Nodes), Feasible: result.status.IsSuccess()}
			if !o.Feasible {
				o.Message = result.status.Message()
			}
			outcomes = append(outcomes, o)
		}
		if rec != nil {
			rec.PlacementEvaluation(fw.profileName, outcome, s.Clock.Since(evalStart))
		}
	}
	if len(successful) == 0 {
		anyResult.status = groupUnschedulable(fmt.Sprintf("0/%d placements are available, first placement status: %v", len(placements), anyResult.status.AsError()))
		if observe != nil {
			observe(g, outcomes)
		}
		return anyResult, nil
	}
	best, scores, st := s.findBestPodGroupPlacement(ctx, fw, pgState, g, feasible, successful)
	if !st.IsSuccess() {
		return &groupResult{status: st}, nil
	}
	if observe != nil {
		observePlacements(observe, g, outcomes, successful[best].placement, scores)
	}
	return successful[best], nil
}

// observePlacements marks the chosen placement and the scores of the
// scored ones and hands the outcomes to the hook.
func observePlacements(observe func(*schedcore.QueuedPodGroupInfo, []PlacementOutcome), g *schedcore.QueuedPodGroupInfo, outcomes []PlacementOutcome, chosen string, scores []schedcore.PlacementPluginScores) {
	total := map[string]int64{}
	for _, sc := range scores {
		total[sc.Placement.Name] = sc.TotalScore
	}
	for i := range outcomes {
		o := &outcomes[i]
		o.Chosen = o.Name == chosen
		if sc, ok := total[o.Name]; ok {
			o.Scored, o.Score = true, sc
		}
	}
	observe(g, outcomes)
}

// findBestPodGroupPlacement returns the index of the feasible placement
// with the highest total placement score (equals go to
// breakPlacementTie), and the scores.
func (s *Scheduler) findBestPodGroupPlacement(ctx context.Context, fw *Framework, pgState *schedcore.CycleState, g *schedcore.QueuedPodGroupInfo, placements []*schedcore.Placement, results []*groupResult) (int, []schedcore.PlacementPluginScores, *schedcore.Status) {
	if len(results) == 1 {
		return 0, nil, nil
	}
	assignments := make([]*schedcore.PodGroupAssignments, len(results))
	states := make([]*schedcore.CycleState, len(results))
	for i, r := range results {
		assignments[i] = &schedcore.PodGroupAssignments{Placement: placements[i], ProposedAssignments: makeProposedAssignments(r)}
		states[i] = r.placementState
	}
	scores, st := fw.RunPlacementScorePlugins(ctx, pgState, g, assignments, states)
	if !st.IsSuccess() {
		return 0, nil, st
	}
	best := 0
	for i := 1; i < len(scores); i++ {
		if scores[i].TotalScore > scores[best].TotalScore {
			best = i
		}
	}
	return s.breakPlacementTie(placements, scores, best), scores, nil
}

// breakPlacementTie chooses among the placements sharing the best total
// (kube: a rand.Int Randomizer per placement, the highest wins;
// schedule_one_podgroup.go:1201-1222 findBestPlacement)
// as the node tie rule does (design §5.6): without the Algorithm's TieBreak
// the first in the generator's order (the lowest domain name), with it
// (--seed) the one it draws among their names in name order.
func (s *Scheduler) breakPlacementTie(placements []*schedcore.Placement, scores []schedcore.PlacementPluginScores, best int) int {
	if s.Algorithm == nil || s.Algorithm.TieBreak == nil {
		return best
	}
	var tied []string
	for i, sc := range scores {
		if sc.TotalScore == scores[best].TotalScore {
			tied = append(tied, placements[i].Name)
		}
	}
	if len(tied) < 2 {
		return best
	}
	sort.Strings(tied)
	name := s.Algorithm.TieBreak(tied)
	for i, sc := range scores {
		if sc.TotalScore == scores[best].TotalScore && placements[i].Name == name {
			return i
		}
	}
	return best
}
