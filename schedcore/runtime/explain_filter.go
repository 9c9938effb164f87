package runtime

import (
	"context"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// FilterVerdict is one filter plugin's answer on one node, for diagnosis.
type FilterVerdict struct {
	Plugin string
	Status *schedcore.Status
	// Explanation is the plugin's own account of the rejection, computed
	// from the state and node its Filter saw (FilterExplainer); nil when
	// the plugin has none, and in a verdict diagnosed for its shortfall
	// only (ExplainShortfalls, until Explanation.Detail).
	Explanation *schedcore.FilterExplanation
	// Shortfall is how far the node is from passing this plugin, in
	// (0, 1]: the explanation's Shortfall, or 1 when the plugin does not
	// explain itself or gives none (see FilterExplanation.Shortfall).
	Shortfall float64
}

// DiagnoseFilterPlugins runs every non-skipped filter on the node, each on
// its own, and returns every rejection with the plugin's explanation (kube
// stops at the first: that one is the first element). It is what explain
// shows; the scheduling path uses RunFilterPlugins.
func (f *Framework) DiagnoseFilterPlugins(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) []FilterVerdict {
	return diagnoseFilters(ctx, f.activeFilters(state), state, pod, nodeInfo, true)
}

// diagnoseFilters is DiagnoseFilterPlugins with the cycle's active
// filters (Framework.activeFilters, listed once for all the nodes);
// without gaps, the verdicts carry the shortfalls but no explanations.
func diagnoseFilters(ctx context.Context, filters []schedcore.FilterPlugin, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, gaps bool) []FilterVerdict {
	var out []FilterVerdict
	for _, pl := range filters {
		if v, failed := diagnose(ctx, pl, state, pod, nodeInfo, gaps); failed {
			out = append(out, v)
		}
	}
	return out
}

// diagnoseAfter is diagnoseFilters on a node the cycle's filters ran on
// once, on this state and node (no nominated pod counted), and rejected
// with first: the filters run in order and stop at the first rejection,
// so those before first's plugin passed and are not run again, first is
// that plugin's verdict (the status its Filter returns there), and only
// the filters after it run. Without first, or when its plugin is not one
// of filters, every filter runs.
//
// mem, when not nil, are the cycle's remembered verdicts of filters
// (Framework.diagnosisFilters): a later filter's verdict remembered for the
// node's generation is read rather than its Filter run again (most later
// filters pass most rejected nodes, on thousands of them), and a verdict
// Filter gives is remembered as the filter loop remembers it, so the next
// explanation of a pod with the same key reads it.
func diagnoseAfter(ctx context.Context, filters []schedcore.FilterPlugin, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, gaps bool, first *schedcore.Status, keep *verdictSlab, mem *filterMemos) []FilterVerdict {
	k := -1
	if first.IsRejected() {
		k = slices.IndexFunc(filters, func(pl schedcore.FilterPlugin) bool { return pl.Name() == first.Plugin() })
	}
	if k < 0 {
		return diagnoseFilters(ctx, filters, state, pod, nodeInfo, gaps)
	}
	// The verdicts are gathered on the stack and copied out at their
	// length (into keep, when given): most rejected nodes fail one or two
	// filters, and a list with room for every later filter, on thousands
	// of nodes, was a large share of what an explanation allocated.
	var buf [4]FilterVerdict
	out := append(buf[:0], explainVerdict(ctx, filters[k], state, pod, nodeInfo, first, gaps))
	for j := k + 1; j < len(filters); j++ {
		if v, failed := mem.diagnose(ctx, j, filters[j], state, pod, nodeInfo, gaps); failed {
			out = append(out, v)
		}
	}
	return keep.copyOf(out)
}

// filterMemos are a cycle's remembered filter verdicts, aligned with its
// filters (CycleState.filters): the views of the NodeLocalFilters that
// have one (remembered[j]) and their remembered rejections.
type filterMemos struct {
	views      []schedcore.VerdictView
	remembered []bool
	rejects    []*schedcore.RejectTable
}

// diagnosisFilters returns the filters a diagnosis of the cycle whose state
// is state runs, with their remembered verdicts when the cycle's filter
// loop ran through f with memos (nil otherwise).
func (f *Framework) diagnosisFilters(state *schedcore.CycleState) ([]schedcore.FilterPlugin, *filterMemos) {
	cr := peekRun(state)
	if cr.filtersFor != f || cr.remembered == nil {
		return f.activeFilters(state), nil
	}
	return cr.filters, &filterMemos{views: cr.filterViews, remembered: cr.remembered, rejects: cr.filterRejects}
}

// diagnose is diagnose for the j-th filter, pl, with its verdict on the
// node read from m when remembered for the node's generation, and
// remembered there when Filter gives it (a pass, or a shared rejection),
// as Framework.runFilters does. A nil m, or a filter without a memo,
// runs Filter.
func (m *filterMemos) diagnose(ctx context.Context, j int, pl schedcore.FilterPlugin, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, gaps bool) (FilterVerdict, bool) {
	if m == nil || j >= len(m.remembered) || !m.remembered[j] {
		return diagnose(ctx, pl, state, pod, nodeInfo, gaps)
	}
	pos, gen := nodeInfo.ListIndex(), nodeInfo.Generation
	if v, ok := m.views[j].GetAt(pos, gen); ok {
		if v == schedcore.VerdictPass {
			return FilterVerdict{}, false
		}
		// A remembered rejection: the plugin's shared status, stamped, as
		// Filter would return it.
		if s := m.rejects[j].Status(v); s != nil {
			return explainVerdict(ctx, pl, state, pod, nodeInfo, s, gaps), true
		}
	}
	s := pl.Filter(ctx, state, pod, nodeInfo)
	if s.IsSuccess() {
		schedcore.RememberFilter(m.views[j], m.rejects[j], pos, gen, s, false)
		return FilterVerdict{}, false
	}
	if !s.IsRejected() {
		s = schedcore.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError()))
	}
	shared := s.IsShared()
	s = s.WithPlugin(pl.Name())
	schedcore.RememberFilter(m.views[j], m.rejects[j], pos, gen, s, shared)
	return explainVerdict(ctx, pl, state, pod, nodeInfo, s, gaps), true
}

// diagnose runs one filter on the node and, when it rejects, its
// explainer on the same state and node (for the shortfall alone without
// gaps).
func diagnose(ctx context.Context, pl schedcore.FilterPlugin, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, gaps bool) (FilterVerdict, bool) {
	s := pl.Filter(ctx, state, pod, nodeInfo)
	if s.IsSuccess() {
		return FilterVerdict{}, false
	}
	if !s.IsRejected() {
		s = schedcore.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError()))
	}
	s = s.WithPlugin(pl.Name())
	return explainVerdict(ctx, pl, state, pod, nodeInfo, s, gaps), true
}

// ExplainLeftOut asks the plugins whose PreFilterResult left a node out
// what they have against it: each one that explains itself does so from
// the cycle's state, as if its Filter had rejected the node with status.
func (f *Framework) ExplainLeftOut(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, plugins []string, status *schedcore.Status) []FilterVerdict {
	return f.explainLeftOut(ctx, state, pod, nodeInfo, plugins, status, true)
}

// explainLeftOut is ExplainLeftOut, for the shortfalls alone without gaps.
func (f *Framework) explainLeftOut(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, plugins []string, status *schedcore.Status, gaps bool) []FilterVerdict {
	var out []FilterVerdict
	for _, name := range plugins {
		pl, ok := f.pluginsMap[name].(schedcore.FilterPlugin)
		if !ok {
			out = append(out, FilterVerdict{Plugin: name, Status: status, Shortfall: 1})
			continue
		}
		out = append(out, explainVerdict(ctx, pl, state, pod, nodeInfo, status, gaps))
	}
	return out
}

// DiagnoseFilterPluginsWithNominatedPods is DiagnoseFilterPlugins with
// RunFilterPluginsWithNominatedPods's two passes, plugin by plugin: each
// filter runs with the equal-or-higher priority pods nominated to the node
// added and, if it passes and such pods exist, once more without them; a
// failure in either pass is the plugin's verdict, as kube would report it
// if that plugin ran alone.
func (f *Framework) DiagnoseFilterPluginsWithNominatedPods(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) []FilterVerdict {
	return f.diagnoseWithNominatedPods(ctx, f.activeFilters(state), state, pod, nodeInfo, true, nil, nil, nil)
}

// diagnoseWithNominatedPods is DiagnoseFilterPluginsWithNominatedPods
// with the cycle's active filters; without gaps, the verdicts carry the
// shortfalls but no explanations. first, when not nil, is the status the
// cycle's filters gave the node on this state (see diagnoseAfter); keep,
// when not nil, holds the verdicts of a node not counting nominated pods;
// mem, when not nil, are filters' remembered verdicts, read and written
// for a node diagnosed without nominated pods (see diagnoseAfter).
func (f *Framework) diagnoseWithNominatedPods(ctx context.Context, filters []schedcore.FilterPlugin, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, gaps bool, first *schedcore.Status, keep *verdictSlab, mem *filterMemos) []FilterVerdict {
	if f.handle.Nominator() == nil || peekRun(state).noNominatedPods {
		return diagnoseAfter(ctx, filters, state, pod, nodeInfo, gaps, first, keep, mem)
	}
	added, withState, withInfo, err := f.addGENominatedPods(ctx, pod, state, nodeInfo)
	if err != nil {
		return []FilterVerdict{{Status: schedcore.AsStatus(err), Shortfall: 1}}
	}
	if !added {
		// No pod counted: the cycle filtered the node once, as here.
		return diagnoseAfter(ctx, filters, state, pod, nodeInfo, gaps, first, keep, mem)
	}
	var out []FilterVerdict
	for _, pl := range filters {
		v, failed := diagnose(ctx, pl, withState, pod, withInfo, gaps)
		if !failed {
			v, failed = diagnose(ctx, pl, state, pod, nodeInfo, gaps)
		}
		if failed {
			out = append(out, v)
		}
	}
	return out
}
