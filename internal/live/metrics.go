package live

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// Stability levels, as component-base prefixes them to the help text, so
// that `# HELP` lines read as kube-scheduler's.
const (
	stable = "[STABLE] "
	beta   = "[BETA] "
	alpha  = "[ALPHA] "
)

const subsystem = "scheduler"

// Metrics are kube-scheduler v1.37's metrics (pkg/scheduler/metrics): the
// same names, types, labels and buckets, so that dashboards and alerts
// written for kube-scheduler work unchanged. It implements the engine's
// schedruntime.MetricsRecorder and the queue's queue.Metrics.
type Metrics struct {
	// Registry holds every metric below plus the Go and process collectors.
	Registry *prometheus.Registry

	scheduleAttempts        *prometheus.CounterVec
	schedulingLatency       *prometheus.HistogramVec
	algorithmLatency        prometheus.Histogram
	eventHandlingLatency    *prometheus.HistogramVec
	preemptionVictims       prometheus.Histogram
	preemptionAttempts      prometheus.Counter
	pendingPods             *prometheus.GaugeVec
	podSchedulingSLI        *prometheus.HistogramVec
	podSchedulingAttempts   prometheus.Histogram
	podScheduledAfterFlush  prometheus.Counter
	extensionPointDuration  *prometheus.HistogramVec
	pluginExecutionDuration *prometheus.HistogramVec
	// extensionPoints and plugins keep the two vectors' children: the
	// sampled cycles observe every plugin's Filter on every node, and
	// finding a child by its label values (validated and hashed on each
	// call) took 12% of `run`'s CPU at 2000 nodes.
	extensionPoints, plugins *observers
	queueingHintDuration     *prometheus.HistogramVec
	// async bounds the plugin and queueing hint observations kept, as
	// kube-scheduler's asynchronous recorder does (see asyncBudget).
	async                asyncBudget
	queueIncomingPods    *prometheus.CounterVec
	inFlightEvents       *prometheus.GaugeVec
	unschedulableReasons *prometheus.GaugeVec

	// The pod-group cycle's, registered with the gates
	// (RegisterWorkloadMetrics); nil until then.
	podGroupAttempts, placementEvaluations, generatedPlacements *prometheus.CounterVec
	podGroupLatency, placementLatency                           *prometheus.HistogramVec
	podGroupAlgorithmLatency                                    prometheus.Histogram
	// Workload-aware preemption's, registered with the podgroup_* ones.
	workloadPreemptionAttempts  *prometheus.CounterVec
	workloadPreemptionVictims   prometheus.Histogram
	workloadPreemptionDisrupted *prometheus.HistogramVec
}

var (
	_ schedruntime.MetricsRecorder   = (*Metrics)(nil)
	_ schedruntime.PluginMetricsGate = (*Metrics)(nil)
	_ queue.Metrics                  = (*Metrics)(nil)

	_ schedruntime.PodGroupMetricsRecorder = (*Metrics)(nil)
)

// RegisterWorkloadMetrics registers the pod-group cycle's metrics as
// kube-scheduler v1.37 does: the podgroup_* ones with GenericWorkload,
// the placement ones with TopologyAwareWorkloadScheduling too.
func (m *Metrics) RegisterWorkloadMetrics(f schedcore.Features) {
	if !f.GenericWorkload || m.podGroupAttempts != nil {
		return
	}
	m.podGroupAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "podgroup_schedule_attempts_total",
		Help: alpha + "Number of attempts to schedule pod group, by the result. 'unschedulable' means a pod group could not be scheduled, while 'error' means an internal scheduler problem.",
	}, []string{"result", "profile"})
	m.podGroupLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "podgroup_scheduling_attempt_duration_seconds",
		Help:    alpha + "Pod group scheduling attempt latency in seconds",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"result", "profile"})
	m.podGroupAlgorithmLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "podgroup_scheduling_algorithm_duration_seconds",
		Help:    alpha + "Pod group scheduling algorithm latency in seconds",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	})
	m.workloadPreemptionAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "workload_preemption_attempts_total",
		Help: alpha + "Total preemption attempts initiated by workload (including pod groups) in the cluster till now.",
	}, []string{"result"})
	m.workloadPreemptionVictims = prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "workload_preemption_victims",
		Help:    alpha + "Number of pod preemption victims caused by workload preemption.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 11),
	})
	m.workloadPreemptionDisrupted = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "preemption_workload_disruptions",
		Help:    alpha + "Number of workload preemption units being preempted. A single preemption unit can be all pods in a pod group (in case of DisruptionMode=all), or a single pod (in case of DisruptionMode=single).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 11),
	}, []string{"preemptor"})
	m.Registry.MustRegister(m.podGroupAttempts, m.podGroupLatency, m.podGroupAlgorithmLatency,
		m.workloadPreemptionAttempts, m.workloadPreemptionVictims, m.workloadPreemptionDisrupted)
	if !f.TopologyAwareWorkloadScheduling {
		return
	}
	m.generatedPlacements = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "generated_placements_total",
		Help: alpha + "Number of candidate placements generated when scheduling pod groups.",
	}, []string{"profile"})
	m.placementEvaluations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "placement_evaluations_total",
		Help: alpha + "Number of candidate placements evaluated when scheduling pod groups, by result. 'feasible' means the pod group fit into the placement, while 'infeasible' means it did not.",
	}, []string{"result", "profile"})
	m.placementLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "placement_evaluation_duration_seconds",
		Help:    alpha + "Latency in seconds of evaluating a single candidate placement when scheduling pod groups, by result. 'feasible' means the pod group fit into the placement, while 'infeasible' means it did not.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"result", "profile"})
	m.Registry.MustRegister(m.generatedPlacements, m.placementEvaluations, m.placementLatency)
}

// PodGroupAttempt implements schedruntime.PodGroupMetricsRecorder.
func (m *Metrics) PodGroupAttempt(profile, result string, d time.Duration) {
	if m.podGroupAttempts == nil {
		return
	}
	m.podGroupAttempts.WithLabelValues(result, profile).Inc()
	m.podGroupLatency.WithLabelValues(result, profile).Observe(d.Seconds())
}

// PodGroupAlgorithmDuration implements schedruntime.PodGroupMetricsRecorder.
func (m *Metrics) PodGroupAlgorithmDuration(d time.Duration) {
	if m.podGroupAlgorithmLatency != nil {
		m.podGroupAlgorithmLatency.Observe(d.Seconds())
	}
}

// GeneratedPlacements implements schedruntime.PodGroupMetricsRecorder.
func (m *Metrics) GeneratedPlacements(profile string, n int) {
	if m.generatedPlacements != nil {
		m.generatedPlacements.WithLabelValues(profile).Add(float64(n))
	}
}

// PlacementEvaluation implements schedruntime.PodGroupMetricsRecorder.
func (m *Metrics) PlacementEvaluation(profile, result string, d time.Duration) {
	if m.placementEvaluations == nil {
		return
	}
	m.placementEvaluations.WithLabelValues(result, profile).Inc()
	m.placementLatency.WithLabelValues(result, profile).Observe(d.Seconds())
}

// NewMetrics creates and registers the metrics on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{Registry: prometheus.NewRegistry()}
	m.async.left.Store(asyncBufferSize)
	m.scheduleAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "schedule_attempts_total",
		Help: stable + "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
	}, []string{"result", "profile"})
	m.schedulingLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "scheduling_attempt_duration_seconds",
		Help:    stable + "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	}, []string{"result", "profile"})
	m.algorithmLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "scheduling_algorithm_duration_seconds",
		Help:    beta + "Scheduling algorithm latency in seconds",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 15),
	})
	m.eventHandlingLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "event_handling_duration_seconds",
		Help:    alpha + "Event handling latency in seconds.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12),
	}, []string{"event"})
	m.preemptionVictims = prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "preemption_victims",
		Help:    stable + "Number of selected preemption victims for preemption initiated by a single pod",
		Buckets: prometheus.ExponentialBuckets(1, 2, 7),
	})
	m.preemptionAttempts = prometheus.NewCounter(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "preemption_attempts_total",
		Help: stable + "Total preemption attempts in the cluster till now",
	})
	m.pendingPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem, Name: "pending_pods",
		Help: stable + "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated; 'incomplete' means number of pods in incompletePodGroupPods; 'pending' means number of pods in pendingPodGroupPods.",
	}, []string{"queue"})
	m.podSchedulingSLI = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "pod_scheduling_sli_duration_seconds",
		Help:    beta + "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and might involve multiple scheduling attempts.",
		Buckets: prometheus.ExponentialBuckets(0.01, 2, 20),
	}, []string{"attempts"})
	m.podSchedulingAttempts = prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "pod_scheduling_attempts",
		Help:    stable + "Number of attempts to successfully schedule a pod.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 5),
	})
	m.podScheduledAfterFlush = prometheus.NewCounter(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "pod_scheduled_after_flush_total",
		Help: alpha + "Number of pods that were successfully scheduled after being flushed from unschedulableEntities due to timeout. This metric helps detect potential queueing hint misconfigurations or event handling issues.",
	})
	m.extensionPointDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "framework_extension_point_duration_seconds",
		Help:    stable + "Latency for running all plugins of a specific extension point.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 12),
	}, []string{"extension_point", "status", "profile"})
	m.pluginExecutionDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "plugin_execution_duration_seconds",
		Help:    beta + "Duration for running a plugin at a specific extension point.",
		Buckets: prometheus.ExponentialBuckets(0.00001, 1.5, 20),
	}, []string{"plugin", "extension_point", "status"})
	m.queueingHintDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Subsystem: subsystem, Name: "queueing_hint_execution_duration_seconds",
		Help:    alpha + "Duration for running a queueing hint function of a plugin.",
		Buckets: prometheus.ExponentialBuckets(0.00001, 1.5, 20),
	}, []string{"plugin", "event", "hint"})
	m.queueIncomingPods = prometheus.NewCounterVec(prometheus.CounterOpts{
		Subsystem: subsystem, Name: "queue_incoming_pods_total",
		Help: stable + "Number of pods added to scheduling queues by event and queue type.",
	}, []string{"queue", "event"})
	m.inFlightEvents = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem, Name: "inflight_events",
		Help: alpha + "Number of events currently tracked in the scheduling queue.",
	}, []string{"event"})
	m.unschedulableReasons = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Subsystem: subsystem, Name: "unschedulable_pods",
		Help: beta + "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for all plugins that caused it to not schedule and so this metric have meaning only when broken down by plugin.",
	}, []string{"plugin", "profile"})

	// extension_point, status, profile; plugin, extension_point, status.
	m.extensionPoints = &observers{vec: m.extensionPointDuration, labels: func(point, profile string, code schedcore.Code) []string {
		return []string{point, code.String(), profile}
	}}
	m.plugins = &observers{vec: m.pluginExecutionDuration, labels: func(plugin, point string, code schedcore.Code) []string {
		return []string{plugin, point, code.String()}
	}}
	m.Registry.MustRegister(
		m.scheduleAttempts, m.schedulingLatency, m.algorithmLatency, m.eventHandlingLatency,
		m.preemptionVictims, m.preemptionAttempts, m.pendingPods, m.podSchedulingSLI,
		m.podSchedulingAttempts, m.podScheduledAfterFlush, m.extensionPointDuration,
		m.pluginExecutionDuration, m.queueingHintDuration, m.queueIncomingPods,
		m.inFlightEvents, m.unschedulableReasons,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// kube-scheduler's queue creates these four children when it starts,
	// so they are exported at zero before any pod arrives.
	for _, q := range []string{queue.QueueActive, queue.QueueBackoff, queue.QueueUnschedulable, queue.QueueGated} {
		m.pendingPods.WithLabelValues(q)
	}
	return m
}

// ExtensionPoint implements schedruntime.MetricsRecorder.
func (m *Metrics) ExtensionPoint(profile, point string, code schedcore.Code, d time.Duration) {
	m.extensionPoints.get(point, profile, code).Observe(d.Seconds())
}

// Plugin implements schedruntime.MetricsRecorder. As kube-scheduler's, the
// observation is dropped when this second's asyncBufferSize are taken.
func (m *Metrics) Plugin(plugin, point string, code schedcore.Code, d time.Duration) {
	if m.async.take() {
		m.plugins.get(plugin, point, code).Observe(d.Seconds())
	}
}

// AcceptsPluginMetrics implements schedruntime.PluginMetricsGate: a cycle
// drawn for plugin metrics times its plugins only while observations are
// still kept this second.
func (m *Metrics) AcceptsPluginMetrics() bool { return m.async.left.Load() > 0 }

// kube-scheduler v1.37 observes plugin_execution_duration_seconds and
// queueing_hint_execution_duration_seconds (and the Sign extension point)
// through its MetricAsyncRecorder: a channel of 1000 observations that a
// goroutine drains into the histograms once a second; an observation that
// finds the channel full is dropped. The sampled cycles (10%) time every
// plugin on every node, thousands of observations each, so kube keeps
// about 1000 a second and drops the rest. asyncBudget keeps the same ones
// (the first 1000 after each refill, once a second) and drops the others
// before they cost anything; and since the framework asks before timing a
// cycle (AcceptsPluginMetrics), the cycles whose observations would all be
// dropped run untimed, with their memos.
const (
	asyncBufferSize    = 1000
	asyncFlushInterval = time.Second
)

// asyncBudget counts the observations still kept until the next refill.
type asyncBudget struct{ left atomic.Int64 }

// take reports whether one more observation is kept.
func (b *asyncBudget) take() bool { return b.left.Add(-1) >= 0 }

// refillEvery gives the budget back its asyncBufferSize every interval
// until ctx ends (kube's recorder drains its channel as often).
func (m *Metrics) refillEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m.async.left.Store(asyncBufferSize)
		}
	}
}

// observers keeps a histogram vector's children by two label values and a
// status code. The vector's children are never deleted, so a kept child
// stays the one the registry exports.
type observers struct {
	vec *prometheus.HistogramVec
	// labels orders the values as vec's labels.
	labels func(a, b string, code schedcore.Code) []string
	m      sync.Map // observerKey -> prometheus.Observer
}

type observerKey struct {
	a, b string
	code schedcore.Code
}

func (o *observers) get(a, b string, code schedcore.Code) prometheus.Observer {
	k := observerKey{a, b, code}
	if v, ok := o.m.Load(k); ok {
		return v.(prometheus.Observer)
	}
	v, _ := o.m.LoadOrStore(k, o.vec.WithLabelValues(o.labels(a, b, code)...))
	return v.(prometheus.Observer)
}

// ScheduleAttempt implements schedruntime.MetricsRecorder.
func (m *Metrics) ScheduleAttempt(profile, result string, d time.Duration) {
	m.schedulingLatency.WithLabelValues(result, profile).Observe(d.Seconds())
	m.scheduleAttempts.WithLabelValues(result, profile).Inc()
}

// WorkloadPreemptionAttempt counts a DefaultPreemption PodGroupPostFilter
// run by its status code (workload_preemption_attempts_total).
func (m *Metrics) WorkloadPreemptionAttempt(result string) {
	if m.workloadPreemptionAttempts != nil {
		m.workloadPreemptionAttempts.WithLabelValues(result).Inc()
	}
}

// WorkloadPreemptionVictims observes the victims of one pod-group
// preemption (workload_preemption_victims).
func (m *Metrics) WorkloadPreemptionVictims(n int) {
	if m.workloadPreemptionVictims != nil {
		m.workloadPreemptionVictims.Observe(float64(n))
	}
}

// WorkloadDisruptions observes the pod-group units among a preemption's
// victims, by preemptor type (preemption_workload_disruptions).
func (m *Metrics) WorkloadDisruptions(preemptor string, n int) {
	if m.workloadPreemptionDisrupted != nil {
		m.workloadPreemptionDisrupted.WithLabelValues(preemptor).Observe(float64(n))
	}
}

// PreemptionAttempt counts a DefaultPreemption PostFilter run.
func (m *Metrics) PreemptionAttempt() { m.preemptionAttempts.Inc() }

// PreemptionVictims observes the victims of one preemption.
func (m *Metrics) PreemptionVictims(n int) { m.preemptionVictims.Observe(float64(n)) }

// AlgorithmDuration implements schedruntime.MetricsRecorder.
func (m *Metrics) AlgorithmDuration(d time.Duration) { m.algorithmLatency.Observe(d.Seconds()) }

// PodScheduled implements schedruntime.MetricsRecorder.
func (m *Metrics) PodScheduled(_ string, attempts int, sinceFirstPop time.Duration) {
	m.podSchedulingAttempts.Observe(float64(attempts))
	m.podSchedulingSLI.WithLabelValues(AttemptsLabel(attempts)).Observe(sinceFirstPop.Seconds())
}

// Unschedulable implements schedruntime.MetricsRecorder. The queue keeps
// scheduler_unschedulable_pods (UnschedulableReason) as pods enter and leave
// it, as kube-scheduler's does, so there is nothing to do here.
func (m *Metrics) Unschedulable(string, []string) {}

// ScheduledAfterFlush counts a pod bound after the unschedulable pool's
// periodic flush moved it (scheduler_pod_scheduled_after_flush_total).
func (m *Metrics) ScheduledAfterFlush() { m.podScheduledAfterFlush.Inc() }

// EventHandled observes how long handling an informer event took
// (scheduler_event_handling_duration_seconds{event}).
func (m *Metrics) EventHandled(event string, d time.Duration) {
	m.eventHandlingLatency.WithLabelValues(event).Observe(d.Seconds())
}

// IncomingPods implements queue.Metrics.
func (m *Metrics) IncomingPods(q, event string, n int) {
	m.queueIncomingPods.WithLabelValues(q, event).Add(float64(n))
}

// PendingPods implements queue.Metrics.
func (m *Metrics) PendingPods(q string, delta int) {
	m.pendingPods.WithLabelValues(q).Add(float64(delta))
}

// UnschedulableReason implements queue.Metrics.
func (m *Metrics) UnschedulableReason(plugin, profile string, delta int) {
	m.unschedulableReasons.WithLabelValues(plugin, profile).Add(float64(delta))
}

// InFlightEvents implements queue.Metrics.
func (m *Metrics) InFlightEvents(event string, delta int) {
	m.inFlightEvents.WithLabelValues(event).Add(float64(delta))
}

// QueueingHint implements queue.Metrics.
func (m *Metrics) QueueingHint(plugin, event, hint string, d time.Duration) {
	if m.async.take() {
		m.queueingHintDuration.WithLabelValues(plugin, event, hint).Observe(d.Seconds())
	}
}

// PreEnqueue implements queue.Metrics. kube-scheduler v1.37 labels every
// PreEnqueue observation status="Success", whatever the plugins returned
// (its deferred observer reads a status variable that the loop shadows);
// the label is kept the same here so that queries give the same series.
func (m *Metrics) PreEnqueue(profile string, _ schedcore.Code, d time.Duration) {
	m.extensionPoints.get("PreEnqueue", profile, schedcore.Success).Observe(d.Seconds())
}

// AttemptsLabel is the attempts label of
// scheduler_pod_scheduling_sli_duration_seconds: the count, capped at "15+"
// to bound the cardinality, as kube-scheduler's getAttemptsLabel.
func AttemptsLabel(attempts int) string {
	if attempts >= 15 {
		return "15+"
	}
	return strconv.Itoa(attempts)
}
