package schedcore

import "time"

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
	ExtensionPoint(profile, point string, code Code, d time.Duration)
	// Plugin observes one plugin call in sampled cycles
	// (plugin_execution_duration_seconds).
	Plugin(plugin, point string, code Code, d time.Duration)
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

func (f *Framework) observe(point string, s *Status, start time.Time) {
	if f.recorder != nil {
		f.recorder.ExtensionPoint(f.profileName, point, s.Code(), time.Since(start))
	}
}
