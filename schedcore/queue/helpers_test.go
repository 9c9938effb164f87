package queue

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// epoch is the fake clock's start, mid-second so window alignment shows.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 500_000_000, time.UTC)

var logger = logr.Discard()

// less is PrioritySort's Less: higher priority first, then older.
func less(a, b *schedcore.QueuedPodInfo) bool {
	pa, pb := a.Priority(), b.Priority()
	return pa > pb || pa == pb && a.Timestamp.Before(b.Timestamp)
}

type sortPlugin struct{}

func (sortPlugin) Name() string                            { return "Sort" }
func (sortPlugin) Less(a, b *schedcore.QueuedPodInfo) bool { return less(a, b) }

type bindPlugin struct{}

func (bindPlugin) Name() string { return "Bind" }
func (bindPlugin) Bind(context.Context, *schedcore.CycleState, *v1.Pod, string) *schedcore.Status {
	return nil
}

// filterPlugin is a Filter plugin that only exists to register events.
type filterPlugin struct {
	name   string
	events []schedcore.ClusterEventWithHint
}

func (p *filterPlugin) Name() string { return p.name }
func (p *filterPlugin) Filter(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo) *schedcore.Status {
	return nil
}
func (p *filterPlugin) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return p.events, nil
}

// gatePlugin is a PreEnqueue plugin rejecting pods while gate(pod) is true.
type gatePlugin struct {
	name   string
	gate   func(*v1.Pod) bool
	events []schedcore.ClusterEventWithHint
	calls  int
}

func (p *gatePlugin) Name() string { return p.name }
func (p *gatePlugin) PreEnqueue(_ context.Context, pod *v1.Pod) *schedcore.Status {
	p.calls++
	if p.gate(pod) {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "gated by "+p.name)
	}
	return nil
}
func (p *gatePlugin) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return p.events, nil
}

// schedulingGates is like kube's SchedulingGates plugin.
func schedulingGates() *gatePlugin {
	return &gatePlugin{
		name: "SchedulingGates",
		gate: func(p *v1.Pod) bool { return len(p.Spec.SchedulingGates) > 0 },
		events: []schedcore.ClusterEventWithHint{{
			Event: schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.UpdatePodSchedulingGatesEliminated},
			QueueingHintFn: func(_ logr.Logger, pod *v1.Pod, _, newObj any) (schedcore.QueueingHint, error) {
				if np, ok := newObj.(*v1.Pod); ok && np.UID == pod.UID {
					return schedcore.Queue, nil
				}
				return schedcore.QueueSkip, nil
			},
		}},
	}
}

// Events and hints used by the tests.
var (
	nodeAdd        = schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add}
	nodeLabel      = schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.UpdateNodeLabel}
	nodeUpdate     = schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Update}
	assignedAdd    = schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Add}
	assignedDelete = schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Delete}

	queueAlways = func(logr.Logger, *v1.Pod, any, any) (schedcore.QueueingHint, error) { return schedcore.Queue, nil }
	queueNever  = func(logr.Logger, *v1.Pod, any, any) (schedcore.QueueingHint, error) { return schedcore.QueueSkip, nil }
	queueError  = func(logr.Logger, *v1.Pod, any, any) (schedcore.QueueingHint, error) {
		return schedcore.QueueSkip, errors.New("boom")
	}
	// queueIfFits queues for nodes labelled fits=true.
	queueIfFits = func(_ logr.Logger, _ *v1.Pod, _, newObj any) (schedcore.QueueingHint, error) {
		if n, ok := newObj.(*v1.Node); ok && n.Labels["fits"] == "true" {
			return schedcore.Queue, nil
		}
		return schedcore.QueueSkip, nil
	}
)

func withHint(e schedcore.ClusterEvent, fn schedcore.QueueingHintFn) schedcore.ClusterEventWithHint {
	return schedcore.ClusterEventWithHint{Event: e, QueueingHintFn: fn}
}

// newFramework builds the default-scheduler profile through the real
// framework builder from the given filter and PreEnqueue plugins.
func newFramework(t *testing.T, filters []*filterPlugin, gates ...*gatePlugin) *schedruntime.Framework {
	t.Helper()
	r := schedcore.Registry{
		"Sort": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return sortPlugin{}, nil
		}},
		"Bind": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
			return bindPlugin{}, nil
		}},
	}
	plugins := &configv1.Plugins{
		QueueSort: configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Sort"}}},
		Bind:      configv1.PluginSet{Enabled: []configv1.Plugin{{Name: "Bind"}}},
	}
	for _, f := range filters {
		r[f.name] = schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return f, nil }}
		plugins.Filter.Enabled = append(plugins.Filter.Enabled, configv1.Plugin{Name: f.name})
	}
	for _, g := range gates {
		r[g.name] = schedcore.PluginSpec{Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) { return g, nil }}
		plugins.PreEnqueue.Enabled = append(plugins.PreEnqueue.Enabled, configv1.Plugin{Name: g.name})
	}
	name := v1.DefaultSchedulerName
	fw, err := schedruntime.NewFramework(context.Background(), r, &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: plugins}, schedcore.NewHandle(nil, 1), schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fw
}

// newQueue returns a queue over one profile and its fake clock.
func newQueue(t *testing.T, fw *schedruntime.Framework, opts ...Option) (*PriorityQueue, *clocktesting.FakeClock) {
	t.Helper()
	clk := clocktesting.NewFakeClock(epoch)
	q := New(less, map[string]*schedruntime.Framework{v1.DefaultSchedulerName: fw}, append([]Option{WithClock(clk)}, opts...)...)
	t.Cleanup(q.Close)
	return q, clk
}

// defaultFilters are two filter plugins: A wakes on Node/Add for nodes
// labelled fits=true and on Node/UpdateNodeLabel; B wakes on any
// AssignedPod/Delete.
func defaultFilters() []*filterPlugin {
	return []*filterPlugin{
		{name: "A", events: []schedcore.ClusterEventWithHint{withHint(nodeAdd, queueIfFits), withHint(nodeLabel, queueAlways)}},
		{name: "B", events: []schedcore.ClusterEventWithHint{withHint(assignedDelete, nil)}},
	}
}

func mustPop(t *testing.T, q *PriorityQueue) *schedcore.QueuedPodInfo {
	t.Helper()
	qpi, ok := q.TryPop(logger)
	if !ok {
		t.Fatalf("TryPop: nothing to pop; %v", q.Lengths())
	}
	return qpi
}

// fail pops the pod (which must be next) and returns it with the given
// rejectors, as the scheduler's failure handler does before requeueing.
func popAndReject(t *testing.T, q *PriorityQueue, name string, unschedulable, pending []string) *schedcore.QueuedPodInfo {
	t.Helper()
	qpi := mustPop(t, q)
	if qpi.Pod.Name != name {
		t.Fatalf("popped %s, want %s", qpi.Pod.Name, name)
	}
	c := *qpi
	c.UnschedulablePlugins = sets.New(unschedulable...)
	c.PendingPlugins = sets.New(pending...)
	return &c
}

// where tells which sub-queue holds the pod.
func where(q *PriorityQueue, pod *v1.Pod) string {
	q.lock.RLock()
	defer q.lock.RUnlock()
	switch {
	case q.activeQ.has(pod):
		return QueueActive
	case q.backoffQ.has(pod):
		return QueueBackoff
	case q.unschedulable.get(pod) != nil:
		if q.unschedulable.get(pod).Gated() {
			return QueueGated
		}
		return QueueUnschedulable
	}
	for _, p := range q.InFlightPods() {
		if p.UID == pod.UID {
			return "inflight"
		}
	}
	return "none"
}

func names(pods []*v1.Pod) []string {
	out := make([]string, 0, len(pods))
	for _, p := range pods {
		out = append(out, p.Name)
	}
	return out
}

func pod(name string) *schedtest.PodWrapper { return schedtest.MakePod(name) }

// recordingMetrics keeps the gauges and counters the queue reports.
type recordingMetrics struct {
	NopMetrics
	mu       sync.Mutex
	pending  map[string]int
	incoming map[[2]string]int
	reasons  map[string]int
	inflight map[string]int
}

func newRecordingMetrics() *recordingMetrics {
	return &recordingMetrics{pending: map[string]int{}, incoming: map[[2]string]int{}, reasons: map[string]int{}, inflight: map[string]int{}}
}

func (m *recordingMetrics) PendingPods(queue string, d int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending[queue] += d
}
func (m *recordingMetrics) IncomingPods(queue, event string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.incoming[[2]string{queue, event}] += n
}
func (m *recordingMetrics) UnschedulableReason(plugin, _ string, d int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.reasons[plugin] += d
}
func (m *recordingMetrics) InFlightEvents(event string, d int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inflight[event] += d
}
