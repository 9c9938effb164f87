package schedcore_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestPodGroupPointsInConfig: the pod-group points of kube v1.37's
// Plugins (placementGenerate, placementScore, podGroupPostFilter) are
// merged into the defaults as every point (kube's mergePlugins), name
// plugins the profile needs, and placementScore takes weights.
func TestPodGroupPointsInConfig(t *testing.T) {
	w := func(n string, weight int32) configv1.Plugin { return configv1.Plugin{Name: n, Weight: &weight} }
	defaults := func() *configv1.Plugins {
		return &configv1.Plugins{MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "A"}}}}
	}
	custom := &configv1.Plugins{
		PlacementGenerate:  configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Gen"}}},
		PlacementScore:     configv1.PluginSet{Enabled: []configv1.Plugin{w("Sc", 3)}, Disabled: []configv1.Plugin{{Name: "Old"}}},
		PodGroupPostFilter: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Pre"}}},
	}
	merged := schedcore.MergePlugins(defaults(), custom)
	if diff := cmp.Diff(custom.PlacementScore, merged.PlacementScore); diff != "" {
		t.Errorf("placementScore merged (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sets.List(sets.New("A", "Gen", "Sc", "Pre")), sets.List(schedcore.EnabledPlugins(merged))); diff != "" {
		t.Errorf("enabled plugins (-want +got):\n%s", diff)
	}

	name := "p"
	cfg := &configv1.KubeSchedulerConfiguration{Profiles: []configv1.KubeSchedulerProfile{{SchedulerName: &name, Plugins: merged}}}
	if err := schedcore.ValidateConfig(cfg); err != nil {
		t.Errorf("a placementScore weight is valid, got %v", err)
	}
	merged.PlacementGenerate.Enabled[0].Weight = ptr[int32](2)
	err := schedcore.ValidateConfig(cfg)
	want := "profiles[0].plugins.placementGenerate.enabled[0].weight: Invalid value: 2: only score plugins take a weight"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error = %v, want %q", err, want)
	}
}

func ptr[T any](v T) *T { return &v }
