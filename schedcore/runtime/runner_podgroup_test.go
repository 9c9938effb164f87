package runtime_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// The cases below transcribe kube v1.37.2's framework_test.go for the
// pod-group points: TestNewFrameworkErrors ("more than one
// PlacementGeneratePlugin"), TestNewFramework_PlacementFeasible,
// TestPodGroupPostFilterPlugins, TestRunPodGroupPostFilterPlugins,
// TestRunPlacementGeneratePlugins and TestRunPlacementScorePlugins
// (TestRunPlacementFeasiblePlugins is in the internal test: it sets the
// plugin list directly, as kube's does).

const injectReason = "injected status"

// pgPlugin implements QueueSort and Bind (every profile needs them) and,
// with scripted outcomes, the pod-group points.
type pgPlugin struct {
	name string

	generate       []*schedcore.Placement
	generateStatus *schedcore.Status

	postFilterCode   schedcore.Code
	postFilterResult *schedcore.PodGroupPostFilterResult

	scores      map[*schedcore.Placement]scoreResult
	normalizeFn func([]schedcore.PlacementScore) *schedcore.Status
}

type scoreResult struct {
	score  int64
	status *schedcore.Status
}

func (p *pgPlugin) Name() string { return p.name }

// basePlugin is the queue sort and binder of every test profile.
type basePlugin struct{}

func (basePlugin) Name() string                            { return "Base" }
func (basePlugin) Less(a, b *schedcore.QueuedPodInfo) bool { return a.Pod.Name < b.Pod.Name }
func (basePlugin) Bind(context.Context, *schedcore.CycleState, *v1.Pod, string) *schedcore.Status {
	return nil
}

type generator struct{ *pgPlugin }

func (g generator) GeneratePlacements(context.Context, *schedcore.CycleState, schedcore.PodGroupInfo, *schedcore.Placement) (*schedcore.GeneratePlacementsResult, *schedcore.Status) {
	if g.generateStatus != nil {
		return nil, g.generateStatus
	}
	return &schedcore.GeneratePlacementsResult{Placements: g.generate}, nil
}

type postFilter struct{ *pgPlugin }

func (p postFilter) PodGroupPostFilter(context.Context, *schedcore.CycleState, schedcore.PodGroupInfo, schedcore.PodGroupSchedulingFunc) (*schedcore.PodGroupPostFilterResult, *schedcore.Status) {
	return p.postFilterResult, schedcore.NewStatus(p.postFilterCode, injectReason)
}

type placementScorer struct{ *pgPlugin }

func (p placementScorer) ScorePlacement(_ context.Context, _ *schedcore.CycleState, _ schedcore.PodGroupInfo, a *schedcore.PodGroupAssignments) (int64, *schedcore.Status) {
	r := p.scores[a.Placement]
	return r.score, r.status
}

func (p placementScorer) PlacementScoreExtensions() schedcore.PlacementScoreExtensions {
	if p.normalizeFn == nil {
		return nil
	}
	return p
}

func (p placementScorer) NormalizePlacementScore(_ context.Context, _ *schedcore.CycleState, _ schedcore.PodGroupInfo, scores []schedcore.PlacementScore) *schedcore.Status {
	return p.normalizeFn(scores)
}

// gangFeasible is a GangScheduling that is a PlacementFeasible plugin;
// gangOnly one that is not.
type gangOnly struct{}

func (gangOnly) Name() string { return "GangScheduling" }

type gangFeasible struct{ gangOnly }

func (gangFeasible) PlacementFeasible(context.Context, *schedcore.CycleState, schedcore.PodGroupInfo, schedcore.PlacementProgress) *schedcore.Status {
	return nil
}

// pgFramework builds a profile over registry r plus Base, with plugins as
// given (Base added as queue sort and binder).
func pgFramework(t *testing.T, r schedcore.Registry, plugins configv1.Plugins, f schedcore.Features) (*schedruntime.Framework, error) {
	t.Helper()
	reg := schedcore.Registry{"Base": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
		return basePlugin{}, nil
	}}}
	for n, s := range r {
		reg[n] = s
	}
	plugins.QueueSort.Enabled = append(plugins.QueueSort.Enabled, configv1.Plugin{Name: "Base"})
	plugins.Bind.Enabled = append(plugins.Bind.Enabled, configv1.Plugin{Name: "Base"})
	name := "test"
	prof := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &plugins}
	h := schedcore.NewHandle(nil, 1, schedcore.WithFeatures(f))
	return schedruntime.NewFramework(context.Background(), reg, prof, h, schedruntime.FrameworkOptions{})
}

func fixed(p schedcore.Plugin) schedcore.PluginSpec {
	return schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return p, nil }}
}

func enabled(names ...string) configv1.PluginSet {
	var s configv1.PluginSet
	for _, n := range names {
		s.Enabled = append(s.Enabled, configv1.Plugin{Name: n})
	}
	return s
}

var gatesOn = schedcore.Features{GenericWorkload: true, TopologyAwareWorkloadScheduling: true}

// statusDiff compares code, message and plugin.
func statusDiff(want, got *schedcore.Status) string {
	type view struct {
		Code    string
		Message string
		Plugin  string
	}
	v := func(s *schedcore.Status) view { return view{s.Code().String(), s.Message(), s.Plugin()} }
	return cmp.Diff(v(want), v(got))
}

func TestRunPodGroupPostFilterPlugins(t *testing.T) {
	nominated := func(node string) *schedcore.PodGroupPostFilterResult {
		return &schedcore.PodGroupPostFilterResult{NominatingInfos: map[types.NamespacedName]*schedcore.NominatingInfo{
			{Namespace: "default", Name: "p1"}: {NominatedNodeName: node},
		}}
	}
	tests := []struct {
		name       string
		plugins    []*pgPlugin
		gateOff    bool
		wantStatus *schedcore.Status
		wantResult *schedcore.PodGroupPostFilterResult
	}{
		{
			name:       "no registered plugins",
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable),
		},
		{
			name:       "generic workload feature is disabled",
			gateOff:    true,
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable, "generic workload feature is disabled, cannot perform PodGroupPostFilter"),
		},
		{
			name:       "first plugin returns error",
			plugins:    []*pgPlugin{{name: "plugin1", postFilterCode: schedcore.Error}},
			wantStatus: schedcore.NewStatus(schedcore.Error, `error in "plugin1" PodGroupPostFilter plugins: `+injectReason).WithPlugin("plugin1"),
		},
		{
			name:       "first plugin returns non supported status: Skip",
			plugins:    []*pgPlugin{{name: "plugin1", postFilterCode: schedcore.Skip}},
			wantStatus: schedcore.NewStatus(schedcore.Error, `error in "plugin1" PodGroupPostFilter plugins: `+injectReason).WithPlugin("plugin1"),
		},
		{
			name: "first plugin returns success",
			plugins: []*pgPlugin{
				{name: "plugin1", postFilterCode: schedcore.Success, postFilterResult: nominated("node1")},
				{name: "plugin2", postFilterCode: schedcore.Unschedulable},
			},
			wantStatus: schedcore.NewStatus(schedcore.Success, injectReason),
			wantResult: nominated("node1"),
		},
		{
			name: "first plugin returns UnschedulableAndUnresolvable",
			plugins: []*pgPlugin{
				{name: "plugin1", postFilterCode: schedcore.UnschedulableAndUnresolvable},
				{name: "plugin2", postFilterCode: schedcore.Success},
			},
			wantStatus: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, injectReason).WithPlugin("plugin1"),
		},
		{
			name: "first plugin returns Unschedulable, second returns success",
			plugins: []*pgPlugin{
				{name: "plugin1", postFilterCode: schedcore.Unschedulable},
				{name: "plugin2", postFilterCode: schedcore.Success, postFilterResult: nominated("node2")},
			},
			wantStatus: schedcore.NewStatus(schedcore.Success, injectReason),
			wantResult: nominated("node2"),
		},
		{
			name: "all plugins return Unschedulable, aggregate reasons",
			plugins: []*pgPlugin{
				{name: "plugin1", postFilterCode: schedcore.Unschedulable},
				{name: "plugin2", postFilterCode: schedcore.Unschedulable},
			},
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable, injectReason, injectReason).WithPlugin("plugin1"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := schedcore.Registry{}
			var names []string
			for _, p := range tc.plugins {
				reg[p.name] = fixed(postFilter{p})
				names = append(names, p.name)
			}
			features := gatesOn
			if tc.gateOff {
				features = schedcore.Features{}
			}
			f, err := pgFramework(t, reg, configv1.Plugins{PodGroupPostFilter: enabled(names...)}, features)
			if err != nil {
				t.Fatal(err)
			}
			called := false
			schedule := func(context.Context) (*schedcore.PodGroupAssignments, *schedcore.Status) {
				called = true
				return &schedcore.PodGroupAssignments{}, nil
			}
			res, st := f.RunPodGroupPostFilterPlugins(context.Background(), schedcore.NewCycleState(), nil, schedule)
			if diff := statusDiff(tc.wantStatus, st); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantResult, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if called {
				t.Errorf("the scheduling function was called; only plugins may call it")
			}
		})
	}
}

func TestRunPlacementGeneratePlugins(t *testing.T) {
	var nodes []*schedcore.NodeInfo
	for _, n := range []string{"node1", "node2", "node3"} {
		ni := schedcore.NewNodeInfo()
		ni.SetNode(schedtest.MakeNode(n).Obj())
		nodes = append(nodes, ni)
	}
	foo := &schedcore.Placement{Name: "foo", Nodes: nodes[:2]}
	bar := &schedcore.Placement{Name: "bar", Nodes: nodes[1:]}
	tests := []struct {
		name           string
		plugins        []*pgPlugin
		wantPlacements []*schedcore.Placement
		wantStatus     *schedcore.Status
	}{
		{
			name:           "When no plugins provided, returns a single placement with initial nodes",
			wantPlacements: []*schedcore.Placement{{Name: "", Nodes: nodes}},
		},
		{
			name:           "When one plugin provided, returns placements generated by the plugin",
			plugins:        []*pgPlugin{{name: "plugin[0]", generate: []*schedcore.Placement{foo, bar}}},
			wantPlacements: []*schedcore.Placement{foo, bar},
		},
		{
			name:       "When plugin fails, returns error status",
			plugins:    []*pgPlugin{{name: "plugin[0]", generateStatus: schedcore.NewStatus(schedcore.Error, injectReason)}},
			wantStatus: schedcore.NewStatus(schedcore.Error, injectReason).WithPlugin("plugin[0]"),
		},
		{
			name:       "When plugin returns no placements, returns unschedulable",
			plugins:    []*pgPlugin{{name: "plugin[0]", generate: []*schedcore.Placement{}}},
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable, "no feasible placements found").WithPlugin("plugin[0]"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := schedcore.Registry{}
			var names []string
			for _, p := range tc.plugins {
				reg[p.name] = fixed(generator{p})
				names = append(names, p.name)
			}
			f, err := pgFramework(t, reg, configv1.Plugins{PlacementGenerate: enabled(names...)}, gatesOn)
			if err != nil {
				t.Fatal(err)
			}
			got, st := f.RunPlacementGeneratePlugins(context.Background(), schedcore.NewCycleState(), nil, nodes)
			if diff := statusDiff(tc.wantStatus, st); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if len(got) != len(tc.wantPlacements) {
				t.Fatalf("got %d placements, want %d", len(got), len(tc.wantPlacements))
			}
			for i := range got {
				if got[i].Name != tc.wantPlacements[i].Name || !samePointers(got[i].Nodes, tc.wantPlacements[i].Nodes) {
					t.Errorf("placement %d = %q %v, want %q %v", i, got[i].Name, got[i].Nodes, tc.wantPlacements[i].Name, tc.wantPlacements[i].Nodes)
				}
			}
		})
	}
}

func samePointers[T any](a, b []*T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRunPlacementScorePlugins(t *testing.T) {
	// 3 placements, the content doesn't matter as they're not used in the test
	placements := []*schedcore.Placement{{Name: "0"}, {Name: "1"}, {Name: "2"}}
	scores := func(s0, s1, s2 int64, st1 *schedcore.Status) map[*schedcore.Placement]scoreResult {
		return map[*schedcore.Placement]scoreResult{placements[0]: {score: s0}, placements[1]: {score: s1, status: st1}, placements[2]: {score: s2}}
	}
	pluginScores := func(p int, s1, s2 int64) schedcore.PlacementPluginScores {
		return schedcore.PlacementPluginScores{Placement: placements[p], Scores: []schedcore.PluginScore{{Name: "plugin1", Score: s1}, {Name: "plugin2", Score: s2}}, TotalScore: s1 + s2}
	}
	type weighted struct {
		*pgPlugin
		weight int32
	}
	tests := []struct {
		name       string
		plugins    []weighted
		wantScore  []schedcore.PlacementPluginScores
		wantStatus *schedcore.Status
	}{
		{
			name: "all success",
			plugins: []weighted{
				{&pgPlugin{name: "plugin1", scores: scores(0, 50, 100, nil)}, 1},
				{&pgPlugin{name: "plugin2", scores: scores(0, 50, 0, nil)}, 2},
			},
			wantScore: []schedcore.PlacementPluginScores{pluginScores(0, 0, 0), pluginScores(1, 50, 100), pluginScores(2, 100, 0)},
		},
		{
			name: "any error",
			plugins: []weighted{
				{&pgPlugin{name: "plugin1", scores: scores(0, 50, 100, nil)}, 1},
				{&pgPlugin{name: "plugin2", scores: scores(0, 50, 0, schedcore.NewStatus(schedcore.Error, "error for test"))}, 2},
			},
			wantStatus: schedcore.NewStatus(schedcore.Error, `running PlacementScore plugins: plugin "plugin2" failed with: error for test`),
		},
		{
			name:      "no plugins",
			wantScore: []schedcore.PlacementPluginScores{{Placement: placements[0]}, {Placement: placements[1]}, {Placement: placements[2]}},
		},
		{
			name: "normalize success",
			plugins: []weighted{
				{&pgPlugin{name: "plugin1", scores: scores(0, 50, 100, nil)}, 1},
				{&pgPlugin{name: "plugin2", scores: scores(100, 200, 400, nil), normalizeFn: func(s []schedcore.PlacementScore) *schedcore.Status {
					for i := range s {
						s[i].Score = int64(float32(s[i].Score) / float32(s[2].Score) * 100)
					}
					return nil
				}}, 2},
			},
			wantScore: []schedcore.PlacementPluginScores{pluginScores(0, 0, 50), pluginScores(1, 50, 100), pluginScores(2, 100, 200)},
		},
		{
			name: "normalize failure",
			plugins: []weighted{
				{&pgPlugin{name: "plugin1", scores: scores(0, 50, 100, nil)}, 1},
				{&pgPlugin{name: "plugin2", scores: scores(0, 50, 100, nil), normalizeFn: func([]schedcore.PlacementScore) *schedcore.Status {
					return schedcore.NewStatus(schedcore.Error, "error for test")
				}}, 2},
			},
			wantStatus: schedcore.NewStatus(schedcore.Error, `running NormalizePlacementScore on PlacementScore plugins: plugin "plugin2" failed with: error for test`),
		},
		{
			name:       "plugin result is greater than max score",
			plugins:    []weighted{{&pgPlugin{name: "plugin1", scores: scores(0, 101, 100, nil)}, 1}},
			wantStatus: schedcore.NewStatus(schedcore.Error, `applying score defaultWeights on PlacementScore plugins: plugin "plugin1" returns an invalid score 101, it should in the range of [0, 100] after normalizing`),
		},
		{
			name:       "plugin result is less than min score",
			plugins:    []weighted{{&pgPlugin{name: "plugin1", scores: scores(0, -1, 100, nil)}, 1}},
			wantStatus: schedcore.NewStatus(schedcore.Error, `applying score defaultWeights on PlacementScore plugins: plugin "plugin1" returns an invalid score -1, it should in the range of [0, 100] after normalizing`),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := schedcore.Registry{}
			var set configv1.PluginSet
			for _, p := range tc.plugins {
				reg[p.name] = fixed(placementScorer{p.pgPlugin})
				set.Enabled = append(set.Enabled, configv1.Plugin{Name: p.name, Weight: ptr(p.weight)})
			}
			f, err := pgFramework(t, reg, configv1.Plugins{PlacementScore: set}, gatesOn)
			if err != nil {
				t.Fatal(err)
			}
			assignments := make([]*schedcore.PodGroupAssignments, len(placements))
			states := make([]*schedcore.CycleState, len(placements))
			for i := range placements {
				assignments[i] = &schedcore.PodGroupAssignments{Placement: placements[i]}
				states[i] = schedcore.NewCycleState()
			}
			got, st := f.RunPlacementScorePlugins(context.Background(), schedcore.NewCycleState(), nil, assignments, states)
			if diff := statusDiff(tc.wantStatus, st); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantScore, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("one state per assignments", func(t *testing.T) {
		f, err := pgFramework(t, nil, configv1.Plugins{}, gatesOn)
		if err != nil {
			t.Fatal(err)
		}
		_, st := f.RunPlacementScorePlugins(context.Background(), schedcore.NewCycleState(), nil, []*schedcore.PodGroupAssignments{{Placement: placements[0]}}, nil)
		want := schedcore.NewStatus(schedcore.Error, "expected one PlacementCycleState per PodGroupAssignments, got 0 placement states for 1 assignments")
		if diff := statusDiff(want, st); diff != "" {
			t.Errorf("status (-want +got):\n%s", diff)
		}
	})
}
