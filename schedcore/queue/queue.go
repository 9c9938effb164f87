package queue

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/utils/clock"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// pendingPodsSummary is kube's PendingPods summary line; the extended one
// is kube's with GenericWorkload on.
const (
	pendingPodsSummary         = "activeQ:%v; backoffQ:%v; unschedulableEntities:%v"
	pendingPodsExtendedSummary = "activeQ:%v; backoffQ:%v; unschedulableEntities:%v; pendingPodGroupMemberPods:%v; incompletePodGroupPods:%v"
)

// PriorityQueue is kube-scheduler's scheduling queue: activeQ (a heap by
// the QueueSort plugin), backoffQ (by backoff expiry) and the unschedulable
// pool (which also holds gated pods), plus the in-flight bookkeeping and the
// nominator. Lock order: lock > activeQ.lock > backoffQ.lock > nominator.lock.
type PriorityQueue struct {
	*nominator

	lock  sync.RWMutex
	stop  chan struct{}
	clock clock.WithTicker

	podMaxInUnschedulablePodsDuration time.Duration

	activeQ       *activeQueue
	backoffQ      *backoffQueue
	unschedulable *unschedulablePods

	profiles map[string]*runtime.Framework
	// hints are the profiles' queueing hints, by profile name.
	hints map[string]hintMap
	// pluginToEvents lists the events each plugin registered (all profiles),
	// the events that may ungate a pod it gates.
	pluginToEvents map[string][]schedcore.ClusterEvent
	// ix numbers the profiles and hint lists and caches the events'
	// plans; the unschedulable pool files its pods by it.
	ix *requeueIndex
	// walkAll makes every event visit the whole unschedulable pool, as
	// kube's walk, instead of the index's candidates (tests compare both).
	walkAll bool
	// moving is the scratch list of the pods an event visits.
	moving []*schedcore.QueuedPodInfo

	// groups is whether pod group members are queued in their group's
	// entity (GenericWorkload on, WithPodGroups not false).
	groups bool
	// podGroups are the observed PodGroups by groupKey (kube's workload
	// forest without CompositePodGroups: every PodGroup is a root).
	podGroups map[string]*schedulingv1beta1.PodGroup
	// incomplete holds members whose PodGroup is not observed; pending
	// members that arrived while their group was the last popped entity.
	incomplete, pending *memberPods

	popFromBackoffQ bool
	features        schedcore.Features
	metrics         Metrics
	logger          logr.Logger
	closeOnce       sync.Once
}

var _ schedcore.SchedulingQueue = (*PriorityQueue)(nil)

// New returns a queue ordering activeQ by less (the QueueSort plugin's Less;
// every profile must use the same), with the PreEnqueue plugins and
// queueing hints of profiles (keyed by schedulerName). Errors from the
// plugins' EventsToRegister are logged; kube fails start-up on them.
func New(less func(a, b *schedcore.QueuedPodInfo) bool, profiles map[string]*runtime.Framework, opts ...Option) *PriorityQueue {
	o := options{
		clock:                             clock.RealClock{},
		podInitialBackoffDuration:         DefaultPodInitialBackoffDuration,
		podMaxBackoffDuration:             DefaultPodMaxBackoffDuration,
		podMaxInUnschedulablePodsDuration: DefaultPodMaxInUnschedulablePodsDuration,
		logger:                            logr.Discard(),
		popFromBackoffQ:                   true,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if o.metrics == nil {
		o.metrics = NopMetrics{}
	}
	p := &PriorityQueue{
		nominator:                         newNominator(o.podGetter),
		stop:                              make(chan struct{}),
		clock:                             o.clock,
		podMaxInUnschedulablePodsDuration: o.podMaxInUnschedulablePodsDuration,
		profiles:                          profiles,
		hints:                             map[string]hintMap{},
		pluginToEvents:                    map[string][]schedcore.ClusterEvent{},
		popFromBackoffQ:                   o.popFromBackoffQ,
		features:                          schedcore.DefaultFeatures,
		metrics:                           o.metrics,
		logger:                            o.logger,
	}
	p.backoffQ = newBackoffQueue(o.clock, o.podInitialBackoffDuration, o.podMaxBackoffDuration, less, o.popFromBackoffQ, o.metrics)
	var popper *backoffQueue
	if o.popFromBackoffQ {
		popper = p.backoffQ
	}
	p.activeQ = newActiveQueue(less, o.metrics, popper)

	names := make([]string, 0, len(profiles))
	for name := range profiles {
		names = append(names, name)
	}
	sort.Strings(names)
	haveFeatures := false
	for _, name := range names {
		fw := profiles[name]
		if !haveFeatures && fw.Handle() != nil {
			p.features, haveFeatures = fw.Handle().Features(), true
		}
		m, err := buildHintMap(context.Background(), fw)
		if err != nil {
			o.logger.Error(err, "Registering the cluster events of profile", "profile", name)
		}
		p.hints[name] = m
		for _, h := range m {
			for _, fn := range h.fns {
				p.pluginToEvents[fn.plugin] = append(p.pluginToEvents[fn.plugin], h.event)
			}
		}
	}
	if o.features != nil {
		p.features = *o.features
	}
	p.groups = p.features.GenericWorkload && !o.noPodGroups
	p.podGroups = map[string]*schedulingv1beta1.PodGroup{}
	p.incomplete, p.pending = newMemberPods(), newMemberPods()
	p.ix = newRequeueIndex(p.hints)
	p.unschedulable = newUnschedulablePods(o.metrics, p.ix)
	return p
}

// Run starts the flushes: backoffQ every second (aligned to whole
// seconds, on the queue's clock) and the pods left in the unschedulable
// pool longer than the maximum every 30 seconds (first at once, as kube's
// wait.Until). They stop on Close.
func (p *PriorityQueue) Run(logger logr.Logger) {
	go p.backoffQ.waitUntilAlignedWithOrderingWindow(func() { p.flushBackoffQCompleted(logger) }, p.stop)
	go func() {
		ticker := p.clock.NewTicker(unschedulableFlushInterval)
		defer ticker.Stop()
		for {
			select {
			case <-p.stop:
				return
			default:
			}
			p.flushUnschedulablePodsLeftover(logger)
			select {
			case <-p.stop:
				return
			case <-ticker.C():
			}
		}
	}()
}

// Close wakes the Pop callers (they return nil) and stops the flushes.
func (p *PriorityQueue) Close() {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.closeOnce.Do(func() { close(p.stop) })
	p.activeQ.close()
	p.activeQ.broadcast()
}

// newQueuedPodInfo wraps a new pod, stamped now.
func (p *PriorityQueue) newQueuedPodInfo(pod *v1.Pod) *schedcore.QueuedPodInfo {
	return &schedcore.QueuedPodInfo{
		PodInfo:              schedcore.NewPodInfo(pod),
		Timestamp:            p.clock.Now(),
		UnschedulablePlugins: sets.New[string](),
		PendingPlugins:       sets.New[string](),
	}
}

// Add adds a new pending pod: it is nominated if its status says so, then
// goes to activeQ unless a PreEnqueue plugin gates it.
func (p *PriorityQueue) Add(logger logr.Logger, pod *v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	p.addPod(logger, pod)
}

func (p *PriorityQueue) addPod(logger logr.Logger, pod *v1.Pod) {
	q := p.newQueuedPodInfo(pod)
	// Nominate before activeQ so a Pop cannot see the pod un-nominated.
	p.nominator.add(logger, q.PodInfo, nil)
	if p.isMember(pod) {
		p.addPodGroupMember(logger, q)
		return
	}
	if p.moveToActiveQ(logger, q, schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add}.Label(), false) {
		p.activeQ.broadcast()
	}
}

// moveToActiveQ runs PreEnqueue (unless the pod comes straight from
// backoffQ, where it already ran) and puts the pod in activeQ, or in the
// unschedulable pool if gated. It does not wake Pop. Caller holds p.lock.
func (p *PriorityQueue) moveToActiveQ(logger logr.Logger, q *schedcore.QueuedPodInfo, event string, fromBackoffQ bool) bool {
	if !(p.popFromBackoffQ && fromBackoffQ) {
		p.runPreEnqueuePlugins(logger, q)
	}
	if q.Gated() {
		if p.unschedulable.getKey(entityKey(q)) == nil {
			if v := logger.V(5); v.Enabled() {
				v.Info("Pod moved to an internal scheduling queue, because it is gated", "pod", schedcore.PodName(q.Pod), "event", event, "queue", "Unschedulable")
			}
		}
		setWasFlushed(q, false)
		p.unschedulable.addOrUpdate(q, event)
		return false
	}
	if q.InitialAttemptTimestamp == nil {
		now := p.clock.Now()
		q.InitialAttemptTimestamp = &now
	}
	if q.Group != nil {
		// A member may join after the group's first attempt: each keeps
		// its own first time.
		for _, m := range q.Group.Members {
			if m.InitialAttemptTimestamp == nil {
				m.InitialAttemptTimestamp = q.InitialAttemptTimestamp
			}
		}
	}
	p.unschedulable.deleteKey(entityKey(q))
	p.activeQ.add(logger, q, event)
	return true
}

// setWasFlushed sets WasFlushedFromUnschedulable of an entity and, for a
// group, of its members.
func setWasFlushed(q *schedcore.QueuedPodInfo, v bool) {
	q.WasFlushedFromUnschedulable = v
	if q.Group != nil {
		for _, m := range q.Group.Members {
			m.WasFlushedFromUnschedulable = v
		}
	}
}

// moveToBackoffQ puts the pod in backoffQ; with SchedulerPopFromBackoffQ,
// PreEnqueue runs first and a gated pod goes to the unschedulable pool.
// Caller holds p.lock.
func (p *PriorityQueue) moveToBackoffQ(logger logr.Logger, q *schedcore.QueuedPodInfo, event string) bool {
	if p.popFromBackoffQ {
		p.runPreEnqueuePlugins(logger, q)
		if q.Gated() {
			setWasFlushed(q, false)
			p.unschedulable.addOrUpdate(q, event)
			return false
		}
	}
	p.unschedulable.deleteKey(entityKey(q))
	p.backoffQ.add(logger, q, event, p.metrics)
	return true
}

// requeue sends a pod to where the strategy says and returns the queue's
// metrics label. Caller holds p.lock.
func (p *PriorityQueue) requeue(logger logr.Logger, q *schedcore.QueuedPodInfo, s queueingStrategy, event string) string {
	if s == queueSkip {
		p.unschedulable.addOrUpdate(q, event)
		return QueueUnschedulable
	}
	// The backoff may have ended while the pod was in the pool.
	if s == queueAfterBackoff && p.backoffQ.isPodBackingoff(q) {
		if p.moveToBackoffQ(logger, q, event) {
			return QueueBackoff
		}
		return QueueUnschedulable
	}
	if p.moveToActiveQ(logger, q, event, false) {
		return QueueActive
	}
	return QueueUnschedulable
}

// wakes reports whether a pod moved to queue can be popped now.
func (p *PriorityQueue) wakes(queue string) bool {
	return queue == QueueActive || p.popFromBackoffQ && queue == QueueBackoff
}

// Activate moves pods waiting in the unschedulable pool or backoffQ to
// activeQ; a pod group member activates its whole group. For an in-flight
// pod it records a ForceActivate event so that the pod is requeued when its
// attempt fails; unknown pods, and members of unobserved groups, are
// ignored.
func (p *PriorityQueue) Activate(logger logr.Logger, pods map[string]*v1.Pod) {
	p.lock.Lock()
	defer p.lock.Unlock()
	keys := make([]string, 0, len(pods))
	for k := range pods {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	activated := false
	for _, k := range keys {
		pod := pods[k]
		if p.activate(logger, pod) {
			activated = true
			continue
		}
		if p.isMember(pod) {
			if _, ok := p.rootKeyForPod(pod); !ok {
				continue
			}
		}
		p.activeQ.addEventsIfPodInFlight(nil, pod, []schedcore.ClusterEvent{schedcore.EventForceActivate})
	}
	if activated {
		p.activeQ.broadcast()
	}
}

func (p *PriorityQueue) activate(logger logr.Logger, pod *v1.Pod) bool {
	key := podKey(pod)
	if p.isMember(pod) {
		var ok bool
		if key, ok = p.rootKeyForPod(pod); !ok {
			return false
		}
	}
	fromBackoffQ := false
	q := p.unschedulable.getKey(key)
	if q == nil {
		if q = p.backoffQ.deleteKey(key); q == nil {
			return false
		}
		fromBackoffQ = true
	}
	return p.moveToActiveQ(logger, q, EventForceActivate, fromBackoffQ)
}

// SchedulingCycle returns the number of pods popped so far.
func (p *PriorityQueue) SchedulingCycle() int64 { return p.activeQ.schedulingCycle() }

// AddUnschedulableIfNotPresent puts back a pod whose attempt failed and
// calls Done for it. A pod rejected by plugins counts an unschedulable
// attempt, one with no rejector (an error) a consecutive error; then the
// events received while it was in flight decide, through its rejectors'
// hints, whether it waits in the unschedulable pool, in backoffQ or goes
// straight to activeQ (a Pending plugin's Queue).
func (p *PriorityQueue) AddUnschedulableIfNotPresent(logger logr.Logger, q *schedcore.QueuedPodInfo, podSchedulingCycle int64) error {
	p.lock.Lock()
	defer p.lock.Unlock()
	calledDone := false
	defer func() {
		if !calledDone {
			p.activeQ.done(q.Pod.UID)
		}
	}()

	pod := q.Pod
	if q.Group != nil {
		return fmt.Errorf("pod group %v: a popped group comes back through AddAttemptedPodGroupIfNeeded", schedcore.PodName(pod))
	}
	if p.unschedulable.get(pod) != nil {
		return fmt.Errorf("Pod %v is already present in unschedulable queue", schedcore.PodName(pod))
	}
	if p.activeQ.has(pod) {
		return fmt.Errorf("Pod %v is already present in the active queue", schedcore.PodName(pod))
	}
	if p.backoffQ.has(pod) {
		return fmt.Errorf("Pod %v is already present in the backoff queue", schedcore.PodName(pod))
	}
	if q.UnschedulablePlugins == nil {
		q.UnschedulablePlugins = sets.New[string]()
	}
	if q.PendingPlugins == nil {
		q.PendingPlugins = sets.New[string]()
	}
	if q.UnschedulablePlugins.Len() == 0 && q.PendingPlugins.Len() == 0 {
		q.ConsecutiveErrorsCount++
	} else {
		q.UnschedulableCount++
		q.ConsecutiveErrorsCount = 0
	}
	q.Timestamp = p.clock.Now()
	q.BackoffExpiration = time.Time{}
	q.WasFlushedFromUnschedulable = false
	q.FlushTimestamp = time.Time{}

	if p.isMember(pod) {
		// Done first: the member may join a group in activeQ, which Pop
		// must not see with the member still in flight.
		p.activeQ.done(pod.UID)
		calledDone = true
		p.addUnschedulablePodGroupMember(logger, q)
		return nil
	}
	p.activeQ.clearPopped()
	for pl := range q.UnschedulablePlugins {
		p.metrics.UnschedulableReason(pl, pod.Spec.SchedulerName, 1)
	}
	for pl := range q.PendingPlugins {
		if !q.UnschedulablePlugins.Has(pl) {
			p.metrics.UnschedulableReason(pl, pod.Spec.SchedulerName, 1)
		}
	}
	hint := p.determineSchedulingHintForInFlightPod(logger, q)
	queue := p.requeue(logger, q, hint, EventScheduleAttemptFailure)
	if v := logger.V(3); v.Enabled() {
		v.Info("Pod moved to an internal scheduling queue", "pod", schedcore.PodName(pod), "event", EventScheduleAttemptFailure, "queue", queue, "schedulingCycle", podSchedulingCycle, "hint", hint.String(), "unschedulable plugins", sets.List(q.UnschedulablePlugins.Union(q.PendingPlugins)))
	}
	if p.wakes(queue) {
		p.activeQ.broadcast()
	}
	return nil
}

// flushBackoffQCompleted moves the pods whose backoff ended to activeQ.
func (p *PriorityQueue) flushBackoffQCompleted(logger logr.Logger) {
	p.lock.Lock()
	defer p.lock.Unlock()
	activated := false
	for _, q := range p.backoffQ.popAllBackoffCompleted() {
		if p.moveToActiveQ(logger, q, EventBackoffComplete, true) {
			activated = true
		}
	}
	if activated {
		p.activeQ.broadcast()
	}
}

// flushUnschedulablePodsLeftover retries the pods that stayed in the
// unschedulable pool (since their last attempt or last flush) longer than
// the maximum, as an UnschedulableTimeout wildcard event.
func (p *PriorityQueue) flushUnschedulablePodsLeftover(logger logr.Logger) {
	p.lock.Lock()
	defer p.lock.Unlock()
	var move []*schedcore.QueuedPodInfo
	now := p.clock.Now()
	for _, q := range p.unschedulable.list() {
		last := q.Timestamp
		if q.FlushTimestamp.After(last) {
			last = q.FlushTimestamp
		}
		if now.Sub(last) > p.podMaxInUnschedulablePodsDuration {
			setWasFlushed(q, true)
			q.FlushTimestamp = now
			move = append(move, q)
		}
	}
	if len(move) > 0 {
		p.movePodsToActiveOrBackoffQueue(logger, move, schedcore.EventUnschedulableTimeout, nil, nil)
	}
}

// Pop blocks until a pod can be popped (from activeQ, or from backoffQ when
// activeQ is empty and SchedulerPopFromBackoffQ is on) and returns it in
// flight; after Close it returns nil, nil. It does not take the queue's
// main lock.
func (p *PriorityQueue) Pop(logger logr.Logger) (*schedcore.QueuedPodInfo, error) {
	return p.activeQ.pop(logger)
}

// TryPop is Pop without blocking, for synchronous drivers that run no
// flush goroutine: it first moves the pods whose backoff ended to activeQ
// (what Run's flush would have done by now), then pops if it can.
func (p *PriorityQueue) TryPop(logger logr.Logger) (*schedcore.QueuedPodInfo, bool) {
	p.flushBackoffQCompleted(logger)
	return p.activeQ.tryPop(logger)
}

// Done tells the queue the pod's attempt has ended; the events kept for
// it are dropped.
func (p *PriorityQueue) Done(uid types.UID) { p.activeQ.done(uid) }

// InFlightPods lists the pods popped and not yet Done, oldest first.
func (p *PriorityQueue) InFlightPods() []*v1.Pod { return p.activeQ.listInFlightPods() }
