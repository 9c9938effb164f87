package runtime_test

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
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// scoreSkipper skips its Score (PreScore returns Skip) for pods labelled
// skip-<name>=yes; its Score gives every node its weight.
type scoreSkipper struct {
	name   string
	weight int64
}

func (p scoreSkipper) Name() string { return p.name }

// Less and Bind make A the profile's queue sort and binder.
func (scoreSkipper) Less(a, b *schedcore.QueuedPodInfo) bool { return a.Pod.Name < b.Pod.Name }
func (scoreSkipper) Bind(context.Context, *schedcore.CycleState, *v1.Pod, string) *schedcore.Status {
	return nil
}

func (p scoreSkipper) PreScore(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) *schedcore.Status {
	if pod.Labels["skip-"+p.name] == "yes" {
		return schedcore.NewStatus(schedcore.Skip)
	}
	return nil
}

func (p scoreSkipper) Score(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo) (int64, *schedcore.Status) {
	return p.weight, nil
}

// The score plugins a cycle runs are the profile's minus the ones its
// PreScore skipped, cycle after cycle, as the skipped plugins change or
// stay the same (RunPreScorePlugins shares the last cycle's set when the
// same plugins skip): SkipScorePlugins names them, and a node's total is
// the sum of the scores of the plugins not skipped.
func TestSkippedScoresFollowEachCycle(t *testing.T) {
	reg := schedcore.Registry{}
	var enabled []configv1.Plugin
	weights := map[string]int64{"A": 1, "B": 10}
	for _, name := range []string{"A", "B"} {
		pl := scoreSkipper{name, weights[name]}
		reg[name] = schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return pl, nil
		}}
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
	fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{})
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
		if s := fw.RunPreScorePlugins(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		if diff := cmp.Diff(sets.List(sets.New(skip...)), sets.List(state.SkipScorePlugins)); diff != "" {
			t.Errorf("cycle %d: SkipScorePlugins (-want +got):\n%s", i, diff)
		}
		var want int64
		for _, pl := range []string{"A", "B"} {
			if !sets.New(skip...).Has(pl) {
				want += weights[pl]
			}
		}
		scores, s := fw.RunScorePlugins(context.Background(), state, pod, snap.List())
		if !s.IsSuccess() {
			t.Fatal(s.AsError())
		}
		if got := scores[0].TotalScore; got != want {
			t.Errorf("cycle %d, skipping %v: total %d, want %d", i, skip, got, want)
		}
	}
}
