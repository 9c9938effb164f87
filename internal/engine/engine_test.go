package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	runtime "k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestNewWithZeroOptionsIsKubeSchedulersDefaults(t *testing.T) {
	e, err := New(context.Background(), Options{}, Driver{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"default-scheduler"}, e.Profiles.Order); d != "" {
		t.Errorf("profiles (-want +got):\n%s", d)
	}
	if got := e.Options.Features; got != schedcore.DefaultFeatures {
		t.Errorf("features %+v, want the defaults", got)
	}
	fw := e.Profiles.ByName["default-scheduler"]
	if got := fw.Handle().Features(); got != schedcore.DefaultFeatures {
		t.Errorf("the handle's features %+v, want the defaults", got)
	}
	if !fw.HasPostFilterPlugins() {
		t.Error("the default profile has no PostFilter (preemption)")
	}
	if e.Queue == nil || e.Scheduler == nil || e.Cache == nil || e.Snapshot == nil {
		t.Errorf("engine not assembled: %+v", e)
	}
}

func TestNewTakesTheOptionsFeaturesAndNoPreemption(t *testing.T) {
	f := schedcore.DefaultFeatures
	f.TaintTolerationComparisonOperators = true
	e, err := New(context.Background(), Options{Features: f, NoPreemption: true}, Driver{})
	if err != nil {
		t.Fatal(err)
	}
	fw := e.Profiles.ByName["default-scheduler"]
	if got := fw.Handle().Features(); got != f {
		t.Errorf("the handle's features %+v, want %+v", got, f)
	}
	if fw.HasPostFilterPlugins() {
		t.Error("NoPreemption left the PostFilter plugins in")
	}
}

func TestConfigErrorsWrapErrConfigAndNameTheField(t *testing.T) {
	cfg, err := LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Profiles[0].PluginConfig = append(cfg.Profiles[0].PluginConfig, configv1.PluginConfig{Name: "NoSuchPlugin", Args: runtime.RawExtension{}})
	_, err = New(context.Background(), Options{Config: cfg}, Driver{})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("error %v does not wrap ErrConfig", err)
	}
	if want := `profiles[0]: pluginConfig[`; err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("error %q does not name the field", err)
	}
}

func TestTieBreakIsTheLowestNameUnlessSeeded(t *testing.T) {
	if tb := (Options{}).TieBreak(); tb != nil {
		t.Error("unseeded options have a tie-break; want nil (the lowest name)")
	}
	tied := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	pick := func(seed int64) []string {
		tb := Options{Seed: seed, UseSeed: true}.TieBreak()
		var out []string
		for i := 0; i < 10; i++ {
			out = append(out, tb(tied))
		}
		return out
	}
	if d := cmp.Diff(pick(7), pick(7)); d != "" {
		t.Errorf("the same seed picks differently (-first +second):\n%s", d)
	}
	if cmp.Equal(pick(1), pick(2)) {
		t.Error("two seeds pick the same ten nodes")
	}
}
