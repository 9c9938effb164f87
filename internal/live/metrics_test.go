package live

import (
	"context"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// family is what the test checks of one metric family.
type family struct {
	Type   string
	Labels string // sorted label names, comma-separated
	// Buckets: the first and last upper bounds and their count.
	FirstBucket, LastBucket float64
	Buckets                 int
}

func TestMetricsHaveKubeSchedulersNamesTypesLabelsAndBuckets(t *testing.T) {
	m := NewMetrics()
	m.ScheduleAttempt("kubectl-sched", "scheduled", time.Millisecond)
	m.AlgorithmDuration(time.Millisecond)
	m.PodScheduled("kubectl-sched", 2, time.Second)
	m.ExtensionPoint("kubectl-sched", schedruntime.ExtFilter, schedcore.Success, time.Millisecond)
	m.Plugin("NodeResourcesFit", schedruntime.ExtFilter, schedcore.Unschedulable, time.Microsecond)
	m.IncomingPods(queue.QueueActive, "PodAdd", 1)
	m.UnschedulableReason("NodeResourcesFit", "kubectl-sched", 1)
	m.InFlightEvents(queue.EventPodPopped, 1)
	m.QueueingHint("NodeResourcesFit", "NodeAdd", queue.HintResultQueue, time.Microsecond)
	m.EventHandled("NodeAdd", time.Microsecond)
	m.ScheduledAfterFlush()

	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]family{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "scheduler_") {
			continue
		}
		f := family{Type: mf.GetType().String()}
		if ms := mf.GetMetric(); len(ms) > 0 {
			var names []string
			for _, l := range ms[0].GetLabel() {
				names = append(names, l.GetName())
			}
			sort.Strings(names)
			f.Labels = strings.Join(names, ",")
			if h := ms[0].GetHistogram(); h != nil {
				b := h.GetBucket()
				f.Buckets, f.FirstBucket, f.LastBucket = len(b), b[0].GetUpperBound(), b[len(b)-1].GetUpperBound()
			}
		}
		got[mf.GetName()] = f
		if !strings.HasPrefix(mf.GetHelp(), "[STABLE] ") && !strings.HasPrefix(mf.GetHelp(), "[BETA] ") && !strings.HasPrefix(mf.GetHelp(), "[ALPHA] ") {
			t.Errorf("%s: help %q lacks the stability level", mf.GetName(), mf.GetHelp())
		}
	}
	h := dto.MetricType_HISTOGRAM.String()
	c := dto.MetricType_COUNTER.String()
	g := dto.MetricType_GAUGE.String()
	// exp(a, f, n) buckets run from a to a*f^(n-1).
	want := map[string]family{
		"scheduler_schedule_attempts_total":                    {Type: c, Labels: "profile,result"},
		"scheduler_scheduling_attempt_duration_seconds":        {Type: h, Labels: "profile,result", FirstBucket: 0.001, LastBucket: 16.384, Buckets: 15},
		"scheduler_scheduling_algorithm_duration_seconds":      {Type: h, FirstBucket: 0.001, LastBucket: 16.384, Buckets: 15},
		"scheduler_pod_scheduling_sli_duration_seconds":        {Type: h, Labels: "attempts", FirstBucket: 0.01, LastBucket: 5242.88, Buckets: 20},
		"scheduler_pod_scheduling_attempts":                    {Type: h, FirstBucket: 1, LastBucket: 16, Buckets: 5},
		"scheduler_framework_extension_point_duration_seconds": {Type: h, Labels: "extension_point,profile,status", FirstBucket: 0.0001, LastBucket: 0.2048, Buckets: 12},
		"scheduler_plugin_execution_duration_seconds":          {Type: h, Labels: "extension_point,plugin,status", FirstBucket: 0.00001, LastBucket: 0.022168378200531005, Buckets: 20},
		"scheduler_queueing_hint_execution_duration_seconds":   {Type: h, Labels: "event,hint,plugin", FirstBucket: 0.00001, LastBucket: 0.022168378200531005, Buckets: 20},
		"scheduler_event_handling_duration_seconds":            {Type: h, Labels: "event", FirstBucket: 0.0001, LastBucket: 0.2048, Buckets: 12},
		"scheduler_queue_incoming_pods_total":                  {Type: c, Labels: "event,queue"},
		"scheduler_pending_pods":                               {Type: g, Labels: "queue"},
		"scheduler_unschedulable_pods":                         {Type: g, Labels: "plugin,profile"},
		"scheduler_inflight_events":                            {Type: g, Labels: "event"},
		"scheduler_preemption_attempts_total":                  {Type: c},
		"scheduler_preemption_victims":                         {Type: h, FirstBucket: 1, LastBucket: 64, Buckets: 7},
		"scheduler_pod_scheduled_after_flush_total":            {Type: c},
	}
	opt := cmp.Comparer(func(a, b float64) bool { return a == b || (a-b)/b < 1e-9 && (b-a)/b < 1e-9 })
	if diff := cmp.Diff(want, got, opt); diff != "" {
		t.Errorf("metric families (-want +got):\n%s", diff)
	}
}

func TestPendingPodsAreExportedAtZeroForEveryQueue(t *testing.T) {
	mfs, err := NewMetrics().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var queues []string
	for _, mf := range mfs {
		if mf.GetName() == "scheduler_pending_pods" {
			for _, m := range mf.GetMetric() {
				if m.GetGauge().GetValue() != 0 {
					t.Errorf("pending_pods %v = %v", m.GetLabel(), m.GetGauge().GetValue())
				}
				queues = append(queues, m.GetLabel()[0].GetValue())
			}
		}
	}
	if diff := cmp.Diff([]string{"active", "backoff", "gated", "unschedulable"}, queues); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
}

func TestAttemptsLabelIsCappedAt15(t *testing.T) {
	for attempts, want := range map[int]string{1: "1", 14: "14", 15: "15+", 40: "15+"} {
		if got := AttemptsLabel(attempts); got != want {
			t.Errorf("AttemptsLabel(%d) = %q, want %q", attempts, got, want)
		}
	}
}

// The kept children are found by every label: a key missing one would put
// the observations of different series into one.
func TestMetricsKeepEachSeriesApart(t *testing.T) {
	m := NewMetrics()
	for range 2 {
		m.Plugin("NodeResourcesFit", schedruntime.ExtFilter, schedcore.Success, time.Microsecond)
	}
	m.Plugin("NodeResourcesFit", schedruntime.ExtFilter, schedcore.Unschedulable, time.Microsecond)
	m.Plugin("NodeResourcesFit", schedruntime.ExtScore, schedcore.Success, time.Microsecond)
	m.Plugin("TaintToleration", schedruntime.ExtFilter, schedcore.Success, time.Microsecond)
	for range 3 {
		m.ExtensionPoint("a", schedruntime.ExtFilter, schedcore.Success, time.Millisecond)
	}
	m.ExtensionPoint("b", schedruntime.ExtFilter, schedcore.Success, time.Millisecond)
	m.ExtensionPoint("a", schedruntime.ExtFilter, schedcore.Error, time.Millisecond)
	m.ExtensionPoint("a", schedruntime.ExtScore, schedcore.Success, time.Millisecond)
	m.PreEnqueue("a", schedcore.UnschedulableAndUnresolvable, time.Millisecond)

	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, mf := range mfs {
		name := strings.TrimPrefix(mf.GetName(), "scheduler_")
		if name != "plugin_execution_duration_seconds" && name != "framework_extension_point_duration_seconds" {
			continue
		}
		for _, s := range mf.GetMetric() {
			var kv []string
			for _, l := range s.GetLabel() {
				kv = append(kv, l.GetName()+"="+l.GetValue())
			}
			got[name+"{"+strings.Join(kv, ",")+"}"] = s.GetHistogram().GetSampleCount()
		}
	}
	want := map[string]uint64{
		"plugin_execution_duration_seconds{extension_point=Filter,plugin=NodeResourcesFit,status=Success}":       2,
		"plugin_execution_duration_seconds{extension_point=Filter,plugin=NodeResourcesFit,status=Unschedulable}": 1,
		"plugin_execution_duration_seconds{extension_point=Score,plugin=NodeResourcesFit,status=Success}":        1,
		"plugin_execution_duration_seconds{extension_point=Filter,plugin=TaintToleration,status=Success}":        1,
		"framework_extension_point_duration_seconds{extension_point=Filter,profile=a,status=Success}":            3,
		"framework_extension_point_duration_seconds{extension_point=Filter,profile=b,status=Success}":            1,
		"framework_extension_point_duration_seconds{extension_point=Filter,profile=a,status=Error}":              1,
		"framework_extension_point_duration_seconds{extension_point=Score,profile=a,status=Success}":             1,
		"framework_extension_point_duration_seconds{extension_point=PreEnqueue,profile=a,status=Success}":        1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("series counts (-want +got):\n%s", diff)
	}
}

// sampleCount sums a histogram family's observations.
func sampleCount(t *testing.T, m *Metrics, name string) uint64 {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, s := range mf.GetMetric() {
				n += s.GetHistogram().GetSampleCount()
			}
		}
	}
	return n
}

// As kube-scheduler's asynchronous recorder (a channel of 1000 drained
// once a second, an observation dropped when it is full), plugin and
// queueing hint observations beyond 1000 a second are dropped, and the
// framework is told not to time cycles meanwhile; the next second keeps
// 1000 more.
func TestPluginObservationsAreKeptAsKubesAsyncRecorder(t *testing.T) {
	m := NewMetrics()
	if !m.AcceptsPluginMetrics() {
		t.Fatal("a new recorder does not accept plugin observations")
	}
	for range asyncBufferSize - 1 {
		m.Plugin("NodeResourcesFit", schedruntime.ExtFilter, schedcore.Success, time.Microsecond)
	}
	m.QueueingHint("NodeResourcesFit", "NodeAdd", queue.HintResultQueue, time.Microsecond)
	if m.AcceptsPluginMetrics() {
		t.Error("the recorder still accepts plugin observations after 1000")
	}
	m.Plugin("NodeResourcesFit", schedruntime.ExtFilter, schedcore.Success, time.Microsecond)
	m.QueueingHint("NodeResourcesFit", "NodeAdd", queue.HintResultQueue, time.Microsecond)
	if n := sampleCount(t, m, "scheduler_plugin_execution_duration_seconds"); n != asyncBufferSize-1 {
		t.Errorf("%d plugin observations kept, want %d", n, asyncBufferSize-1)
	}
	if n := sampleCount(t, m, "scheduler_queueing_hint_execution_duration_seconds"); n != 1 {
		t.Errorf("%d queueing hint observations kept, want 1", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go m.refillEvery(ctx, time.Millisecond)
	deadline := time.Now().Add(10 * time.Second)
	for !m.AcceptsPluginMetrics() {
		if time.Now().After(deadline) {
			t.Fatal("the budget was not refilled")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	m.Plugin("NodeResourcesFit", schedruntime.ExtFilter, schedcore.Success, time.Microsecond)
	if n := sampleCount(t, m, "scheduler_plugin_execution_duration_seconds"); n != asyncBufferSize {
		t.Errorf("%d plugin observations kept after the refill, want %d", n, asyncBufferSize)
	}
}

// TestWorkloadMetrics: the pod-group cycle's metrics exist only under
// their gates, as kube's Register, and count what they are given.
func TestWorkloadMetrics(t *testing.T) {
	gw := schedcore.DefaultFeatures
	gw.GenericWorkload = true
	tas := gw
	tas.TopologyAwareWorkloadScheduling = true
	podGroup := []string{"scheduler_podgroup_schedule_attempts_total", "scheduler_podgroup_scheduling_attempt_duration_seconds", "scheduler_podgroup_scheduling_algorithm_duration_seconds",
		"scheduler_preemption_workload_disruptions", "scheduler_workload_preemption_attempts_total", "scheduler_workload_preemption_victims"}
	placement := []string{"scheduler_generated_placements_total", "scheduler_placement_evaluation_duration_seconds", "scheduler_placement_evaluations_total"}
	for _, tc := range []struct {
		name string
		f    schedcore.Features
		want []string
	}{
		{"gates off", schedcore.DefaultFeatures, nil},
		{"GenericWorkload", gw, podGroup},
		{"and TopologyAwareWorkloadScheduling", tas, append(append([]string(nil), podGroup...), placement...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMetrics()
			m.RegisterWorkloadMetrics(tc.f)
			m.RegisterWorkloadMetrics(tc.f) // twice is once
			m.PodGroupAttempt("default-scheduler", "scheduled", time.Millisecond)
			m.PodGroupAlgorithmDuration(time.Millisecond)
			m.GeneratedPlacements("default-scheduler", 3)
			m.PlacementEvaluation("default-scheduler", "feasible", time.Millisecond)
			m.WorkloadPreemptionAttempt("Success")
			m.WorkloadPreemptionVictims(3)
			m.WorkloadDisruptions("podgroup", 1)
			families, err := m.Registry.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range families {
				if n := f.GetName(); strings.Contains(n, "podgroup_") || strings.Contains(n, "placement") || strings.Contains(n, "workload") {
					got = append(got, n)
					if n == "scheduler_generated_placements_total" && f.GetMetric()[0].GetCounter().GetValue() != 3 {
						t.Errorf("%s = %v, want 3", n, f.GetMetric()[0].GetCounter().GetValue())
					}
				}
			}
			sort.Strings(got)
			want := append([]string(nil), tc.want...)
			sort.Strings(want)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("metrics %v, want %v", got, want)
			}
		})
	}
}
