package runtime

import (
	"context"
	"fmt"
	"time"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Extension point names of the pod-group points, as kube labels them in
// scheduler_framework_extension_point_duration_seconds.
const (
	ExtPlacementGenerate                = "PlacementGenerate"
	ExtPlacementFeasible                = "PlacementFeasible"
	ExtPlacementScore                   = "PlacementScore"
	ExtPlacementScoreExtensionNormalize = "PlacementScoreExtensionNormalize"
	ExtPodGroupPostFilter               = "PodGroupPostFilter"
)

// PlacementGeneratePluginNames lists the PlacementGenerate plugins (at
// most one).
func (f *Framework) PlacementGeneratePluginNames() []string { return names(f.placementGenerate) }

// PlacementScorePluginNames lists the PlacementScore plugins in order.
func (f *Framework) PlacementScorePluginNames() []string { return names(f.placementScore) }

// PlacementScorePluginWeights maps PlacementScore plugins to their weights.
func (f *Framework) PlacementScorePluginWeights() map[string]int64 {
	m := make(map[string]int64, len(f.placementScore))
	for i, p := range f.placementScore {
		m[p.Name()] = f.placementScoreWeight[i]
	}
	return m
}

// PodGroupPostFilterPluginNames lists the PodGroupPostFilter plugins in
// order.
func (f *Framework) PodGroupPostFilterPluginNames() []string { return names(f.podGroupPostFilter) }

// PlacementFeasiblePluginNames lists the PlacementFeasible plugins the
// framework wired (GangScheduling with GenericWorkload on, else none).
func (f *Framework) PlacementFeasiblePluginNames() []string { return names(f.placementFeasible) }

// timed reports whether a state's cycle times its plugins.
func (f *Framework) timed(state *schedcore.CycleState) bool {
	return f.recorder != nil && state != nil && state.RecordPluginMetrics
}

// RunPlacementFeasiblePlugins asks the PlacementFeasible plugins, after a
// member was tried in a placement, whether the group can still be placed
// there (kube's RunPlacementFeasiblePlugins): Success when all succeed; the
// first Unschedulable at once (stamped with its plugin); a Wait is kept
// (the last one) while the others run; an Error becomes "running
// PlacementFeasible plugin: ..." and any other code "unexpected status
// from PlacementFeasible plugin: CODE", both at once.
func (f *Framework) RunPlacementFeasiblePlugins(ctx context.Context, placementState *schedcore.CycleState, podGroup schedcore.PodGroupInfo, progress schedcore.PlacementProgress) (status *schedcore.Status) {
	start := time.Now()
	defer func() { f.observe(ExtPlacementFeasible, status, start) }()
	for _, pl := range f.placementFeasible {
		s := f.runPlacementFeasible(ctx, pl, placementState, podGroup, progress)
		switch {
		case s.IsSuccess():
			continue
		case s.Code() == schedcore.Wait:
			status = s.WithPlugin(pl.Name())
			continue
		case s.Code() == schedcore.Unschedulable:
			return s.WithPlugin(pl.Name())
		case s.Code() == schedcore.Error:
			return schedcore.AsStatus(fmt.Errorf("running PlacementFeasible plugin: %w", s.AsError())).WithPlugin(pl.Name())
		}
		return schedcore.AsStatus(fmt.Errorf("unexpected status from PlacementFeasible plugin: %v", s.Code())).WithPlugin(pl.Name())
	}
	return status
}

func (f *Framework) runPlacementFeasible(ctx context.Context, pl schedcore.PlacementFeasiblePlugin, state *schedcore.CycleState, podGroup schedcore.PodGroupInfo, progress schedcore.PlacementProgress) *schedcore.Status {
	if !f.timed(state) {
		return pl.PlacementFeasible(ctx, state, podGroup, progress)
	}
	t := time.Now()
	s := pl.PlacementFeasible(ctx, state, podGroup, progress)
	f.recorder.Plugin(pl.Name(), ExtPlacementFeasible, s.Code(), time.Since(t))
	return s
}

// RunPlacementGeneratePlugins divides nodes into the placements a group
// is tried on (kube's RunPlacementGeneratePlugins): without a
// PlacementGenerate plugin, one unnamed placement of all nodes; else the
// plugin's (the first and only one); its failure is returned stamped with
// its name, and no placement at all is Unschedulable "no feasible
// placements found".
func (f *Framework) RunPlacementGeneratePlugins(ctx context.Context, podGroupState *schedcore.CycleState, podGroup schedcore.PodGroupInfo, nodes []*schedcore.NodeInfo) (placements []*schedcore.Placement, status *schedcore.Status) {
	start := time.Now()
	defer func() { f.observe(ExtPlacementGenerate, status, start) }()
	parent := &schedcore.Placement{Nodes: nodes}
	if len(f.placementGenerate) == 0 {
		return []*schedcore.Placement{parent}, nil
	}
	pl := f.placementGenerate[0]
	var res *schedcore.GeneratePlacementsResult
	var s *schedcore.Status
	if f.timed(podGroupState) {
		t := time.Now()
		res, s = pl.GeneratePlacements(ctx, podGroupState, podGroup, parent)
		f.recorder.Plugin(pl.Name(), ExtPlacementGenerate, s.Code(), time.Since(t))
	} else {
		res, s = pl.GeneratePlacements(ctx, podGroupState, podGroup, parent)
	}
	if !s.IsSuccess() {
		return nil, s.WithPlugin(pl.Name())
	}
	if res == nil || len(res.Placements) == 0 {
		return nil, schedcore.NewStatus(schedcore.Unschedulable, "no feasible placements found").WithPlugin(pl.Name())
	}
	return res.Placements, nil
}

// RunPlacementScorePlugins scores the placements where the group was
// found feasible (kube's RunPlacementScorePlugins): each plugin's
// ScorePlacement per placement, with that placement's state
// (placementStates[i] for assignments[i]); each plugin's
// NormalizePlacementScore; then every score must be in [0, 100] and is
// multiplied by the plugin's weight. kube scores placements in parallel
// and reports whichever failure comes first; here placements are scored
// in order and the first failure in that order is reported, with kube's
// wording.
func (f *Framework) RunPlacementScorePlugins(ctx context.Context, podGroupState *schedcore.CycleState, podGroup schedcore.PodGroupInfo, assignments []*schedcore.PodGroupAssignments, placementStates []*schedcore.CycleState) (ps []schedcore.PlacementPluginScores, status *schedcore.Status) {
	start := time.Now()
	defer func() { f.observe(ExtPlacementScore, status, start) }()
	if len(assignments) != len(placementStates) {
		return nil, schedcore.AsStatus(fmt.Errorf("expected one PlacementCycleState per PodGroupAssignments, got %d placement states for %d assignments", len(placementStates), len(assignments)))
	}
	scores := make([][]schedcore.PlacementScore, len(f.placementScore))
	for i := range f.placementScore {
		scores[i] = make([]schedcore.PlacementScore, len(assignments))
	}
	if len(f.placementScore) > 0 {
		for j, a := range assignments {
			for i, pl := range f.placementScore {
				sc, s := f.runPlacementScore(ctx, pl, placementStates[j], podGroup, a)
				if !s.IsSuccess() {
					err := fmt.Errorf("plugin %q failed with: %w", pl.Name(), s.AsError())
					return nil, schedcore.AsStatus(fmt.Errorf("running PlacementScore plugins: %w", err))
				}
				scores[i][j] = schedcore.PlacementScore{Placement: a.Placement, Score: sc}
			}
		}
	}
	for i, pl := range f.placementScore {
		ext := pl.PlacementScoreExtensions()
		if ext == nil {
			continue
		}
		var s *schedcore.Status
		if f.timed(podGroupState) {
			t := time.Now()
			s = ext.NormalizePlacementScore(ctx, podGroupState, podGroup, scores[i])
			f.recorder.Plugin(pl.Name(), ExtPlacementScoreExtensionNormalize, s.Code(), time.Since(t))
		} else {
			s = ext.NormalizePlacementScore(ctx, podGroupState, podGroup, scores[i])
		}
		if !s.IsSuccess() {
			err := fmt.Errorf("plugin %q failed with: %w", pl.Name(), s.AsError())
			return nil, schedcore.AsStatus(fmt.Errorf("running NormalizePlacementScore on PlacementScore plugins: %w", err))
		}
	}
	out := make([]schedcore.PlacementPluginScores, len(assignments))
	for j, a := range assignments {
		pps := schedcore.PlacementPluginScores{Placement: a.Placement, Scores: make([]schedcore.PluginScore, len(f.placementScore))}
		for i, pl := range f.placementScore {
			sc := scores[i][j].Score
			if sc > schedcore.MaxNodeScore || sc < schedcore.MinNodeScore {
				err := fmt.Errorf("plugin %q returns an invalid score %v, it should in the range of [%v, %v] after normalizing", pl.Name(), sc, schedcore.MinNodeScore, schedcore.MaxNodeScore)
				return nil, schedcore.AsStatus(fmt.Errorf("applying score defaultWeights on PlacementScore plugins: %w", err))
			}
			w := sc * f.placementScoreWeight[i]
			pps.Scores[i] = schedcore.PluginScore{Name: pl.Name(), Score: w}
			pps.TotalScore += w
		}
		out[j] = pps
	}
	return out, nil
}

func (f *Framework) runPlacementScore(ctx context.Context, pl schedcore.PlacementScorePlugin, state *schedcore.CycleState, podGroup schedcore.PodGroupInfo, a *schedcore.PodGroupAssignments) (int64, *schedcore.Status) {
	if !f.timed(state) {
		return pl.ScorePlacement(ctx, state, podGroup, a)
	}
	t := time.Now()
	sc, s := pl.ScorePlacement(ctx, state, podGroup, a)
	f.recorder.Plugin(pl.Name(), ExtPlacementScore, s.Code(), time.Since(t))
	return sc, s
}

// RunPodGroupPostFilterPlugins runs when a pod-group cycle ended
// Unschedulable (kube's RunPodGroupPostFilterPlugins). With GenericWorkload
// off: Unschedulable "generic workload feature is disabled, cannot perform
// PodGroupPostFilter". Else the plugins in order: the first Success is
// returned as it is, the first UnschedulableAndUnresolvable stamped with
// its plugin (earlier reasons dropped either way); Unschedulable reasons
// are collected and returned together, stamped with the first plugin that
// gave one; any other code is an Error "error in %q PodGroupPostFilter
// plugins: MESSAGE".
func (f *Framework) RunPodGroupPostFilterPlugins(ctx context.Context, podGroupState *schedcore.CycleState, podGroup schedcore.PodGroupInfo, schedule schedcore.PodGroupSchedulingFunc) (_ *schedcore.PodGroupPostFilterResult, status *schedcore.Status) {
	if f.handle == nil || !f.handle.Features().GenericWorkload {
		return nil, schedcore.NewStatus(schedcore.Unschedulable, "generic workload feature is disabled, cannot perform PodGroupPostFilter")
	}
	start := time.Now()
	defer func() { f.observe(ExtPodGroupPostFilter, status, start) }()
	var reasons []string
	var rejector string
	for _, pl := range f.podGroupPostFilter {
		var res *schedcore.PodGroupPostFilterResult
		var s *schedcore.Status
		if f.timed(podGroupState) {
			t := time.Now()
			res, s = pl.PodGroupPostFilter(ctx, podGroupState, podGroup, schedule)
			f.recorder.Plugin(pl.Name(), ExtPodGroupPostFilter, s.Code(), time.Since(t))
		} else {
			res, s = pl.PodGroupPostFilter(ctx, podGroupState, podGroup, schedule)
		}
		switch s.Code() {
		case schedcore.Success:
			return res, s
		case schedcore.UnschedulableAndUnresolvable:
			return res, s.WithPlugin(pl.Name())
		case schedcore.Unschedulable:
			reasons = append(reasons, s.Reasons()...)
			if rejector == "" {
				rejector = pl.Name()
			}
		default:
			return nil, schedcore.AsStatus(fmt.Errorf("error in %q PodGroupPostFilter plugins: %s", pl.Name(), s.Message())).WithPlugin(pl.Name())
		}
	}
	return nil, schedcore.NewStatus(schedcore.Unschedulable, reasons...).WithPlugin(rejector)
}
