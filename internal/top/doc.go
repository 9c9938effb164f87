// Package top turns a scheduler's Prometheus /metrics into what
// `kubectl sched top` shows: pending pods per queue, how fast the queue
// fills and drains, scheduling attempts per second by result, latency
// quantiles over a window, why pods wait, and preemption.
//
// The metric names are kube-scheduler v1.37's, so the same code reads a
// kubectl-sched `run` and a stock kube-scheduler. Scrapes come from a
// Source (an HTTP(S) URL, the API server's pod proxy, or an in-process
// prometheus.Gatherer); a Window keeps the samples of the last few minutes;
// Compute reduces a Window to Stats.
//
// Rates and quantiles follow Prometheus' rate() and histogram_quantile():
// counters are differenced between consecutive scrapes, a counter that went
// down (a restarted scheduler) restarts from zero, and quantiles interpolate
// linearly inside the bucket that holds the rank, over the increase of the
// bucket counts in the window — never over the lifetime totals.
package top
