package schedcore

import (
	"context"
	"math/rand"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Binder writes a binding decision somewhere: into the in-memory state for
// dryrun, through the pods/binding subresource for run.
type Binder interface {
	Bind(ctx context.Context, pod *v1.Pod, nodeName string) error
}

// EventRecorder records Kubernetes Events (Scheduled, FailedScheduling,
// Preempted). The dry-run uses a no-op recorder.
type EventRecorder interface {
	Eventf(regarding runtime.Object, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// PodNominator knows which pods are nominated to which nodes (by preemption).
type PodNominator interface {
	NominatedPodsForNode(nodeName string) []*PodInfo
}

// NominatedPodCounter is implemented by nominators that can say cheaply
// whether any pod is nominated at all; the filter loop then skips the
// per-node lookups in cycles where none is.
type NominatedPodCounter interface {
	NumNominatedPods() int
}

// Evictor carries out a preemption decision in the driver's cluster: run
// sets the victim's DisruptionTarget condition and deletes it through the
// API, dryrun removes it from the in-memory state.
type Evictor interface {
	// PreemptPod evicts victim to make room for preemptor on node. A victim
	// that is already gone is not an error.
	PreemptPod(ctx context.Context, preemptor, victim *v1.Pod, node string) error
	// ClearNominatedNodeName clears status.nominatedNodeName of pods (the
	// lower-priority pods nominated to the node a preemptor now claims).
	ClearNominatedNodeName(ctx context.Context, pods []*v1.Pod) error
}

// PodGroupEvictor is implemented by an Evictor that can evict for a pod
// group (kube's executor with a podgroup preemptor): run sets the
// DisruptionTarget condition with the message "<schedulerName>: preempting
// to accommodate a higher priority podgroup" and deletes the victim, dryrun
// removes it. Pod-group preemption without it evicts through PreemptPod
// with the group's first member as the preemptor.
type PodGroupEvictor interface {
	PreemptPodForPodGroup(ctx context.Context, pg *schedulingv1beta1.PodGroup, schedulerName string, victim *v1.Pod) error
}

// PreemptionHooks are what a preemption PostFilter needs from the driver.
// The zero value computes preemption without acting on it (explain).
type PreemptionHooks struct {
	// PDBs lists the cluster's PodDisruptionBudgets; nil means none.
	PDBs func() []*policyv1.PodDisruptionBudget
	// Evictor deletes victims; nil means victims are only computed.
	Evictor Evictor
	// Offset picks where among n candidate nodes the dry-run preemption
	// scan starts. kube-scheduler picks at random; nil means 0, which is
	// what the dry-run uses unless seeded.
	Offset func(n int32) int32
	// Attempted and Victims, when set, observe each PostFilter run and the
	// number of victims of each preemption carried out (the
	// preemption_attempts_total and preemption_victims metrics).
	Attempted func()
	Victims   func(n int)
	// GroupAttempted, GroupVictims and Disruptions observe pod-group
	// preemption: each PodGroupPostFilter run with its status code
	// (workload_preemption_attempts_total{result}), the victims of each
	// carried out (workload_preemption_victims), and the pod-group units
	// among the victims of any preemption, by preemptor type "pod" or
	// "podgroup" (preemption_workload_disruptions{preemptor}).
	GroupAttempted func(result string)
	GroupVictims   func(n int)
	Disruptions    func(preemptor string, n int)
}

// Handle is what the framework gives plugins: the cycle's snapshot, a
// clock, a seeded random source, a logger, the feature gates, a
// parallelizer, and the driver's write hooks (binder, volume binder,
// evictions, events). It is built once by NewHandle from options and never
// changes afterwards, so plugins may keep it and read it from any
// goroutine. The one thing bound later is the scheduling queue (the
// nominator and activator): the queue is built from the profiles, so
// NewScheduler points every profile's handle at it before the first cycle.
type Handle struct {
	snapshot     *Snapshot
	parallelizer Parallelizer
	framework    Framework

	clock           clock.WithTicker
	rand            *rand.Rand
	logger          logr.Logger
	features        Features
	binder          Binder
	events          EventRecorder
	nominator       PodNominator
	volumeBinder    VolumeBinder
	objects         ObjectLister
	preemption      PreemptionHooks
	selectorSources func() *SelectorSources
	dra             *DRAManager
	claimWriter     ResourceClaimWriter
	podGroups       PodGroupManager
	// queue is the scheduling queue, set by NewScheduler: the nominator
	// (unless the handle has its own) and the activator.
	queue SchedulingQueue
}

// HandleOption sets one part of a Handle at construction.
type HandleOption func(*Handle)

// WithClock sets the clock Permit timeouts and plugins follow (default
// the real clock); drivers that simulate time pass a fake one.
func WithClock(c clock.WithTicker) HandleOption { return func(h *Handle) { h.clock = c } }

// WithSeed seeds the handle's random source (default 1).
func WithSeed(seed int64) HandleOption {
	return func(h *Handle) { h.rand = rand.New(rand.NewSource(seed)) }
}

// WithLogger sets the logger (default discard).
func WithLogger(l logr.Logger) HandleOption {
	return func(h *Handle) {
		if l.GetSink() != nil {
			h.logger = l
		}
	}
}

// WithFeatures sets the feature gates (default DefaultFeatures).
func WithFeatures(f Features) HandleOption { return func(h *Handle) { h.features = f } }

// WithBinder sets where DefaultBinder binds (default none: binding fails).
func WithBinder(b Binder) HandleOption { return func(h *Handle) { h.binder = b } }

// WithEvents sets the event sink (default none).
func WithEvents(e EventRecorder) HandleOption { return func(h *Handle) { h.events = e } }

// WithNominator sets where nominated pods come from when no scheduling
// queue does (explain, which holds the cluster's nominations itself).
func WithNominator(n PodNominator) HandleOption { return func(h *Handle) { h.nominator = n } }

// WithVolumeBinder sets where VolumeBinding's PreBind writes go (default
// none: the driver binds no volumes).
func WithVolumeBinder(b VolumeBinder) HandleOption { return func(h *Handle) { h.volumeBinder = b } }

// WithObjects sets the lister of what the cache does not hold: every pod
// the driver knows (pending ones too) and objects of other kinds such as
// PodGroups (default none).
func WithObjects(o ObjectLister) HandleOption { return func(h *Handle) { h.objects = o } }

// WithPreemption sets the driver's side of preemption (PDBs, evictions).
func WithPreemption(p PreemptionHooks) HandleOption { return func(h *Handle) { h.preemption = p } }

// WithDRA sets the manager of the Dynamic Resource Allocation objects
// and in-flight allocations, shared by all profiles (default none: pods
// with claims wait for them).
func WithDRA(m *DRAManager) HandleOption { return func(h *Handle) { h.dra = m } }

// WithClaimWriter sets where DynamicResources' API writes (claim
// allocation and reservation) go (default none: PreBind of a pod with
// claims fails).
func WithClaimWriter(w ResourceClaimWriter) HandleOption {
	return func(h *Handle) { h.claimWriter = w }
}

// WithPodGroupManager sets where PodGroupManager reads the pod groups
// outside a cycle (the cache; default none). Within a cycle plugins read
// the snapshot's: Snapshot().PodGroupStates() and PodGroups().
func WithPodGroupManager(m PodGroupManager) HandleOption {
	return func(h *Handle) { h.podGroups = m }
}

// WithSelectorSources sets where queueing hints read the current
// Services, ReplicationControllers, ReplicaSets and StatefulSets, safely
// from any goroutine: hints run on the driver's event goroutines while a
// cycle refreshes the snapshot, so they must not read
// Snapshot().Selectors. Default: the snapshot's (one goroutine only).
func WithSelectorSources(f func() *SelectorSources) HandleOption {
	return func(h *Handle) { h.selectorSources = f }
}

// PodActivator is the part of the scheduling queue plugins may use: move
// pods waiting in backoffQ or the unschedulable pool to activeQ.
type PodActivator interface {
	Activate(logger logr.Logger, pods map[string]*v1.Pod)
}

// ObjectLister gives plugins read access to cluster objects beyond nodes
// and the pods assigned to them. The dry-run serves it from the snapshot,
// run from informers. Returned objects must not be modified.
type ObjectLister interface {
	// Pods lists the pods of a namespace, pending and assigned, in a
	// stable order.
	Pods(namespace string) []*v1.Pod
	// Get returns an object by apiVersion ("group/version"), kind,
	// namespace and name: a typed object for kinds of k8s.io/api (a
	// scheduling.k8s.io/v1beta1 PodGroup is a *schedulingv1beta1.PodGroup)
	// or an *unstructured.Unstructured for custom resources. ok is false
	// when there is no such object.
	Get(apiVersion, kind, namespace, name string) (obj runtime.Object, ok bool)
}

// Activate moves pods to activeQ, as kube's Handle.Activate.
func (h *Handle) Activate(pods map[string]*v1.Pod) {
	if h.queue != nil && len(pods) > 0 {
		h.queue.Activate(h.logger, pods)
	}
}

// GetWaitingPod returns a pod waiting at Permit in this profile, or nil.
func (h *Handle) GetWaitingPod(uid types.UID) WaitingPod {
	if h.framework == nil {
		return nil
	}
	return h.framework.GetWaitingPod(uid)
}

// IterateOverWaitingPods calls fn for each pod waiting at Permit.
func (h *Handle) IterateOverWaitingPods(fn func(WaitingPod)) {
	if h.framework != nil {
		h.framework.IterateOverWaitingPods(fn)
	}
}

// RejectWaitingPod rejects a waiting pod; it reports whether it was waiting.
func (h *Handle) RejectWaitingPod(uid types.UID) bool {
	return h.framework != nil && h.framework.RejectWaitingPod(uid)
}

// NewHandle returns a handle over snapshot (nil: an empty one) with the
// given parallelism (0 or less: DefaultParallelism) and options.
func NewHandle(snapshot *Snapshot, parallelism int, opts ...HandleOption) *Handle {
	if snapshot == nil {
		snapshot = NewEmptySnapshot()
	}
	if parallelism <= 0 {
		parallelism = DefaultParallelism
	}
	h := &Handle{snapshot: snapshot, parallelizer: NewParallelizer(parallelism), clock: clock.RealClock{}, rand: rand.New(rand.NewSource(1)), features: DefaultFeatures, logger: logr.Discard()}
	for _, o := range opts {
		o(h)
	}
	return h
}

// Snapshot returns the current cycle's snapshot.
func (h *Handle) Snapshot() *Snapshot { return h.snapshot }

// PodGroupManager returns the cache's pod groups (kube's
// Handle.PodGroupManager), what PreEnqueue reads; nil when the driver set
// none.
func (h *Handle) PodGroupManager() PodGroupManager { return h.podGroups }

// Parallelizer returns the worker pool plugins may use in PreFilter/PreScore.
func (h *Handle) Parallelizer() Parallelizer { return h.parallelizer }

// Framework returns the profile's framework (for PostFilter plugins that
// re-run filters, such as preemption). Nil until the profile is built.
func (h *Handle) Framework() Framework { return h.framework }

// SetFramework points the handle at the profile's framework. The runtime
// calls it once, when it builds the profile over the handle.
func (h *Handle) SetFramework(f Framework) { h.framework = f }

// SetQueue points the handle at the scheduling queue (the nominator,
// unless the handle has its own, and the activator). The runtime's
// scheduler calls it once, before the first cycle.
func (h *Handle) SetQueue(q SchedulingQueue) { h.queue = q }

// Clock is the clock; drivers that simulate time inject a fake one.
func (h *Handle) Clock() clock.WithTicker { return h.clock }

// Rand is the handle's seeded random source (one goroutine at a time).
func (h *Handle) Rand() *rand.Rand { return h.rand }

// Logger is the logger; it discards unless the driver set one.
func (h *Handle) Logger() logr.Logger { return h.logger }

// Features are the feature gates in force.
func (h *Handle) Features() Features { return h.features }

// Binder is used by DefaultBinder; nil means binding is not possible.
func (h *Handle) Binder() Binder { return h.binder }

// Events is the event sink; nil means none.
func (h *Handle) Events() EventRecorder { return h.events }

// VolumeBinder makes VolumeBinding's PreBind writes; nil means the driver
// binds no volumes.
func (h *Handle) VolumeBinder() VolumeBinder { return h.volumeBinder }

// Objects lists pods and objects of other kinds; nil means none.
func (h *Handle) Objects() ObjectLister { return h.objects }

// Preemption is the driver's side of preemption (PDBs, evictions).
func (h *Handle) Preemption() PreemptionHooks { return h.preemption }

// DRA holds the DRA objects and in-flight allocations; nil means none.
func (h *Handle) DRA() *DRAManager { return h.dra }

// ClaimWriter makes DynamicResources' API writes; nil means the driver
// writes none.
func (h *Handle) ClaimWriter() ResourceClaimWriter { return h.claimWriter }

// SelectorSources returns the current default-spreading selector sources,
// safe from any goroutine when the driver set them, else the snapshot's.
func (h *Handle) SelectorSources() *SelectorSources {
	if h.selectorSources != nil {
		return h.selectorSources()
	}
	return h.snapshot.Selectors
}

// Nominator answers nominated pods per node: the handle's own, else the
// scheduling queue; nil means none.
func (h *Handle) Nominator() PodNominator {
	if h.nominator != nil {
		return h.nominator
	}
	if h.queue != nil {
		return h.queue
	}
	return nil
}

// NominatedPodsForNode returns pods nominated to a node, if a nominator is set.
func (h *Handle) NominatedPodsForNode(node string) []*PodInfo {
	if n := h.Nominator(); n != nil {
		return n.NominatedPodsForNode(node)
	}
	return nil
}
