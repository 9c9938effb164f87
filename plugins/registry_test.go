package plugins_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// TestDefaultProfileByGates checks what kube's applyFeatureGates adds to
// the default profile for the workload gates, and how the framework lays
// the default profile out at the pod-group points.
func TestDefaultProfileByGates(t *testing.T) {
	tail := func(ps *configv1.Plugins, n int) []string {
		var out []string
		for _, p := range ps.MultiPoint.Enabled[len(ps.MultiPoint.Enabled)-n:] {
			w := ""
			if p.Weight != nil {
				w = fmt.Sprint("/", *p.Weight)
			}
			out = append(out, p.Name+w)
		}
		return out
	}
	tests := []struct {
		name     string
		features schedcore.Features
		// wantTail is the end of multiPoint (name/weight).
		wantTail []string
		// want* are the framework's lists at the pod-group points.
		wantFeasible, wantGenerate, wantScore, wantPreEnqueue []string
		wantScoreWeights                                      map[string]int64
	}{
		{
			name:             "gates off: kube's default list, NodeResourcesFit laid out as a placement scorer (its type is one)",
			features:         schedcore.DefaultFeatures,
			wantTail:         []string{"DefaultBinder", "NodeDeclaredFeatures"},
			wantScore:        []string{"NodeResourcesFit"},
			wantScoreWeights: map[string]int64{"NodeResourcesFit": 1},
			wantPreEnqueue:   []string{"SchedulingGates", "DynamicResources"},
		},
		{
			name:             "GenericWorkload: GangScheduling appended and wired as PlacementFeasible",
			features:         withGates(true, false),
			wantTail:         []string{"NodeDeclaredFeatures", "GangScheduling"},
			wantFeasible:     []string{"GangScheduling"},
			wantScore:        []string{"NodeResourcesFit"},
			wantScoreWeights: map[string]int64{"NodeResourcesFit": 1},
			wantPreEnqueue:   []string{"SchedulingGates", "DynamicResources", "GangScheduling"},
		},
		{
			name:             "TopologyAwareWorkloadScheduling: TopologyPlacementGenerator and PodGroupPodsCount (1) appended",
			features:         withGates(true, true),
			wantTail:         []string{"GangScheduling", "TopologyPlacementGenerator", "PodGroupPodsCount/1"},
			wantFeasible:     []string{"GangScheduling"},
			wantGenerate:     []string{"TopologyPlacementGenerator"},
			wantScore:        []string{"NodeResourcesFit", "PodGroupPodsCount"},
			wantScoreWeights: map[string]int64{"NodeResourcesFit": 1, "PodGroupPodsCount": 1},
			wantPreEnqueue:   []string{"SchedulingGates", "DynamicResources", "GangScheduling"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps := plugins.DefaultPluginsFor(tc.features)
			if diff := cmp.Diff(tc.wantTail, tail(ps, len(tc.wantTail))); diff != "" {
				t.Errorf("multiPoint tail (-want +got):\n%s", diff)
			}
			name := "default-scheduler"
			prof := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: ps}
			h := schedcore.NewHandle(nil, 1, schedcore.WithFeatures(tc.features))
			f, err := schedruntime.NewFramework(context.Background(), plugins.NewInTreeRegistry(), prof, h, schedruntime.FrameworkOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var preEnqueue []string
			for _, p := range f.PreEnqueuePlugins() {
				preEnqueue = append(preEnqueue, p.Name())
			}
			got := [][]string{f.PlacementFeasiblePluginNames(), f.PlacementGeneratePluginNames(), f.PlacementScorePluginNames(), preEnqueue, f.PodGroupPostFilterPluginNames()}
			// DynamicResources before DefaultPreemption, as kube's default
			// list has them, under any gate (the point only runs in a
			// pod-group cycle, with GenericWorkload).
			want := [][]string{tc.wantFeasible, tc.wantGenerate, tc.wantScore, tc.wantPreEnqueue, {"DynamicResources", "DefaultPreemption"}}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("feasible, generate, placement score, preEnqueue, podGroupPostFilter (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantScoreWeights, f.PlacementScorePluginWeights()); diff != "" {
				t.Errorf("placement score weights (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(plugins.DefaultPluginsFor(schedcore.DefaultFeatures), plugins.DefaultPlugins()); diff != "" {
		t.Errorf("DefaultPlugins differs from the defaults' list (-want +got):\n%s", diff)
	}
}

func withGates(generic, tas bool) schedcore.Features {
	f := schedcore.DefaultFeatures
	f.GenericWorkload, f.TopologyAwareWorkloadScheduling = generic, tas
	return f
}
