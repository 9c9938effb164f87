package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// queueingStrategy is where a pod leaving the unschedulable pool goes.
type queueingStrategy int

const (
	// queueSkip: stay in the unschedulable pool.
	queueSkip queueingStrategy = iota
	// queueAfterBackoff: backoffQ if still backing off, else activeQ.
	queueAfterBackoff
	// queueImmediately: activeQ, skipping backoff.
	queueImmediately
)

func (s queueingStrategy) String() string {
	switch s {
	case queueAfterBackoff:
		return "QueueAfterBackoff"
	case queueImmediately:
		return "QueueImmediately"
	}
	return "QueueSkip"
}

// hintFn is a plugin's queueing hint for one registered event.
type hintFn struct {
	plugin string
	fn     schedcore.QueueingHintFn
}

// hintEntry is one registered event with the hints registered for it.
type hintEntry struct {
	event schedcore.ClusterEvent
	fns   []hintFn
}

// hintMap is a profile's registrations in registration order (kube keys a
// map by event; the order only affects which hints run before the answer
// is known).
type hintMap []hintEntry

func (m hintMap) add(e schedcore.ClusterEvent, h hintFn) hintMap {
	for i := range m {
		if m[i].event == e {
			m[i].fns = append(m[i].fns, h)
			return m
		}
	}
	return append(m, hintEntry{event: e, fns: []hintFn{h}})
}

// alwaysQueue is the hint of registrations without one.
func alwaysQueue(logr.Logger, *v1.Pod, any, any) (schedcore.QueueingHint, error) {
	return schedcore.Queue, nil
}

// buildHintMap collects a profile's EventsToRegister as kube's
// buildQueueingHintMap: Pod registrations are unrolled into AssignedPod,
// UnscheduledPod and TargetPod; a nil hint always queues; plugins
// registering no events are left out (only their own updates, through
// Update, requeue their pods).
func buildHintMap(ctx context.Context, fw *runtime.Framework) (hintMap, error) {
	var m hintMap
	var errs error
	for _, ext := range fw.EnqueueExtensions() {
		events, err := ext.EventsToRegister(ctx)
		if err != nil {
			errs = errors.Join(errs, fmt.Errorf("plugin %q: EventsToRegister: %w", ext.Name(), err))
		}
		for _, e := range events {
			fn := e.QueueingHintFn
			if fn == nil {
				fn = alwaysQueue
			}
			h := hintFn{plugin: ext.Name(), fn: fn}
			if e.Event.Resource == schedcore.Pod {
				for _, r := range []schedcore.EventResource{schedcore.AssignedPod, schedcore.UnscheduledPod, schedcore.TargetPod} {
					m = m.add(schedcore.ClusterEvent{Resource: r, ActionType: e.Event.ActionType, CustomLabel: e.Event.CustomLabel}, h)
				}
				continue
			}
			m = m.add(e.Event, h)
		}
	}
	return m, errs
}

// isWildCard reports whether the event matches every registration.
func isWildCard(e schedcore.ClusterEvent) bool {
	return e.Resource == schedcore.WildCard && e.ActionType == schedcore.All
}

// matchClusterEvents reports whether the registered event ce covers the
// incoming event, as kube's MatchClusterEvents: the incoming event must be
// as specific as the registration or more (a registration for
// UpdateNodeLabel does not match a plain Node/Update), and a wildcard
// incoming event only matches a wildcard registration.
func matchClusterEvents(ce, incoming schedcore.ClusterEvent) bool { return ce.Match(incoming) }

// matchAnyClusterEvent reports whether any of the registered events covers e.
func matchAnyClusterEvent(e schedcore.ClusterEvent, registered []schedcore.ClusterEvent) bool {
	for _, r := range registered {
		if matchClusterEvents(r, e) {
			return true
		}
	}
	return false
}

// isEventOfInterest reports whether any profile registered the event.
// Caller holds p.lock for writing.
func (p *PriorityQueue) isEventOfInterest(logger logr.Logger, e schedcore.ClusterEvent) bool {
	if isWildCard(e) || p.ix.plan(e).interesting {
		return true
	}
	logger.V(6).Info("receive an event that isn't interested by any enabled plugins", "event", e)
	return false
}

// isEntityWorthRequeuing is isPodWorthRequeuing for a pod, and for a group
// the strongest strategy over its members (kube's isEntityWorthRequeuing).
func (p *PriorityQueue) isEntityWorthRequeuing(logger logr.Logger, q *schedcore.QueuedPodInfo, e schedcore.ClusterEvent, oldObj, newObj any) queueingStrategy {
	if q.Group == nil {
		return p.isPodWorthRequeuing(logger, q, e, oldObj, newObj)
	}
	best := queueSkip
	for _, m := range q.Group.Members {
		if s := p.isPodWorthRequeuing(logger, m, e, oldObj, newObj); s > best {
			best = s
			if best == queueImmediately {
				break
			}
		}
	}
	return best
}

// isPodWorthRequeuing asks the hints of the pod's rejector plugins
// (UnschedulablePlugins ∪ PendingPlugins) registered for the event: a Queue
// from a Pending plugin means queueImmediately, from an Unschedulable one
// queueAfterBackoff. A pod with no rejectors, and any pod on a wildcard
// event (unless the event names another pod), goes after backoff. A hint
// error counts as Queue, so pods do not get stuck.
func (p *PriorityQueue) isPodWorthRequeuing(logger logr.Logger, q *schedcore.QueuedPodInfo, e schedcore.ClusterEvent, oldObj, newObj any) queueingStrategy {
	pod := q.Pod
	if q.UnschedulablePlugins.Len() == 0 && q.PendingPlugins.Len() == 0 {
		if v := logger.V(6); v.Enabled() {
			v.Info("Worth requeuing because no failed plugins", "pod", schedcore.PodName(pod))
		}
		return queueAfterBackoff
	}
	if isWildCard(e) {
		// A wildcard event carrying a pod (ForceActivate) is for that pod only.
		if newObj != nil {
			if np, ok := newObj.(*v1.Pod); !ok || np.UID != pod.UID {
				return queueSkip
			}
		}
		if v := logger.V(6); v.Enabled() {
			v.Info("Worth requeuing because the event is wildcard", "pod", schedcore.PodName(pod), "event", e.Label())
		}
		return queueAfterBackoff
	}
	pi, ok := p.ix.byName[pod.Spec.SchedulerName]
	if !ok {
		logger.Error(nil, "No QueueingHintMap is registered for this profile", "profile", pod.Spec.SchedulerName, "pod", schedcore.PodName(pod))
		return queueAfterBackoff
	}
	// The entries of the profile's hint map whose event covers e, in
	// order: the others are the ones kube's loop skips.
	m := p.ix.maps[pi]
	strategy := queueSkip
	for _, i := range p.ix.plan(e).matching[pi] {
		for _, fn := range m[i].fns {
			if !q.UnschedulablePlugins.Has(fn.plugin) && !q.PendingPlugins.Has(fn.plugin) {
				continue
			}
			start := time.Now()
			hint, err := fn.fn(logger, pod, oldObj, newObj)
			label := HintResultQueueSkip
			switch {
			case err != nil:
				logger.Error(err, "QueueingHintFn returns error", "event", e, "plugin", fn.plugin, "pod", schedcore.PodName(pod))
				hint, label = schedcore.Queue, HintResultError
			case hint == schedcore.Queue:
				label = HintResultQueue
			}
			p.metrics.QueueingHint(fn.plugin, e.Label(), label, time.Since(start))
			if hint == schedcore.QueueSkip {
				continue
			}
			if q.PendingPlugins.Has(fn.plugin) {
				return queueImmediately
			}
			if q.PendingPlugins.Len() == 0 {
				return queueAfterBackoff
			}
			// A Pending plugin may still answer Queue: keep looking.
			strategy = queueAfterBackoff
		}
	}
	return strategy
}

// determineSchedulingHintForInFlightPod replays the events received while
// the pod was in flight through isPodWorthRequeuing.
func (p *PriorityQueue) determineSchedulingHintForInFlightPod(logger logr.Logger, q *schedcore.QueuedPodInfo) queueingStrategy {
	if q.UnschedulablePlugins.Len() == 0 && q.PendingPlugins.Len() == 0 {
		// An error rather than a rejection: retry after backoff, or it may
		// not be retried until the next flush.
		return queueAfterBackoff
	}
	events, err := p.activeQ.clusterEventsForPod(q.Pod.UID)
	if err != nil {
		logger.Error(err, "Error getting cluster events for pod", "pod", schedcore.PodName(q.Pod))
		return queueAfterBackoff
	}
	strategy := queueSkip
	for _, e := range events {
		if v := logger.V(5); v.Enabled() {
			v.Info("Checking event for in-flight pod", "pod", schedcore.PodName(q.Pod), "event", e.event.Label())
		}
		switch p.isPodWorthRequeuing(logger, q, e.event, e.oldObj, e.newObj) {
		case queueImmediately:
			return queueImmediately
		case queueAfterBackoff:
			strategy = queueAfterBackoff
			if q.PendingPlugins.Len() == 0 {
				return queueAfterBackoff
			}
		}
	}
	return strategy
}
