package schedcore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// skipper skips its Filter (PreFilter returns Skip) for pods labelled
// skip-<name>=yes; its Filter rejects every node.
type skipper struct{ name string }

func (p skipper) Name() string { return p.name }

// Less and Bind make A the profile's queue sort and binder.
func (skipper) Less(a, b *schedcore.QueuedPodInfo) bool { return a.Pod.Name < b.Pod.Name }
func (skipper) Bind(context.Context, *schedcore.CycleState, *v1.Pod, string) *schedcore.Status {
	return nil
}

func (p skipper) PreFilter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	if pod.Labels["skip-"+p.name] == "yes" {
		return nil, schedcore.NewStatus(schedcore.Skip)
	}
	return nil, nil
}

func (p skipper) PreFilterExtensions() schedcore.PreFilterExtensions { return nil }

func (p skipper) Filter(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo) *schedcore.Status {
	return schedcore.NewStatus(schedcore.Unschedulable, "rejected by "+p.name)
}

// The filters a cycle runs are the profile's minus the ones its PreFilter
// skipped, cycle after cycle, as the skipped plugins change or stay the
// same (RunPreFilterPlugins shares the last cycle's set and filters when
// the same plugins skip): SkipFilterPlugins names them, and a node is
// rejected by the first filter not skipped.
func TestSkippedFiltersFollowEachCycle(t *testing.T) {
	reg := schedcore.Registry{}
	var enabled []configv1.Plugin
	for _, name := range []string{"A", "B"} {
		pl := skipper{name}
		reg[name] = schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return pl, nil }}
		enabled = append(enabled, configv1.Plugin{Name: name})
	}
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	cache.AddNode(schedtest.MakeNode("n1").Obj())
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: enabled},
		QueueSort:  configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "B"}}},
		Bind:       configv1.PluginSet{Disabled: []configv1.Plugin{{Name: "B"}}},
	}}
	fw, err := schedcore.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedcore.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, skip := range [][]string{{"A"}, {"A"}, {"B"}, {}, {}, {"A", "B"}, {"B"}, {"B"}, {"A"}} {
		pod := schedtest.MakePod(fmt.Sprint("p", i)).Obj()
		pod.Labels = map[string]string{}
		for _, s := range skip {
			pod.Labels["skip-"+s] = "yes"
		}
		state := schedcore.NewCycleState()
		if _, s, _ := fw.RunPreFilterPlugins(context.Background(), state, pod); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		if diff := cmp.Diff(sets.List(sets.New(skip...)), sets.List(state.SkipFilterPlugins)); diff != "" {
			t.Errorf("cycle %d: SkipFilterPlugins (-want +got):\n%s", i, diff)
		}
		want := "passes"
		for _, pl := range []string{"A", "B"} {
			if !sets.New(skip...).Has(pl) {
				want = "rejected by " + pl
				break
			}
		}
		got := "passes"
		if s := fw.RunFilterPlugins(context.Background(), state, pod, snap.List()[0]); !s.IsSuccess() {
			got = s.Message()
		}
		if got != want {
			t.Errorf("cycle %d, skipping %v: node %s, want %s", i, skip, got, want)
		}
	}
}

// Skipped is one status every plugin returns: stamping it with a plugin's
// name (as runners and explain do with what a plugin returns) must leave
// it as it was, a Skip without plugin or reasons.
func TestSkippedStaysUnstamped(t *testing.T) {
	for _, name := range []string{"A", "B", "A"} {
		if got := schedcore.Skipped().WithPlugin(name); got.Plugin() != name || !got.IsSkip() {
			t.Errorf("Skipped().WithPlugin(%q) is %v of %q", name, got.Code(), got.Plugin())
		}
	}
	if s := schedcore.Skipped(); !s.IsSkip() || s.Plugin() != "" || s.Message() != "" {
		t.Errorf("Skipped() became %v of %q (%q)", s.Code(), s.Plugin(), s.Message())
	}
}

// passer is a PassingFilter: it passes every node for pods without a
// "named" label, and rejects any node but the one named otherwise. It
// counts its Filter calls.
type passer struct{ calls *int }

func (passer) Name() string { return "P" }

func (passer) PassesEveryNode(pod *v1.Pod) bool { return pod.Labels["named"] == "" }

func (p passer) Filter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, ni *schedcore.NodeInfo) *schedcore.Status {
	*p.calls++
	if n := pod.Labels["named"]; n != "" && n != ni.Name() {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "not "+n)
	}
	return nil
}

// A filter that passes every node for a cycle's pod is left out of that
// cycle's filters, and only of that cycle's: the next pod, which it may
// reject, meets it again (RunPreFilterPlugins shares the last cycle's set
// only while the same filters pass), as does a cycle that times every
// plugin. It is never named a skipped plugin.
func TestPassingFiltersFollowEachCycle(t *testing.T) {
	calls := 0
	reg := schedcore.Registry{
		"A": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return skipper{"A"}, nil
		}},
		"P": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return passer{&calls}, nil
		}},
	}
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	cache.AddNode(schedtest.MakeNode("n1").Obj())
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	name := v1.DefaultSchedulerName
	profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
		MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "P"}, {Name: "A"}}},
	}}
	fw, err := schedcore.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedcore.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		named   string
		skipA   bool
		timed   bool
		want    string
		filters int
	}{
		{skipA: true, want: "passes"},
		{named: "n2", skipA: true, want: "not n2", filters: 1},
		{skipA: true, want: "passes"},
		{named: "n1", skipA: true, want: "passes", filters: 1},
		{named: "n2", skipA: true, want: "not n2", filters: 1},
		{want: "rejected by A"},
		{named: "n2", want: "not n2", filters: 1},
		{skipA: true, timed: true, want: "passes", filters: 1},
		{skipA: true, want: "passes"},
		{named: "n2", skipA: true, want: "not n2", filters: 1},
	}
	for i, tc := range tests {
		pod := schedtest.MakePod(fmt.Sprint("p", i)).Obj()
		pod.Labels = map[string]string{"named": tc.named}
		if tc.skipA {
			pod.Labels["skip-A"] = "yes"
		}
		state := schedcore.NewCycleState()
		state.RecordPluginMetrics = tc.timed
		if _, s, _ := fw.RunPreFilterPlugins(context.Background(), state, pod); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		if state.SkipFilterPlugins.Has("P") {
			t.Errorf("cycle %d: P named skipped", i)
		}
		calls = 0
		got := "passes"
		if s := fw.RunFilterPlugins(context.Background(), state, pod, snap.List()[0]); !s.IsSuccess() {
			got = s.Message()
		}
		if got != tc.want || calls != tc.filters {
			t.Errorf("cycle %d (named %q, timed %v): node n1 %s after %d P filters, want %s after %d", i, tc.named, tc.timed, got, calls, tc.want, tc.filters)
		}
	}
}
