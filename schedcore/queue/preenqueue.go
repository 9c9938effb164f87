package queue

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// PreEnqueue: the gate a pod, or every member of a group, passes before
// activeQ (and, with SchedulerPopFromBackoffQ, before backoffQ).

// runPreEnqueuePlugins runs PreEnqueue for a pod, or for every member of a
// group: if any member is gated the group is gated with that member's
// gating plugin and events (the last gated member in member order, as
// kube's loop over the members leaves it).
func (p *PriorityQueue) runPreEnqueuePlugins(logger logr.Logger, q *schedcore.QueuedPodInfo) {
	g := q.Group
	if g == nil {
		p.runPreEnqueuePluginsForPod(logger, q)
		return
	}
	var gated *schedcore.QueuedPodInfo
	for _, m := range g.Members {
		p.runPreEnqueuePluginsForPod(logger, m)
		if m.Gated() {
			gated = m
		}
	}
	if gated != nil {
		q.GatingPlugin, q.GatingPluginEvents = gated.GatingPlugin, gated.GatingPluginEvents
		return
	}
	q.GatingPlugin, q.GatingPluginEvents = "", nil
}

// runPreEnqueuePluginsForPod runs the profile's PreEnqueue plugins, the
// gating plugin first, and records the first that rejects as the gating
// plugin (and a rejector), with the events that may ungate the pod.
func (p *PriorityQueue) runPreEnqueuePluginsForPod(logger logr.Logger, q *schedcore.QueuedPodInfo) {
	pod := q.Pod
	fw := p.profiles[pod.Spec.SchedulerName]
	if fw == nil {
		q.GatingPlugin, q.GatingPluginEvents = "", nil
		return
	}
	start := time.Now()
	var st *schedcore.Status
	defer func() { p.metrics.PreEnqueue(pod.Spec.SchedulerName, st.Code(), time.Since(start)) }()
	// The framework's one PreEnqueue pass (explain runs it too), asking
	// the plugin that gated the pod first.
	fw.RunPreEnqueuePluginsFrom(context.Background(), pod, q.GatingPlugin, func(pl schedcore.PreEnqueuePlugin, s *schedcore.Status) {
		st = s
		p.gatedBy(logger, pl, q, s)
	})
	if st.IsSuccess() {
		q.GatingPlugin, q.GatingPluginEvents = "", nil
	}
}

// gatedBy records that pl rejected the pod with st: the gating plugin (and
// a rejector), with the events that may ungate the pod.
func (p *PriorityQueue) gatedBy(logger logr.Logger, pl schedcore.PreEnqueuePlugin, q *schedcore.QueuedPodInfo, st *schedcore.Status) {
	name := pl.Name()
	if !q.UnschedulablePlugins.Has(name) && !q.PendingPlugins.Has(name) {
		p.metrics.UnschedulableReason(name, q.Pod.Spec.SchedulerName, 1)
	}
	if q.UnschedulablePlugins == nil {
		q.UnschedulablePlugins = sets.New[string]()
	}
	q.UnschedulablePlugins.Insert(name)
	q.GatingPlugin, q.GatingPluginEvents = name, p.pluginToEvents[name]
	if st.Code() == schedcore.Error {
		logger.Error(st.AsError(), "Unexpected error running PreEnqueue plugin", "pod", schedcore.PodName(q.Pod), "plugin", name)
	} else {
		if v := logger.V(4); v.Enabled() {
			v.Info("Status after running PreEnqueue plugin", "pod", schedcore.PodName(q.Pod), "plugin", name, "status", st.Message())
		}
	}
}
