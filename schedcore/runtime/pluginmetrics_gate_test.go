package runtime_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// countingRecorder counts plugin observations.
type countingRecorder struct{ plugins atomic.Int64 }

func (*countingRecorder) ExtensionPoint(string, string, schedcore.Code, time.Duration) {}
func (r *countingRecorder) Plugin(string, string, schedcore.Code, time.Duration) {
	r.plugins.Add(1)
}
func (*countingRecorder) ScheduleAttempt(string, string, time.Duration) {}
func (*countingRecorder) AlgorithmDuration(time.Duration)               {}
func (*countingRecorder) PodScheduled(string, int, time.Duration)       {}
func (*countingRecorder) Unschedulable(string, []string)                {}

// gatedRecorder also says whether it keeps plugin observations.
type gatedRecorder struct {
	countingRecorder
	accepts bool
}

func (r *gatedRecorder) AcceptsPluginMetrics() bool { return r.accepts }

// TestSampledCyclesAskTheRecordersGate: of the cycles drawn for plugin
// metrics (10%, kube's sampling), only those the recorder says it keeps
// observations for are timed (a timed cycle runs without its memos); a
// recorder without the gate gets every sampled cycle's observations, and
// the placements are the same either way.
func TestSampledCyclesAskTheRecordersGate(t *testing.T) {
	const pods = 60
	run := func(rec schedruntime.MetricsRecorder) []string {
		reg := schedcore.Registry{
			"Slots": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
				return slots{}, nil
			}},
		}
		name := v1.DefaultSchedulerName
		profile := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: &configv1.Plugins{
			MultiPoint: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Slots"}}},
		}}
		cache := schedcore.NewCache(schedcore.DefaultFeatures)
		for i := range 8 {
			cache.AddNode(schedtest.MakeNode(fmt.Sprintf("n%d", i)).Label("slots", "100").Obj())
		}
		snap := schedcore.NewEmptySnapshot()
		fw, err := schedruntime.NewFramework(context.Background(), reg, profile, schedcore.NewHandle(snap, 2), schedruntime.FrameworkOptions{Recorder: rec})
		if err != nil {
			t.Fatal(err)
		}
		profiles := map[string]*schedruntime.Framework{name: fw}
		q := queue.New(fw.QueueSortLess(), profiles)
		s := schedruntime.NewScheduler(cache, q, profiles, snap, &schedruntime.Algorithm{})
		s.SyncBinding = true
		var placed []string
		s.Hooks.Scheduled = func(_ context.Context, _ *schedruntime.Framework, qpi *schedcore.QueuedPodInfo, node string, _ schedruntime.ScheduleResult) {
			placed = append(placed, qpi.Pod.Name+"@"+node)
		}
		for i := range pods {
			q.Add(s.Logger, schedtest.MakePod(fmt.Sprintf("p%02d", i)).UID(fmt.Sprint(i)).Label("slots", "1").Obj())
		}
		for range pods {
			qpi, ok := q.TryPop(s.Logger)
			if !ok {
				t.Fatal("queue empty early")
			}
			s.ScheduleOnePod(context.Background(), qpi)
		}
		return placed
	}
	plain := &countingRecorder{}
	open := &gatedRecorder{accepts: true}
	closed := &gatedRecorder{accepts: false}
	want := run(plain)
	if len(want) != pods {
		t.Fatalf("%d pods placed, want %d", len(want), pods)
	}
	for _, c := range []struct {
		name string
		rec  schedruntime.MetricsRecorder
		n    *atomic.Int64
		some bool
	}{
		{"no gate", plain, &plain.plugins, true},
		{"gate open", open, &open.plugins, true},
		{"gate closed", closed, &closed.plugins, false},
	} {
		got := want
		if c.rec != plain {
			got = run(c.rec)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: placements %v, want %v", c.name, got, want)
		}
		if n := c.n.Load(); (n > 0) != c.some {
			t.Errorf("%s: %d plugin observations, want some: %v", c.name, n, c.some)
		}
	}
}
