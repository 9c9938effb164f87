package runtime

import (
	"time"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Extension point names as kube labels them in
// scheduler_framework_extension_point_duration_seconds.
const (
	ExtPreFilter  = "PreFilter"
	ExtFilter     = "Filter"
	ExtPostFilter = "PostFilter"
	ExtPreScore   = "PreScore"
	ExtScore      = "Score"
	ExtReserve    = "Reserve"
	ExtUnreserve  = "Unreserve"
	ExtPermit     = "Permit"
	ExtPreBind    = "PreBind"
	ExtBind       = "Bind"
	ExtPostBind   = "PostBind"
)

// MetricsRecorder receives what the framework and scheduler measure. The
// engine imports no metrics library: internal/ adapts this to Prometheus with
// kube-scheduler's metric names. Every method must be cheap and safe for
// concurrent use; a nil recorder costs nothing.
type MetricsRecorder interface {
	// ExtensionPoint observes one extension point run
	// (framework_extension_point_duration_seconds).
	ExtensionPoint(profile, point string, code schedcore.Code, d time.Duration)
	// Plugin observes one plugin call in sampled cycles
	// (plugin_execution_duration_seconds).
	Plugin(plugin, point string, code schedcore.Code, d time.Duration)
	// ScheduleAttempt observes one scheduling attempt: result is
	// "scheduled", "unschedulable" or "error" (schedule_attempts_total,
	// scheduling_attempt_duration_seconds).
	ScheduleAttempt(profile, result string, d time.Duration)
	// AlgorithmDuration observes the filter+score time
	// (scheduling_algorithm_duration_seconds).
	AlgorithmDuration(d time.Duration)
	// PodScheduled observes a pod bound: attempts and the time from its
	// first pop to bound (pod_scheduling_sli_duration_seconds,
	// pod_scheduling_attempts).
	PodScheduled(profile string, attempts int, sinceFirstPop time.Duration)
	// UnschedulablePlugins records, for a failed attempt, the rejecting
	// plugins (unschedulable_pods gauge is kept by the driver).
	Unschedulable(profile string, plugins []string)
}

// PluginMetricsGate is an optional interface of a MetricsRecorder that
// keeps only so many plugin observations (kube-scheduler's asynchronous
// recorder keeps at most 1000 a second and drops the rest). A cycle drawn
// for plugin metrics times its plugins only if AcceptsPluginMetrics says
// observations are kept: a timed cycle runs without its memos.
type PluginMetricsGate interface {
	AcceptsPluginMetrics() bool
}

// recordsPluginMetrics reports whether a cycle drawn for plugin metrics
// is timed: there is a recorder and it keeps what it is given.
func recordsPluginMetrics(r MetricsRecorder) bool {
	if r == nil {
		return false
	}
	g, ok := r.(PluginMetricsGate)
	return !ok || g.AcceptsPluginMetrics()
}

func (f *Framework) observe(point string, s *schedcore.Status, start time.Time) {
	if f.recorder != nil {
		f.recorder.ExtensionPoint(f.profileName, point, s.Code(), time.Since(start))
	}
}
