package runtime

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// RunPreEnqueuePlugins runs PreEnqueue plugins until one fails; the failing
// status carries the plugin name.
func (f *Framework) RunPreEnqueuePlugins(ctx context.Context, pod *v1.Pod) *schedcore.Status {
	return f.RunPreEnqueuePluginsFrom(ctx, pod, "", nil)
}

// RunPreEnqueuePluginsFrom is the one PreEnqueue pass, the scheduling
// queue's and explain's: the plugin named first (the one that gated the pod
// before, which the queue asks first) runs first, then the others in the
// profile's order, until one fails. rejected, when set, is told of that
// plugin and its status as returned. The failing status carries the plugin
// name; a code other than a rejection is returned as an Error.
func (f *Framework) RunPreEnqueuePluginsFrom(ctx context.Context, pod *v1.Pod, first string, rejected func(schedcore.PreEnqueuePlugin, *schedcore.Status)) *schedcore.Status {
	run := func(pl schedcore.PreEnqueuePlugin) *schedcore.Status {
		s := pl.PreEnqueue(ctx, pod)
		if s.IsSuccess() {
			return nil
		}
		if rejected != nil {
			rejected(pl, s)
		}
		s = s.WithPlugin(pl.Name())
		if !s.IsRejected() {
			return schedcore.AsStatus(fmt.Errorf("running PreEnqueue plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		}
		return s
	}
	if first != "" {
		for _, pl := range f.preEnqueue {
			if pl.Name() == first {
				if s := run(pl); s != nil {
					return s
				}
				break
			}
		}
	}
	for _, pl := range f.preEnqueue {
		if first != "" && pl.Name() == first {
			continue
		}
		if s := run(pl); s != nil {
			return s
		}
	}
	return nil
}

// RunPreFilterPlugins runs PreFilter plugins as kube does: Skip marks the
// plugin's Filter skipped; UnschedulableAndUnresolvable stops at once;
// Unschedulable is remembered while the others still run (preemption needs
// their state); results are intersected, and an empty intersection rejects
// every node. It returns the merged result, the status, and the plugins
// that restricted nodes.
func (f *Framework) RunPreFilterPlugins(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod) (*schedcore.PreFilterResult, *schedcore.Status, sets.Set[string]) {
	start := time.Now()
	nodes := f.handle.Snapshot().List()
	// The names of the plugins that skip, in the profile's order.
	var skipBuf [16]string
	skipped := skipBuf[:0]
	defer func() {
		fs := f.skipFilters(skipped, f.passingFilters(state, pod))
		state.SkipFilterPlugins = fs.skip
		cr := runOf(state)
		cr.filters, cr.filtersFor = fs.filters, f
		f.filterViews(state, pod, fs)
	}()
	var result *schedcore.PreFilterResult
	// withNodes is made when a plugin restricts the nodes (rarely): nil
	// is the empty set to every reader of Diagnosis.UnschedulablePlugins.
	var withNodes sets.Set[string]
	var ret *schedcore.Status
	for _, pl := range f.preFilter {
		var t time.Time
		if state.RecordPluginMetrics {
			t = time.Now()
		}
		r, s := pl.PreFilter(ctx, state, pod, nodes)
		if state.RecordPluginMetrics && f.recorder != nil {
			f.recorder.Plugin(pl.Name(), ExtPreFilter, s.Code(), time.Since(t))
		}
		if s.IsSkip() {
			skipped = append(skipped, pl.Name())
			continue
		}
		if !s.IsSuccess() {
			s = s.WithPlugin(pl.Name())
			switch s.Code() {
			case schedcore.UnschedulableAndUnresolvable:
				f.observe(ExtPreFilter, s, start)
				return nil, s, nil
			case schedcore.Unschedulable:
				ret = s
				continue
			}
			st := schedcore.AsStatus(fmt.Errorf("running PreFilter plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
			f.observe(ExtPreFilter, st, start)
			return nil, st, nil
		}
		if !r.AllNodes() {
			if withNodes == nil {
				withNodes = sets.New[string]()
			}
			withNodes.Insert(pl.Name())
		}
		result = result.Merge(r)
		if !result.AllNodes() && len(result.NodeNames) == 0 {
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v simultaneously", sets.List(withNodes))
			if withNodes.Len() == 1 {
				msg = fmt.Sprintf("node(s) didn't satisfy plugin %v", sets.List(withNodes)[0])
			}
			st := schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, msg)
			f.observe(ExtPreFilter, st, start)
			return result, st, withNodes
		}
	}
	f.observe(ExtPreFilter, ret, start)
	return result, ret, withNodes
}

// filterSet is what a cycle's PreFilter skips leave of the profile's
// filters: the skipped plugins' names (in the profile's order) and set,
// the filters that remain (less those that pass every node for the
// cycle's pod: passing). It is read only, shared by the cycles whose PreFilter plugins skip the same
// ones and whose pods the same filters pass: most cycles (a profile's
// volume and device plugins skip every pod without volumes or claims,
// NodeName passes every pod without spec.nodeName), which then make no
// set and no list.
type filterSet struct {
	skipped []string
	skip    sets.Set[string]
	// passing has bit i set when the profile's i-th filter passes every
	// node (passingFilters): it is not in filters.
	passing uint64
	filters []schedcore.FilterPlugin
}

// has reports whether the profile's i-th filter, pl, is one of the set's
// filters.
func (fs *filterSet) has(i int, pl schedcore.FilterPlugin) bool {
	return !(i < 64 && fs.passing&(1<<i) != 0) && !fs.skip.Has(pl.Name())
}

// skipFilters returns the filter set of the plugins named skipped, less
// the filters of passing (passingFilters): the last cycle's when it had
// the same, else a new one, kept for the next cycles.
func (f *Framework) skipFilters(skipped []string, passing uint64) *filterSet {
	if fs := f.lastFilterSet.Load(); fs != nil && fs.passing == passing && slices.Equal(fs.skipped, skipped) {
		return fs
	}
	fs := &filterSet{skipped: slices.Clone(skipped), skip: sets.New(skipped...), passing: passing, filters: f.filter}
	if len(skipped) > 0 || passing != 0 {
		fs.filters = make([]schedcore.FilterPlugin, 0, len(f.filter))
		for i, pl := range f.filter {
			if fs.has(i, pl) {
				fs.filters = append(fs.filters, pl)
			}
		}
	}
	f.lastFilterSet.Store(fs)
	return fs
}

// passingFilters returns the filters (bit i: the profile's i-th) that say
// they pass every node for pod (PassingFilter): the cycle's filter loop
// leaves them out. A success changes no status, reason or diagnosis (a
// diagnosis lists rejections only), so the loop's verdicts are those of
// every filter. A cycle that times every plugin keeps them all: kube
// times their Filter on every node.
func (f *Framework) passingFilters(state *schedcore.CycleState, pod *v1.Pod) uint64 {
	if state.RecordPluginMetrics {
		return 0
	}
	var m uint64
	for i, pl := range f.filterPasses {
		if pl != nil && pl.PassesEveryNode(pod) {
			m |= 1 << i
		}
	}
	return m
}

// RunPreFilterExtensionAddPod tells the PreFilter plugins that podInfoToAdd
// is (hypothetically) on nodeInfo.
func (f *Framework) RunPreFilterExtensionAddPod(ctx context.Context, state *schedcore.CycleState, podToSchedule *v1.Pod, podInfoToAdd *schedcore.PodInfo, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	for i, pl := range f.preFilter {
		ext := f.preFilterExt[i]
		if ext == nil || state.SkipFilterPlugins.Has(pl.Name()) {
			continue
		}
		if s := ext.AddPod(ctx, state, podToSchedule, podInfoToAdd, nodeInfo); !s.IsSuccess() {
			return schedcore.AsStatus(fmt.Errorf("running AddPod on PreFilter plugin %q: %w", pl.Name(), s.AsError()))
		}
	}
	return nil
}

// RunPreFilterExtensionRemovePod tells the PreFilter plugins that
// podInfoToRemove is (hypothetically) gone from nodeInfo.
func (f *Framework) RunPreFilterExtensionRemovePod(ctx context.Context, state *schedcore.CycleState, podToSchedule *v1.Pod, podInfoToRemove *schedcore.PodInfo, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	for i, pl := range f.preFilter {
		ext := f.preFilterExt[i]
		if ext == nil || state.SkipFilterPlugins.Has(pl.Name()) {
			continue
		}
		if s := ext.RemovePod(ctx, state, podToSchedule, podInfoToRemove, nodeInfo); !s.IsSuccess() {
			return schedcore.AsStatus(fmt.Errorf("running RemovePod on PreFilter plugin %q: %w", pl.Name(), s.AsError()))
		}
	}
	return nil
}

// RunFilterPlugins runs the filters in order on one node and stops at the
// first that does not succeed, as kube does. A non-rejection code becomes
// an Error naming the plugin.
func (f *Framework) RunFilterPlugins(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	return f.runFilters(ctx, state, pod, nodeInfo, nodeInfo.ListIndex(), nodeInfo.Generation)
}

// runFilters is RunFilterPlugins on nodeInfo, found at list position pos
// with generation gen: its own, or, for a node of the snapshot's list,
// the snapshot's columns, so that a node whose verdicts are all
// remembered is decided without reaching its NodeInfo.
func (f *Framework) runFilters(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, pos int, gen int64) *schedcore.Status {
	cr := peekRun(state)
	filters := cr.filters
	remembered, views, rejects := cr.remembered, cr.filterViews, cr.filterRejects
	if cr.filtersFor != f {
		filters, remembered = f.activeFilters(state), nil
	}
	for j, pl := range filters {
		memo := j < len(remembered) && remembered[j]
		if memo {
			if v, ok := views[j].GetAt(pos, gen); ok {
				if v == schedcore.VerdictPass {
					continue
				}
				// A remembered rejection: the plugin's shared status,
				// stamped, as Filter would return it.
				if s := rejects[j].Status(v); s != nil {
					return s
				}
			}
		}
		var s *schedcore.Status
		if state.RecordPluginMetrics && f.recorder != nil {
			t := time.Now()
			s = pl.Filter(ctx, state, pod, nodeInfo)
			f.recorder.Plugin(pl.Name(), ExtFilter, s.Code(), time.Since(t))
		} else {
			s = pl.Filter(ctx, state, pod, nodeInfo)
		}
		if !s.IsSuccess() {
			if !s.IsRejected() {
				s = schedcore.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError()))
			}
			shared := s.IsShared()
			s = s.WithPlugin(pl.Name())
			if memo {
				schedcore.RememberFilter(views[j], rejects[j], pos, gen, s, shared)
			}
			return s
		}
		if memo {
			schedcore.RememberFilter(views[j], rejects[j], pos, gen, s, false)
		}
	}
	return nil
}

// filterMemoKeys bounds the distinct keys (workloads) whose passes a
// NodeLocalFilter's memo keeps.
const filterMemoKeys = 64

// setFilterMemos gives each NodeLocalFilter a memo, unless the plugin
// updates its PreFilter state with AddPod and RemovePod (the state would
// then no longer be what FilterKey read).
func (f *Framework) setFilterMemos() {
	f.filterMemo = make([]*schedcore.VerdictMemo, len(f.filter))
	f.filterRejects = make([]*schedcore.RejectTable, len(f.filter))
	f.filterPasses = make([]schedcore.PassingFilter, min(len(f.filter), 64))
	for i, pl := range f.filter {
		if p, ok := pl.(schedcore.PassingFilter); ok && i < len(f.filterPasses) {
			f.filterPasses[i] = p
		}
		if _, ok := pl.(schedcore.NodeLocalFilter); !ok {
			continue
		}
		if _, ext := pl.(schedcore.PreFilterExtensions); ext {
			continue
		}
		f.filterMemo[i] = schedcore.NewVerdictMemo(filterMemoKeys)
		f.filterRejects[i] = new(schedcore.RejectTable)
	}
}

// filterViews sets, for the cycle's active filters (cycleRun.filters, fs's),
// the views of the remembered verdicts (passes, and rejections with a
// shared status): one for each NodeLocalFilter whose
// FilterKey accepts the cycle. Sampled cycles that time every plugin
// remember nothing, so their timings cover every node.
func (f *Framework) filterViews(state *schedcore.CycleState, pod *v1.Pod, fs *filterSet) {
	cr := runOf(state)
	cr.filterViews, cr.remembered, cr.filterRejects = nil, nil, nil
	snap := f.handle.Snapshot()
	if state.RecordPluginMetrics || snap == nil || snap.NumNodes() == 0 {
		return
	}
	j := 0
	k := schedcore.GetScratchKey()
	defer schedcore.PutScratchKey(k)
	for i, pl := range f.filter {
		if !fs.has(i, pl) {
			continue
		}
		if m := f.filterMemo[i]; m != nil {
			k.Reset()
			if pl.(schedcore.NodeLocalFilter).FilterKey(state, pod, k) {
				if cr.remembered == nil {
					cr.filterViews, cr.remembered = make([]schedcore.VerdictView, len(cr.filters)), make([]bool, len(cr.filters))
					cr.filterRejects = make([]*schedcore.RejectTable, len(cr.filters))
				}
				cr.filterViews[j], cr.remembered[j] = m.View(k, snap.NumNodes()), true
				cr.filterRejects[j] = f.filterRejects[i]
			}
		}
		j++
	}
}

// activeFilters lists the filters not skipped in this cycle (for states
// whose PreFilter did not run through this framework).
func (f *Framework) activeFilters(state *schedcore.CycleState) []schedcore.FilterPlugin {
	out := make([]schedcore.FilterPlugin, 0, len(f.filter))
	for _, pl := range f.filter {
		if !state.SkipFilterPlugins.Has(pl.Name()) {
			out = append(out, pl)
		}
	}
	return out
}

// RunFilterPluginsWithNominatedPods runs the filters with the equal-or-higher
// priority pods nominated to the node added, and, if that passes and such
// pods exist, once more without them, as kube does.
func (f *Framework) RunFilterPluginsWithNominatedPods(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, info *schedcore.NodeInfo) *schedcore.Status {
	if f.nominatedPodsIgnored(state) {
		return f.RunFilterPlugins(ctx, state, pod, info)
	}
	var status *schedcore.Status
	podsAdded := false
	for i := 0; i < 2; i++ {
		stateToUse, infoToUse := state, info
		if i == 0 {
			var err error
			podsAdded, stateToUse, infoToUse, err = f.addGENominatedPods(ctx, pod, state, info)
			if err != nil {
				return schedcore.AsStatus(err)
			}
		} else if !podsAdded || !status.IsSuccess() {
			break
		}
		status = f.RunFilterPlugins(ctx, stateToUse, pod, infoToUse)
		if !status.IsSuccess() && !status.IsRejected() {
			return status
		}
	}
	return status
}

// nominatedPodsIgnored reports whether the cycle has no nominated pods to
// add to any node: RunFilterPluginsWithNominatedPods is then
// RunFilterPlugins.
func (f *Framework) nominatedPodsIgnored(state *schedcore.CycleState) bool {
	return f.handle.Nominator() == nil || peekRun(state).noNominatedPods
}

// countedNominatedPods lists the pods nominated to the node that the
// filters count for pod (equal or higher priority, not pod itself).
func (f *Framework) countedNominatedPods(pod *v1.Pod, info *schedcore.NodeInfo) []*schedcore.PodInfo {
	var out []*schedcore.PodInfo
	for _, pi := range f.handle.NominatedPodsForNode(info.Name()) {
		if schedcore.PodPriority(pi.Pod) >= schedcore.PodPriority(pod) && pi.Pod.UID != pod.UID {
			out = append(out, pi)
		}
	}
	return out
}

func (f *Framework) addGENominatedPods(ctx context.Context, pod *v1.Pod, state *schedcore.CycleState, info *schedcore.NodeInfo) (bool, *schedcore.CycleState, *schedcore.NodeInfo, error) {
	nominated := f.handle.NominatedPodsForNode(info.Name())
	if len(nominated) == 0 {
		return false, state, info, nil
	}
	infoOut := info.Clone()
	stateOut := state.Clone()
	added := false
	for _, pi := range nominated {
		if schedcore.PodPriority(pi.Pod) >= schedcore.PodPriority(pod) && pi.Pod.UID != pod.UID {
			infoOut.AddPodInfo(pi, f.handle.Features())
			if s := f.RunPreFilterExtensionAddPod(ctx, stateOut, pod, pi, infoOut); !s.IsSuccess() {
				return false, state, info, s.AsError()
			}
			added = true
		}
	}
	return added, stateOut, infoOut, nil
}

// RunPostFilterPlugins runs PostFilter plugins until one succeeds or
// returns UnschedulableAndUnresolvable or Error; otherwise it collects the
// reasons of all.
func (f *Framework) RunPostFilterPlugins(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, m *schedcore.NodeToStatus) (*schedcore.PostFilterResult, *schedcore.Status) {
	start := time.Now()
	var result *schedcore.PostFilterResult
	var reasons []string
	rejector := ""
	for _, pl := range f.postFilter {
		r, s := pl.PostFilter(ctx, state, pod, m)
		switch {
		case s.IsSuccess():
			f.observe(ExtPostFilter, s, start)
			return r, s
		case s.Code() == schedcore.UnschedulableAndUnresolvable:
			f.observe(ExtPostFilter, s, start)
			return r, s.WithPlugin(pl.Name())
		case !s.IsRejected():
			st := schedcore.AsStatus(s.AsError()).WithPlugin(pl.Name())
			f.observe(ExtPostFilter, st, start)
			return nil, st
		case r != nil && r.NominatingInfo != nil && r.NominatingMode != schedcore.ModeNoop:
			result = r
		}
		reasons = append(reasons, s.Reasons()...)
		if rejector == "" {
			rejector = pl.Name()
		}
	}
	st := schedcore.NewStatus(schedcore.Unschedulable, reasons...).WithPlugin(rejector)
	f.observe(ExtPostFilter, st, start)
	return result, st
}
