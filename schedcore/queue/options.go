package queue

import (
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Defaults, as kube-scheduler v1.37 has them.
const (
	// DefaultPodInitialBackoffDuration is the first backoff of a pod.
	DefaultPodInitialBackoffDuration = 1 * time.Second
	// DefaultPodMaxBackoffDuration caps the backoff.
	DefaultPodMaxBackoffDuration = 10 * time.Second
	// DefaultPodMaxInUnschedulablePodsDuration is how long a pod may stay in
	// the unschedulable pool before it is retried without an event.
	DefaultPodMaxInUnschedulablePodsDuration = 5 * time.Minute
)

// Intervals of the flushes Run starts.
const (
	// backoffQOrderingWindowDuration is both the backoffQ's ordering window
	// (pods whose backoff ends in the same whole second are ordered by the
	// QueueSort plugin) and the period of the backoff flush.
	backoffQOrderingWindowDuration = time.Second
	// unschedulableFlushInterval is the period of the unschedulable pool flush.
	unschedulableFlushInterval = 30 * time.Second
)

// Queue labels of kube's metrics (scheduler_pending_pods{queue},
// scheduler_queue_incoming_pods_total{queue}).
const (
	QueueActive        = "active"
	QueueBackoff       = "backoff"
	QueueUnschedulable = "unschedulable"
	QueueGated         = "gated"
)

// Event labels the queue uses besides ClusterEvent labels, as kube's.
const (
	EventScheduleAttemptFailure = "ScheduleAttemptFailure"
	EventBackoffComplete        = "BackoffComplete"
	EventPopFromBackoffQ        = "PopFromBackoffQ"
	EventForceActivate          = "ForceActivate"
	EventUnschedulableTimeout   = "UnschedulableTimeout"
	// EventPodPopped is the in-flight events label counting in-flight pods.
	EventPodPopped = "PodPopped"
)

// Hint labels of scheduler_queueing_hint_execution_duration_seconds.
const (
	HintResultQueue     = "Queue"
	HintResultQueueSkip = "QueueSkip"
	HintResultError     = "Error"
)

// Metrics receives what the queue measures; internal/ maps it onto
// kube-scheduler's metric names. Every method must be cheap and safe for
// concurrent use (some are called under the queue's locks). Embed NopMetrics
// to implement only some.
type Metrics interface {
	// IncomingPods counts n pods entering queue because of event
	// (scheduler_queue_incoming_pods_total{queue,event}); queue is
	// QueueActive, QueueBackoff or QueueUnschedulable.
	IncomingPods(queue, event string, n int)
	// PendingPods changes the size of a sub-queue by delta
	// (scheduler_pending_pods{queue}); queue is QueueActive, QueueBackoff,
	// QueueUnschedulable or QueueGated.
	PendingPods(queue string, delta int)
	// UnschedulableReason changes by delta the number of pending pods the
	// plugin rejected (scheduler_unschedulable_pods{plugin,profile}).
	UnschedulableReason(plugin, profile string, delta int)
	// InFlightEvents changes by delta the number of events kept for in-flight
	// pods (scheduler_inflight_events{event}); EventPodPopped counts the pods.
	InFlightEvents(event string, delta int)
	// QueueingHint observes one queueing hint call
	// (scheduler_queueing_hint_execution_duration_seconds{plugin,event,hint}).
	QueueingHint(plugin, event, hint string, d time.Duration)
	// PreEnqueue observes one run of the PreEnqueue extension point
	// (scheduler_framework_extension_point_duration_seconds{extension_point="PreEnqueue"}).
	PreEnqueue(profile string, code schedcore.Code, d time.Duration)
}

// NopMetrics implements Metrics doing nothing.
type NopMetrics struct{}

func (NopMetrics) IncomingPods(string, string, int)                   {}
func (NopMetrics) PendingPods(string, int)                            {}
func (NopMetrics) UnschedulableReason(string, string, int)            {}
func (NopMetrics) InFlightEvents(string, int)                         {}
func (NopMetrics) QueueingHint(string, string, string, time.Duration) {}
func (NopMetrics) PreEnqueue(string, schedcore.Code, time.Duration)   {}

var _ Metrics = NopMetrics{}

// PodGetter returns the current version of a pod (an informer lister for
// run, the in-memory store for dryrun); ok is false if it is gone.
type PodGetter func(namespace, name string) (pod *v1.Pod, ok bool)

type options struct {
	clock                             clock.WithTicker
	podInitialBackoffDuration         time.Duration
	podMaxBackoffDuration             time.Duration
	podMaxInUnschedulablePodsDuration time.Duration
	metrics                           Metrics
	logger                            logr.Logger
	popFromBackoffQ                   bool
	features                          *schedcore.Features
	podGetter                         PodGetter
	noPodGroups                       bool
}

// Option configures New.
type Option func(*options)

// WithClock sets the clock (default the real clock); tests pass
// k8s.io/utils/clock/testing's fake clock.
func WithClock(c clock.WithTicker) Option { return func(o *options) { o.clock = c } }

// WithPodInitialBackoffDuration sets the first backoff (default 1s).
func WithPodInitialBackoffDuration(d time.Duration) Option {
	return func(o *options) { o.podInitialBackoffDuration = d }
}

// WithPodMaxBackoffDuration sets the backoff cap (default 10s); 0 disables
// backoff entirely, as in kube.
func WithPodMaxBackoffDuration(d time.Duration) Option {
	return func(o *options) { o.podMaxBackoffDuration = d }
}

// WithPodMaxInUnschedulablePodsDuration sets how long a pod may wait in the
// unschedulable pool before the periodic flush retries it (default 5m).
func WithPodMaxInUnschedulablePodsDuration(d time.Duration) Option {
	return func(o *options) { o.podMaxInUnschedulablePodsDuration = d }
}

// WithMetrics sets the metrics sink (default none).
func WithMetrics(m Metrics) Option { return func(o *options) { o.metrics = m } }

// WithLogger sets the logger for what happens outside calls that take one
// (default discard).
func WithLogger(l logr.Logger) Option { return func(o *options) { o.logger = l } }

// WithPopFromBackoffQ sets kube's SchedulerPopFromBackoffQ feature gate
// (beta, on by default in v1.37): Pop takes from backoffQ when activeQ is
// empty, PreEnqueue runs when a pod enters backoffQ, and backoffQ is ordered
// in whole-second windows.
func WithPopFromBackoffQ(on bool) Option { return func(o *options) { o.popFromBackoffQ = on } }

// WithFeatures sets the feature gates used to interpret pod updates (default:
// the profiles' handles' gates, else schedcore.DefaultFeatures).
func WithFeatures(f schedcore.Features) Option { return func(o *options) { o.features = &f } }

// WithPodGetter lets the nominator check, as kube's does with its pod lister,
// that a pod still exists and is unassigned before nominating it. Without
// it every nomination is recorded.
func WithPodGetter(g PodGetter) Option { return func(o *options) { o.podGetter = g } }

// WithPodGroups(false) keeps pod group members single pods even with
// GenericWorkload on (default true: with the gate, members are queued in
// their group's entity, as kube). It is for drivers whose scheduler loop
// has no pod-group cycle yet.
func WithPodGroups(on bool) Option { return func(o *options) { o.noPodGroups = !on } }
