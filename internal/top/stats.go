package top

import (
	"math"
	"sort"
	"strings"
	"time"
)

// Metric names read (kube-scheduler v1.37, pkg/scheduler/metrics).
const (
	MetricPendingPods        = "scheduler_pending_pods"
	MetricIncomingPods       = "scheduler_queue_incoming_pods_total"
	MetricScheduleAttempts   = "scheduler_schedule_attempts_total"
	MetricAttemptDuration    = "scheduler_scheduling_attempt_duration_seconds"
	MetricPodSchedulingSLI   = "scheduler_pod_scheduling_sli_duration_seconds"
	MetricExtensionPoint     = "scheduler_framework_extension_point_duration_seconds"
	MetricPluginDuration     = "scheduler_plugin_execution_duration_seconds"
	MetricUnschedulablePods  = "scheduler_unschedulable_pods"
	MetricPreemptionAttempts = "scheduler_preemption_attempts_total"
	MetricPreemptionVictims  = "scheduler_preemption_victims"
)

// Queues are kube-scheduler's queue label values, in display order.
var Queues = []string{"active", "backoff", "unschedulable", "gated"}

// Results are the result label values of the attempt metrics.
var Results = []string{"scheduled", "unschedulable", "error"}

// DefaultWindow is how far back quantiles and sparklines look.
const DefaultWindow = 2 * time.Minute

// Window keeps the samples of the last Span (and the one just before it,
// so that the differences cover the whole span).
type Window struct {
	Span    time.Duration
	samples []*Sample
}

// Add appends a sample. A sample older than the newest one (a clock step)
// starts the window over.
func (w *Window) Add(s *Sample) {
	if n := len(w.samples); n > 0 && s.Time.Before(w.samples[n-1].Time) {
		w.samples = nil
	}
	w.samples = append(w.samples, s)
	span := w.Span
	if span <= 0 {
		span = DefaultWindow
	}
	cut := s.Time.Add(-span)
	i := 0
	for i+1 < len(w.samples) && !w.samples[i+1].Time.After(cut) {
		i++
	}
	if i > 0 {
		w.samples = append([]*Sample(nil), w.samples[i:]...)
	}
}

// Samples are the samples in the window, oldest first.
func (w *Window) Samples() []*Sample { return w.samples }

// Latest is the newest sample, or nil.
func (w *Window) Latest() *Sample {
	if len(w.samples) == 0 {
		return nil
	}
	return w.samples[len(w.samples)-1]
}

// Stats is what top shows, computed from a Window. It is also the
// `top --once -o json` document (docs/top.md). Rates are per second over
// the last interval between two scrapes (zero, with IntervalSeconds 0,
// after the first scrape); quantiles and the *InWindow counts are over the
// whole window.
type Stats struct {
	Time            time.Time `json:"time"`
	Source          string    `json:"source,omitempty"`
	IntervalSeconds float64   `json:"intervalSeconds"`
	WindowSeconds   float64   `json:"windowSeconds"`
	Samples         int       `json:"samples"`
	// Scheduler is false when the source has no scheduler_* metric at all.
	Scheduler bool `json:"scheduler"`
	// Profiles are the profile label values seen.
	Profiles        []string     `json:"profiles"`
	Queues          []QueueStat  `json:"queues"`
	Flow            Flow         `json:"flow"`
	Incoming        []Incoming   `json:"incoming"`
	Attempts        []Attempt    `json:"attempts"`
	Latency         []Latency    `json:"latency"`
	ExtensionPoints []Latency    `json:"extensionPoints"`
	Plugins         []Latency    `json:"plugins"`
	Unschedulable   []PluginPods `json:"unschedulable"`
	Preemption      Preemption   `json:"preemption"`
	Warnings        []string     `json:"warnings,omitempty"`
}

// QueueStat is one queue's pending pods now and at each scrape in the window.
type QueueStat struct {
	Name    string    `json:"name"`
	Pending float64   `json:"pending"`
	History []float64 `json:"history"`
}

// Flow is how fast the queue fills and drains.
type Flow struct {
	// InPerSecond: pods added to any queue (scheduler_queue_incoming_pods_total).
	InPerSecond float64 `json:"inPerSecond"`
	// OutPerSecond: pods popped for an attempt (scheduler_schedule_attempts_total).
	OutPerSecond float64 `json:"outPerSecond"`
	// BoundPerSecond: attempts with result scheduled.
	BoundPerSecond float64 `json:"scheduledPerSecond"`
	// PendingChangePerSecond: the change of all pending pods over the window.
	PendingChangePerSecond float64 `json:"pendingChangePerSecond"`
	// Pending is all pending pods now (every queue).
	Pending float64 `json:"pending"`
	// OutHistory and InHistory are the rates between consecutive scrapes.
	OutHistory []float64 `json:"outHistory"`
	InHistory  []float64 `json:"inHistory"`
}

// Incoming is one (queue, event) pair of scheduler_queue_incoming_pods_total.
type Incoming struct {
	Queue     string  `json:"queue"`
	Event     string  `json:"event"`
	PerSecond float64 `json:"perSecond"`
	InWindow  float64 `json:"inWindow"`
}

// Attempt is one result of scheduler_schedule_attempts_total.
type Attempt struct {
	Result    string    `json:"result"`
	PerSecond float64   `json:"perSecond"`
	Total     float64   `json:"total"`
	History   []float64 `json:"history"`
}

// Latency is a histogram's quantiles over the window; nil quantiles mean no
// observations in the window.
type Latency struct {
	Name   string            `json:"name"`
	Metric string            `json:"metric"`
	Labels map[string]string `json:"labels,omitempty"`
	// Count is the observations in the window.
	Count float64  `json:"count"`
	P50   *float64 `json:"p50"`
	P90   *float64 `json:"p90"`
	P99   *float64 `json:"p99"`
}

// PluginPods is one plugin of scheduler_unschedulable_pods.
type PluginPods struct {
	Plugin string  `json:"plugin"`
	Pods   float64 `json:"pods"`
}

// Preemption sums the preemption metrics.
type Preemption struct {
	AttemptsPerSecond float64 `json:"attemptsPerSecond"`
	AttemptsTotal     float64 `json:"attemptsTotal"`
	AttemptsInWindow  float64 `json:"attemptsInWindow"`
	// VictimsInWindow is the sum of scheduler_preemption_victims observed in
	// the window; PreemptorsInWindow their count.
	VictimsInWindow    float64 `json:"victimsInWindow"`
	PreemptorsInWindow float64 `json:"preemptorsInWindow"`
}

// Compute reduces the window to Stats.
func Compute(w *Window) *Stats {
	ss := w.Samples()
	st := &Stats{Samples: len(ss), Queues: []QueueStat{}, Incoming: []Incoming{}, Attempts: []Attempt{},
		Latency: []Latency{}, ExtensionPoints: []Latency{}, Plugins: []Latency{}, Unschedulable: []PluginPods{}, Profiles: []string{}}
	if len(ss) == 0 {
		return st
	}
	sp := span{ss: ss, first: ss[0], cur: ss[len(ss)-1]}
	st.Time = sp.cur.Time
	st.Warnings = sp.cur.Warnings
	st.WindowSeconds = sp.cur.Time.Sub(sp.first.Time).Seconds()
	if len(ss) > 1 {
		sp.prev = ss[len(ss)-2]
		st.IntervalSeconds = sp.cur.Time.Sub(sp.prev.Time).Seconds()
	}
	for name := range sp.cur.Families {
		if strings.HasPrefix(name, "scheduler_") {
			st.Scheduler = true
			break
		}
	}
	st.Profiles = profiles(sp.cur)
	sp.queues(st)
	results := sp.attempts(st)
	sp.incoming(st)
	sp.latencies(st, results)
	sp.unschedulable(st)
	sp.preemption(st)
	return st
}

// span is the window's samples: the first, the one before the last (nil
// with a single sample) and the last.
type span struct {
	ss               []*Sample
	first, prev, cur *Sample
}

// withExtra returns known followed by the other keys of m, sorted.
func withExtra(known []string, m map[string]float64) []string {
	var extra []string
	for k := range m {
		if !contains(known, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	return append(append([]string(nil), known...), extra...)
}

// queues fills the pending pods by queue, with their history, and the
// pending count's change over the window.
func (sp span) queues(st *Stats) {
	pending := gaugeSum(sp.cur, MetricPendingPods, []string{"queue"})
	for _, q := range withExtra(Queues, pending) {
		qs := QueueStat{Name: q, Pending: pending[q], History: make([]float64, 0, len(sp.ss))}
		for _, s := range sp.ss {
			qs.History = append(qs.History, gaugeSum(s, MetricPendingPods, []string{"queue"})[q])
		}
		st.Queues = append(st.Queues, qs)
		st.Flow.Pending += pending[q]
	}
	if st.WindowSeconds > 0 {
		was := sum(gaugeSum(sp.first, MetricPendingPods, nil))
		st.Flow.PendingChangePerSecond = (st.Flow.Pending - was) / st.WindowSeconds
	}
}

// attempts fills the flow and the attempts by result, with their
// per-interval history, and returns the results in display order.
func (sp span) attempts(st *Stats) []string {
	ss := sp.ss
	totals := counterTotal(sp.cur, MetricScheduleAttempts, []string{"result"})
	results := withExtra(Results, totals)
	attempts := make([]Attempt, len(results))
	for i, r := range results {
		attempts[i] = Attempt{Result: r, Total: totals[r], History: []float64{}}
	}
	st.Flow.OutHistory, st.Flow.InHistory = []float64{}, []float64{}
	for i := 1; i < len(ss); i++ {
		dt := ss[i].Time.Sub(ss[i-1].Time).Seconds()
		if dt <= 0 {
			continue
		}
		inc := counterIncrease(ss[i-1], ss[i], MetricScheduleAttempts, []string{"result"})
		st.Flow.OutHistory = append(st.Flow.OutHistory, sum(inc)/dt)
		st.Flow.InHistory = append(st.Flow.InHistory, sum(counterIncrease(ss[i-1], ss[i], MetricIncomingPods, nil))/dt)
		for j := range attempts {
			attempts[j].History = append(attempts[j].History, inc[attempts[j].Result]/dt)
		}
	}
	if st.IntervalSeconds > 0 {
		dt := st.IntervalSeconds
		inc := counterIncrease(sp.prev, sp.cur, MetricScheduleAttempts, []string{"result"})
		st.Flow.OutPerSecond = sum(inc) / dt
		st.Flow.BoundPerSecond = inc["scheduled"] / dt
		for j := range attempts {
			attempts[j].PerSecond = inc[attempts[j].Result] / dt
		}
		st.Flow.InPerSecond = sum(counterIncrease(sp.prev, sp.cur, MetricIncomingPods, nil)) / dt
	}
	st.Attempts = attempts
	return results
}

// incoming fills the pods entering the queues by queue and event: the rate
// now and the count over the window, largest first.
func (sp span) incoming(st *Stats) {
	ss := sp.ss
	by := []string{"queue", "event"}
	inWindow := map[string]float64{}
	for i := 1; i < len(ss); i++ {
		for k, v := range counterIncrease(ss[i-1], ss[i], MetricIncomingPods, by) {
			inWindow[k] += v
		}
	}
	var now map[string]float64
	if sp.prev != nil {
		now = counterIncrease(sp.prev, sp.cur, MetricIncomingPods, by)
	}
	for k, v := range inWindow {
		if v == 0 {
			continue
		}
		l := splitKey(k, by)
		in := Incoming{Queue: l["queue"], Event: l["event"], InWindow: v}
		if st.IntervalSeconds > 0 {
			in.PerSecond = now[k] / st.IntervalSeconds
		}
		st.Incoming = append(st.Incoming, in)
	}
	sort.Slice(st.Incoming, func(i, j int) bool {
		a, b := st.Incoming[i], st.Incoming[j]
		if a.InWindow != b.InWindow {
			return a.InWindow > b.InWindow
		}
		if a.Queue != b.Queue {
			return a.Queue < b.Queue
		}
		return a.Event < b.Event
	})
}

// latencies fills the latency summaries: the SLI, attempts (all and by
// result), extension points and plugins.
func (sp span) latencies(st *Stats, results []string) {
	ss, cur := sp.ss, sp.cur
	if h := windowHist(ss, MetricPodSchedulingSLI, nil)[""]; h != nil || cur.Families[MetricPodSchedulingSLI] != nil {
		st.Latency = append(st.Latency, latency("pod scheduling (sli)", MetricPodSchedulingSLI, nil, h))
	}
	attemptHists := windowHist(ss, MetricAttemptDuration, []string{"result"})
	if cur.Families[MetricAttemptDuration] != nil {
		var all *hist
		for _, r := range results {
			if h := attemptHists[r]; h != nil {
				all = addHist(all, h)
			}
		}
		st.Latency = append(st.Latency, latency("attempt", MetricAttemptDuration, nil, all))
		for _, r := range results {
			if h := attemptHists[r]; h != nil && h.count > 0 {
				st.Latency = append(st.Latency, latency("attempt "+r, MetricAttemptDuration, map[string]string{"result": r}, h))
			}
		}
	}
	for k, h := range windowHist(ss, MetricExtensionPoint, []string{"extension_point"}) {
		st.ExtensionPoints = append(st.ExtensionPoints, latency(k, MetricExtensionPoint, map[string]string{"extension_point": k}, h))
	}
	sortLatency(st.ExtensionPoints)
	pby := []string{"plugin", "extension_point"}
	for k, h := range windowHist(ss, MetricPluginDuration, pby) {
		l := splitKey(k, pby)
		st.Plugins = append(st.Plugins, latency(l["plugin"]+"/"+l["extension_point"], MetricPluginDuration, l, h))
	}
	sortLatency(st.Plugins)
}

// unschedulable fills why pods wait: unschedulable pods by plugin, most
// first.
func (sp span) unschedulable(st *Stats) {
	for p, n := range gaugeSum(sp.cur, MetricUnschedulablePods, []string{"plugin"}) {
		if n > 0 {
			st.Unschedulable = append(st.Unschedulable, PluginPods{Plugin: p, Pods: n})
		}
	}
	sort.Slice(st.Unschedulable, func(i, j int) bool {
		a, b := st.Unschedulable[i], st.Unschedulable[j]
		if a.Pods != b.Pods {
			return a.Pods > b.Pods
		}
		return a.Plugin < b.Plugin
	})
}

// preemption fills the preemption attempts and victims.
func (sp span) preemption(st *Stats) {
	ss := sp.ss
	st.Preemption.AttemptsTotal = sum(counterTotal(sp.cur, MetricPreemptionAttempts, nil))
	for i := 1; i < len(ss); i++ {
		st.Preemption.AttemptsInWindow += sum(counterIncrease(ss[i-1], ss[i], MetricPreemptionAttempts, nil))
	}
	if st.IntervalSeconds > 0 {
		st.Preemption.AttemptsPerSecond = sum(counterIncrease(sp.prev, sp.cur, MetricPreemptionAttempts, nil)) / st.IntervalSeconds
	}
	if h := windowHist(ss, MetricPreemptionVictims, nil)[""]; h != nil {
		st.Preemption.VictimsInWindow, st.Preemption.PreemptorsInWindow = h.sum, h.count
	}
}

// windowHist sums the histogram increases over every consecutive pair in
// the window.
func windowHist(ss []*Sample, name string, by []string) map[string]*hist {
	out := map[string]*hist{}
	for i := 1; i < len(ss); i++ {
		for k, h := range histIncrease(ss[i-1], ss[i], name, by) {
			out[k] = addHist(out[k], h)
		}
	}
	return out
}

func latency(name, metric string, labels map[string]string, h *hist) Latency {
	l := Latency{Name: name, Metric: metric, Labels: labels}
	if h == nil {
		return l
	}
	l.Count = h.count
	l.P50, l.P90, l.P99 = quantile(0.5, h), quantile(0.9, h), quantile(0.99, h)
	return l
}

func quantile(q float64, h *hist) *float64 {
	v := BucketQuantile(q, h.buckets)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// sortLatency puts the busiest first (most observations), then by name.
func sortLatency(ls []Latency) {
	sort.Slice(ls, func(i, j int) bool {
		if ls[i].Count != ls[j].Count {
			return ls[i].Count > ls[j].Count
		}
		return ls[i].Name < ls[j].Name
	})
}

func profiles(s *Sample) []string {
	seen := map[string]bool{}
	for _, name := range []string{MetricScheduleAttempts, MetricUnschedulablePods, MetricExtensionPoint, MetricAttemptDuration} {
		for _, x := range seriesOf(s, name) {
			if p := x.labels["profile"]; p != "" {
				seen[p] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func sum(m map[string]float64) float64 {
	var t float64
	for _, v := range m {
		t += v
	}
	return t
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
