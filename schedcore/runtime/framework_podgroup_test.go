package runtime_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestNewFrameworkPodGroupPoints transcribes kube v1.37.2's
// TestNewFrameworkErrors ("more than one PlacementGeneratePlugin"),
// TestNewFramework_PlacementFeasible and TestPodGroupPostFilterPlugins,
// and checks multiPoint expansion into the pod-group points with weights.
func TestNewFrameworkPodGroupPoints(t *testing.T) {
	gen := func(n string) schedcore.PluginSpec { return fixed(generator{&pgPlugin{name: n}}) }
	tests := []struct {
		name     string
		registry schedcore.Registry
		plugins  configv1.Plugins
		features schedcore.Features
		wantErr  string
		// want* are the plugin names laid out per point.
		wantFeasible, wantGenerate, wantScore, wantPostFilter []string
		wantScoreWeights                                      map[string]int64
	}{
		{
			name:     "more than one PlacementGeneratePlugin",
			registry: schedcore.Registry{"gen1": gen("gen1"), "gen2": gen("gen2")},
			plugins:  configv1.Plugins{PlacementGenerate: enabled("gen1", "gen2")},
			wantErr:  `at most one placement generate plugin is allowed for profile with scheduler name "test"`,
		},
		{
			name:     "GenericWorkload enabled, GangScheduling does not fulfill PlacementFeasiblePlugin interface",
			registry: schedcore.Registry{"GangScheduling": fixed(gangOnly{})},
			plugins:  configv1.Plugins{MultiPoint: enabled("GangScheduling")},
			features: gatesOn,
			wantErr:  "GenericWorkload is enabled, but GangScheduling plugin does not fulfill PlacementFeasiblePlugin interface",
		},
		{
			name:     "GenericWorkload disabled, GangScheduling does not fulfill PlacementFeasiblePlugin interface",
			registry: schedcore.Registry{"GangScheduling": fixed(gangOnly{})},
			plugins:  configv1.Plugins{MultiPoint: enabled("GangScheduling")},
		},
		{
			name:     "GenericWorkload enabled, GangScheduling plugin not present",
			features: gatesOn,
		},
		{
			name:         "GenericWorkload enabled, GangScheduling fulfills PlacementFeasiblePlugin interface",
			registry:     schedcore.Registry{"GangScheduling": fixed(gangFeasible{})},
			plugins:      configv1.Plugins{MultiPoint: enabled("GangScheduling")},
			features:     gatesOn,
			wantFeasible: []string{"GangScheduling"},
		},
		{
			name:     "GenericWorkload disabled, GangScheduling fulfills PlacementFeasiblePlugin interface",
			registry: schedcore.Registry{"GangScheduling": fixed(gangFeasible{})},
			plugins:  configv1.Plugins{MultiPoint: enabled("GangScheduling")},
		},
		{
			name:           "should fill pod group post filter when explicitly configured with default preemption",
			registry:       schedcore.Registry{"DefaultPreemption": fixed(postFilter{&pgPlugin{name: "DefaultPreemption"}})},
			plugins:        configv1.Plugins{PodGroupPostFilter: enabled("DefaultPreemption")},
			wantPostFilter: []string{"DefaultPreemption"},
		},
		{
			name:     "should not fill pod group post filter when not configured",
			registry: schedcore.Registry{"DefaultPreemption": fixed(postFilter{&pgPlugin{name: "DefaultPreemption"}})},
			plugins:  configv1.Plugins{PreScore: configv1.PluginSet{}},
		},
		{
			name:    "should fail framework initialization when configured plugin does not implement PodGroupPostFilterPlugin interface",
			plugins: configv1.Plugins{PodGroupPostFilter: enabled("Base")},
			wantErr: `plugins.podGroupPostFilter.enabled[0]: plugin "Base" does not extend podGroupPostFilter plugin`,
		},
		{
			name: "multiPoint expands into the pod-group points with its weights, an explicit weight wins",
			registry: schedcore.Registry{
				"gen":   gen("gen"),
				"sc1":   fixed(placementScorer{&pgPlugin{name: "sc1"}}),
				"sc2":   fixed(placementScorer{&pgPlugin{name: "sc2"}}),
				"preem": fixed(postFilter{&pgPlugin{name: "preem"}}),
			},
			plugins: configv1.Plugins{
				MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{
					{Name: "gen"}, {Name: "sc1", Weight: ptr[int32](3)}, {Name: "sc2"}, {Name: "preem"},
				}},
				PlacementScore: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "sc2", Weight: ptr[int32](5)}}},
			},
			wantGenerate:     []string{"gen"},
			wantScore:        []string{"sc2", "sc1"},
			wantPostFilter:   []string{"preem"},
			wantScoreWeights: map[string]int64{"sc1": 3, "sc2": 5},
		},
		{
			name:     "multiPoint plugin disabled at a pod-group point",
			registry: schedcore.Registry{"sc1": fixed(placementScorer{&pgPlugin{name: "sc1"}}), "sc2": fixed(placementScorer{&pgPlugin{name: "sc2"}})},
			plugins: configv1.Plugins{
				MultiPoint:     enabled("sc1", "sc2"),
				PlacementScore: configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "sc1"}}},
			},
			wantScore:        []string{"sc2"},
			wantScoreWeights: map[string]int64{"sc2": 1},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := pgFramework(t, tc.registry, tc.plugins, tc.features)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := [][]string{f.PlacementFeasiblePluginNames(), f.PlacementGeneratePluginNames(), f.PlacementScorePluginNames(), f.PodGroupPostFilterPluginNames()}
			want := [][]string{tc.wantFeasible, tc.wantGenerate, tc.wantScore, tc.wantPostFilter}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("feasible, generate, score, postFilter (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantScoreWeights, f.PlacementScorePluginWeights(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("placement score weights (-want +got):\n%s", diff)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
