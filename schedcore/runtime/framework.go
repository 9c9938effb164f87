package runtime

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Framework runs one profile's plugins at each extension point. It is built
// once from the profile; each extension point is a plain slice, asserted
// once, so the hot path does no reflection or map lookups.
type Framework struct {
	// scoreBuf is RunScorePlugins' scratch, reused by cycles that allow it
	// (CycleState.ReuseScoreBuffers), one at a time.
	scoreBufMu sync.Mutex
	scoreBuf   scoreBuffers

	profileName              string
	percentageOfNodesToScore *int32
	handle                   *schedcore.Handle

	pluginsMap map[string]schedcore.Plugin

	queueSort  schedcore.QueueSortPlugin
	preEnqueue []schedcore.PreEnqueuePlugin
	// lastFilterSet is the filter set of the last cycle's PreFilter skips
	// (RunPreFilterPlugins), for the next cycles that skip the same.
	lastFilterSet atomic.Pointer[filterSet]
	// lastScoreSkips is the last cycle's PreScore skips
	// (RunPreScorePlugins), for the next cycles that skip the same.
	lastScoreSkips atomic.Pointer[scoreSkips]
	preFilter      []schedcore.PreFilterPlugin
	preFilterExt   []schedcore.PreFilterExtensions // aligned with preFilter; nil entries
	filter         []schedcore.FilterPlugin
	postFilter     []schedcore.PostFilterPlugin
	preScore       []schedcore.PreScorePlugin
	score          []schedcore.ScorePlugin
	scoreNorm      []schedcore.NormalizeScorePlugin // aligned with score; nil entries
	scoreWeight    []int64                          // aligned with score
	// scoreMemo remembers raw scores of NodeLocalScorers (aligned with
	// score; nil entries for the other plugins).
	scoreMemo []*schedcore.VerdictMemo
	// filterMemo remembers the nodes where a NodeLocalFilter passed
	// (aligned with filter; nil entries for the other plugins).
	filterMemo []*schedcore.VerdictMemo
	// filterRejects are the rejections the filter memos remember
	// (aligned with filter, as filterMemo).
	filterRejects []*schedcore.RejectTable
	// filterPasses are the filters that are PassingFilters (aligned with
	// the first 64 of filter; nil entries for the other plugins).
	filterPasses []schedcore.PassingFilter
	reserve      []schedcore.ReservePlugin
	permit       []schedcore.PermitPlugin
	preBind      []schedcore.PreBindPlugin
	bind         []schedcore.BindPlugin
	postBind     []schedcore.PostBindPlugin

	// The pod-group points (GenericWorkload): placementFeasible is wired
	// by the framework (GangScheduling, with the gate on), the others
	// come from the profile as every point does.
	placementFeasible    []schedcore.PlacementFeasiblePlugin
	placementGenerate    []schedcore.PlacementGeneratePlugin
	placementScore       []schedcore.PlacementScorePlugin
	placementScoreWeight []int64 // aligned with placementScore
	podGroupPostFilter   []schedcore.PodGroupPostFilterPlugin

	podGroups         []schedcore.PodGroupPlugin
	enqueueExtensions []schedcore.EnqueueExtensions
	waitingPods       *waitingPodsMap
	recorder          MetricsRecorder
}

// ProfileName returns the profile's schedulerName.
func (f *Framework) ProfileName() string { return f.profileName }

// Handle returns the handle given to the profile's plugins.
func (f *Framework) Handle() *schedcore.Handle { return f.handle }

// PercentageOfNodesToScore returns the profile's override, nil if unset.
func (f *Framework) PercentageOfNodesToScore() *int32 { return f.percentageOfNodesToScore }

// QueueSortLess returns the QueueSort plugin's Less.
func (f *Framework) QueueSortLess() func(a, b *schedcore.QueuedPodInfo) bool { return f.queueSort.Less }

// PreEnqueuePlugins returns the PreEnqueue plugins.
func (f *Framework) PreEnqueuePlugins() []schedcore.PreEnqueuePlugin { return f.preEnqueue }

// EnqueueExtensions returns the plugins that registered cluster events.
func (f *Framework) EnqueueExtensions() []schedcore.EnqueueExtensions { return f.enqueueExtensions }

// Plugin returns an instantiated plugin by name.
func (f *Framework) Plugin(name string) (schedcore.Plugin, bool) {
	p, ok := f.pluginsMap[name]
	return p, ok
}

// PodGroup returns the pod's group, as the profile's first group plugin
// that puts it in one says; ok is false for a pod in no group.
func (f *Framework) PodGroup(pod *v1.Pod) (schedcore.GroupSummary, bool) {
	for _, g := range f.podGroups {
		if pg, ok := g.PodGroup(pod); ok {
			return pg, true
		}
	}
	return schedcore.GroupSummary{}, false
}

// HasPodGroupPlugins reports whether a plugin of the profile places pods
// in groups (PodGroupPlugin).
func (f *Framework) HasPodGroupPlugins() bool { return len(f.podGroups) > 0 }

// FilterPluginNames lists the filter plugins in order.
func (f *Framework) FilterPluginNames() []string { return names(f.filter) }

// PreFilterPluginNames lists the PreFilter plugins in order.
func (f *Framework) PreFilterPluginNames() []string { return names(f.preFilter) }

// ScorePluginNames lists the score plugins in order.
func (f *Framework) ScorePluginNames() []string { return names(f.score) }

// ScorePluginWeights maps score plugins to their weights.
func (f *Framework) ScorePluginWeights() map[string]int64 {
	m := make(map[string]int64, len(f.score))
	for i, p := range f.score {
		m[p.Name()] = f.scoreWeight[i]
	}
	return m
}

// HasFilterPlugins reports whether any filter is enabled.
func (f *Framework) HasFilterPlugins() bool { return len(f.filter) > 0 }

// HasScorePlugins reports whether any score plugin is enabled.
func (f *Framework) HasScorePlugins() bool { return len(f.score) > 0 }

// HasPostFilterPlugins reports whether any PostFilter is enabled.
func (f *Framework) HasPostFilterPlugins() bool { return len(f.postFilter) > 0 }

func names[T schedcore.Plugin](ps []T) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name()
	}
	return out
}

// FrameworkOptions configure NewFramework.
type FrameworkOptions struct {
	// Recorder receives extension point and plugin timings; nil = none.
	Recorder MetricsRecorder
	// NoPostFilter leaves the PostFilter plugins out (no preemption).
	NoPostFilter bool
}

// NewFramework instantiates the plugins a profile needs from the registry,
// with their args, and lays them out per extension point with kube's
// multiPoint expansion rules. The profile must already have the defaults
// merged in (see DefaultProfile / MergePlugins). Errors name the profile
// field at fault.
func NewFramework(ctx context.Context, r schedcore.Registry, profile *configv1.KubeSchedulerProfile, h *schedcore.Handle, opts FrameworkOptions) (*Framework, error) {
	f := &Framework{
		handle:                   h,
		pluginsMap:               map[string]schedcore.Plugin{},
		percentageOfNodesToScore: profile.PercentageOfNodesToScore,
		waitingPods:              newWaitingPodsMap(),
		recorder:                 opts.Recorder,
	}
	if profile.SchedulerName != nil {
		f.profileName = *profile.SchedulerName
	}
	h.SetFramework(f)
	plugins := profile.Plugins
	if plugins == nil {
		plugins = &configv1.Plugins{}
	}
	needed := schedcore.EnabledPlugins(plugins)

	args := map[string]runtime.Object{}
	argIndex := map[string]int{}
	for i, pc := range profile.PluginConfig {
		if _, dup := args[pc.Name]; dup {
			return nil, fmt.Errorf("pluginConfig[%d]: repeated config for plugin %s", i, pc.Name)
		}
		spec, ok := r[pc.Name]
		if !ok {
			return nil, fmt.Errorf("pluginConfig[%d].name: unknown plugin %q", i, pc.Name)
		}
		obj, err := decodeArgs(spec, pc.Args)
		if err != nil {
			return nil, fmt.Errorf("pluginConfig[%d].args: %w", i, err)
		}
		args[pc.Name] = obj
		argIndex[pc.Name] = i
	}

	for _, name := range sets.List(needed) {
		spec, ok := r[name]
		if !ok {
			return nil, fmt.Errorf("plugins: unknown plugin %q", name)
		}
		p, err := spec.Factory(ctx, args[name], h)
		if err != nil {
			if i, ok := argIndex[name]; ok {
				return nil, fmt.Errorf("pluginConfig[%d].args: %w", i, err)
			}
			return nil, fmt.Errorf("initializing plugin %q: %w", name, err)
		}
		f.pluginsMap[name] = p
		if g, ok := p.(schedcore.PodGroupPlugin); ok {
			f.podGroups = append(f.podGroups, g)
		}
		if shouldHaveEnqueueExtensions(p) {
			if ext, ok := p.(schedcore.EnqueueExtensions); ok {
				f.enqueueExtensions = append(f.enqueueExtensions, ext)
			} else {
				f.enqueueExtensions = append(f.enqueueExtensions, defaultEnqueueExtension{name: name})
			}
		}
	}

	if err := f.layout(plugins); err != nil {
		return nil, err
	}
	if f.queueSort == nil {
		return nil, fmt.Errorf("only one queue sort plugin required for profile with scheduler name %q, but got 0", f.profileName)
	}
	if len(f.bind) == 0 {
		return nil, fmt.Errorf("at least one bind plugin is needed for profile with scheduler name %q", f.profileName)
	}
	if len(f.placementGenerate) > 1 {
		return nil, fmt.Errorf("at most one placement generate plugin is allowed for profile with scheduler name %q", f.profileName)
	}
	if err := f.setScoreWeights(plugins); err != nil {
		return nil, fmt.Errorf("plugins.score: %w", err)
	}
	if err := f.setPlacementScoreWeights(plugins); err != nil {
		return nil, fmt.Errorf("plugins.placementScore: %w", err)
	}
	if err := f.setPlacementFeasible(); err != nil {
		return nil, err
	}
	f.setFilterMemos()
	if opts.NoPostFilter {
		f.postFilter = nil
		f.podGroupPostFilter = nil
	}
	return f, nil
}

func shouldHaveEnqueueExtensions(p schedcore.Plugin) bool {
	switch p.(type) {
	case schedcore.PreEnqueuePlugin, schedcore.PreFilterPlugin, schedcore.FilterPlugin, schedcore.ReservePlugin, schedcore.PermitPlugin:
		return true
	}
	return false
}

// defaultEnqueueExtension registers every event for plugins that register
// none, as kube does for backward compatibility.
type defaultEnqueueExtension struct{ name string }

func (d defaultEnqueueExtension) Name() string { return d.name }
func (d defaultEnqueueExtension) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return UnrollWildCardResource(), nil
}

// UnrollWildCardResource lists every concrete resource with All, which is
// what kube registers for plugins that register no events: a Namespace or
// VolumeAttachment event then requeues nothing.
func UnrollWildCardResource() []schedcore.ClusterEventWithHint {
	rs := []schedcore.EventResource{schedcore.AssignedPod, schedcore.UnscheduledPod, schedcore.TargetPod, schedcore.Node, schedcore.PersistentVolume, schedcore.PersistentVolumeClaim,
		schedcore.CSINode, schedcore.CSIDriver, schedcore.CSIStorageCapacity, schedcore.StorageClass, schedcore.ResourceClaim, schedcore.DeviceClass}
	out := make([]schedcore.ClusterEventWithHint, len(rs))
	for i, r := range rs {
		out[i] = schedcore.ClusterEventWithHint{Event: schedcore.ClusterEvent{Resource: r, ActionType: schedcore.All}}
	}
	return out
}

// extPoint describes one extension point for layout.
type extPoint struct {
	field      string
	set        *configv1.PluginSet
	implements func(schedcore.Plugin) bool
	add        func(schedcore.Plugin)
}

func (f *Framework) extPoints(p *configv1.Plugins) []extPoint {
	return []extPoint{
		{"preEnqueue", &p.PreEnqueue, is[schedcore.PreEnqueuePlugin], func(x schedcore.Plugin) { f.preEnqueue = append(f.preEnqueue, x.(schedcore.PreEnqueuePlugin)) }},
		{"queueSort", &p.QueueSort, is[schedcore.QueueSortPlugin], func(x schedcore.Plugin) {
			if f.queueSort == nil {
				f.queueSort = x.(schedcore.QueueSortPlugin)
			} else {
				f.queueSort = nil // more than one: reported as an error below
			}
		}},
		{"preFilter", &p.PreFilter, is[schedcore.PreFilterPlugin], func(x schedcore.Plugin) {
			f.preFilter = append(f.preFilter, x.(schedcore.PreFilterPlugin))
			ext, _ := x.(schedcore.PreFilterExtensions)
			f.preFilterExt = append(f.preFilterExt, ext)
		}},
		{"filter", &p.Filter, is[schedcore.FilterPlugin], func(x schedcore.Plugin) { f.filter = append(f.filter, x.(schedcore.FilterPlugin)) }},
		{"postFilter", &p.PostFilter, is[schedcore.PostFilterPlugin], func(x schedcore.Plugin) { f.postFilter = append(f.postFilter, x.(schedcore.PostFilterPlugin)) }},
		{"preScore", &p.PreScore, is[schedcore.PreScorePlugin], func(x schedcore.Plugin) { f.preScore = append(f.preScore, x.(schedcore.PreScorePlugin)) }},
		{"score", &p.Score, is[schedcore.ScorePlugin], func(x schedcore.Plugin) {
			f.score = append(f.score, x.(schedcore.ScorePlugin))
			n, _ := x.(schedcore.NormalizeScorePlugin)
			f.scoreNorm = append(f.scoreNorm, n)
		}},
		{"reserve", &p.Reserve, is[schedcore.ReservePlugin], func(x schedcore.Plugin) { f.reserve = append(f.reserve, x.(schedcore.ReservePlugin)) }},
		{"permit", &p.Permit, is[schedcore.PermitPlugin], func(x schedcore.Plugin) { f.permit = append(f.permit, x.(schedcore.PermitPlugin)) }},
		{"preBind", &p.PreBind, is[schedcore.PreBindPlugin], func(x schedcore.Plugin) { f.preBind = append(f.preBind, x.(schedcore.PreBindPlugin)) }},
		{"bind", &p.Bind, is[schedcore.BindPlugin], func(x schedcore.Plugin) { f.bind = append(f.bind, x.(schedcore.BindPlugin)) }},
		{"postBind", &p.PostBind, is[schedcore.PostBindPlugin], func(x schedcore.Plugin) { f.postBind = append(f.postBind, x.(schedcore.PostBindPlugin)) }},
		{"placementGenerate", &p.PlacementGenerate, is[schedcore.PlacementGeneratePlugin], func(x schedcore.Plugin) {
			f.placementGenerate = append(f.placementGenerate, x.(schedcore.PlacementGeneratePlugin))
		}},
		{"placementScore", &p.PlacementScore, is[schedcore.PlacementScorePlugin], func(x schedcore.Plugin) {
			f.placementScore = append(f.placementScore, x.(schedcore.PlacementScorePlugin))
		}},
		{"podGroupPostFilter", &p.PodGroupPostFilter, is[schedcore.PodGroupPostFilterPlugin], func(x schedcore.Plugin) {
			f.podGroupPostFilter = append(f.podGroupPostFilter, x.(schedcore.PodGroupPostFilterPlugin))
		}},
	}
}

func is[T any](p schedcore.Plugin) bool { _, ok := p.(T); return ok }

// layout places plugins per extension point: first the explicitly listed
// plugins of each point, then kube's multiPoint expansion (explicit
// re-listings override and keep their order first, then multiPoint plugins
// in order, then the other explicit ones).
func (f *Framework) layout(p *configv1.Plugins) error {
	queueSorts := 0
	for _, e := range f.extPoints(p) {
		explicit := []string{}
		seen := sets.New[string]()
		for i, ep := range e.set.Enabled {
			pl := f.pluginsMap[ep.Name]
			if !e.implements(pl) {
				return fmt.Errorf("plugins.%s.enabled[%d]: plugin %q does not extend %s plugin", e.field, i, ep.Name, e.field)
			}
			if seen.Has(ep.Name) {
				return fmt.Errorf("plugins.%s.enabled[%d]: plugin %q already registered as %q", e.field, i, ep.Name, e.field)
			}
			seen.Insert(ep.Name)
			explicit = append(explicit, ep.Name)
		}
		disabled := sets.New[string]()
		for _, d := range e.set.Disabled {
			disabled.Insert(d.Name)
		}
		var order []string
		if disabled.Has("*") || len(p.MultiPoint.Enabled) == 0 {
			order = explicit
		} else {
			overrides := sets.New[string]()
			var multi []string
			multiSeen := sets.New[string]()
			for i, ep := range p.MultiPoint.Enabled {
				pl := f.pluginsMap[ep.Name]
				if !e.implements(pl) || disabled.Has(ep.Name) {
					continue
				}
				if seen.Has(ep.Name) {
					overrides.Insert(ep.Name)
					continue
				}
				if multiSeen.Has(ep.Name) {
					return fmt.Errorf("plugins.multiPoint.enabled[%d]: plugin %q already registered as %q", i, ep.Name, e.field)
				}
				multiSeen.Insert(ep.Name)
				multi = append(multi, ep.Name)
			}
			for _, n := range explicit {
				if overrides.Has(n) {
					order = append(order, n)
				}
			}
			order = append(order, multi...)
			for _, n := range explicit {
				if !overrides.Has(n) {
					order = append(order, n)
				}
			}
		}
		for _, n := range order {
			e.add(f.pluginsMap[n])
			if e.field == "queueSort" {
				queueSorts++
			}
		}
	}
	if queueSorts > 1 {
		return fmt.Errorf("only one queue sort plugin required for profile with scheduler name %q, but got %d", f.profileName, queueSorts)
	}
	return nil
}

// SortedPluginNames lists instantiated plugins.
func (f *Framework) SortedPluginNames() []string {
	out := make([]string, 0, len(f.pluginsMap))
	for n := range f.pluginsMap {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Prepare lets the profile's plugins that keep indexes over the snapshot
// build them now (schedcore.PreparePlugin), in plugin name order.
func (f *Framework) Prepare(ctx context.Context, snap *schedcore.Snapshot) {
	for _, name := range f.SortedPluginNames() {
		if p, ok := f.pluginsMap[name].(schedcore.PreparePlugin); ok {
			p.Prepare(ctx, snap)
		}
	}
}
