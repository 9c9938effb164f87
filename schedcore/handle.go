package schedcore

import (
	"context"
	"math/rand"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
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
}

// Handle is what the framework gives plugins: the cycle's snapshot, a clock,
// a seeded random source, a logger, the feature gates, a parallelizer, and
// the binder and event sink of the driver. It is small on purpose.
type Handle struct {
	snapshot     *Snapshot
	parallelizer Parallelizer
	framework    *Framework

	// Clock is injected so queues and timeouts can be tested without sleeps.
	Clock clock.WithTicker
	// Rand is seeded by the driver for reproducible runs.
	Rand *rand.Rand
	// Logger is a logr logger; the zero value discards.
	Logger logr.Logger
	// Features are the feature gates in force.
	Features Features
	// Binder is used by DefaultBinder; nil means binding is not possible.
	Binder Binder
	// Events is the event sink; nil means none.
	Events EventRecorder
	// Nominator answers nominated pods per node; nil means none.
	Nominator PodNominator
	// VolumeBinder makes VolumeBinding's PreBind writes; nil means the
	// driver binds no volumes.
	VolumeBinder VolumeBinder
	// DRA holds the Dynamic Resource Allocation objects and in-flight
	// allocations, shared by all profiles; nil means none.
	DRA *DRAManager
	// ClaimWriter makes DynamicResources' API writes (claim allocation
	// and reservation); nil means the driver writes none.
	ClaimWriter ResourceClaimWriter
	// Activator moves pending pods to activeQ (the scheduling queue); nil
	// means Activate does nothing.
	Activator PodActivator
	// Objects lists what the cache does not hold: every pod the driver
	// knows (pending ones too) and objects of other kinds such as
	// PodGroups; nil means none.
	Objects ObjectLister
	// Preemption is the driver's side of preemption (PDBs, evictions).
	Preemption PreemptionHooks
	// SelectorSources, when set, returns the current Services,
	// ReplicationControllers, ReplicaSets and StatefulSets, safely from any
	// goroutine: queueing hints run on the driver's event goroutines while
	// a cycle refreshes the snapshot, so they must not read
	// Snapshot().Selectors. Nil: the snapshot's (the dry-run, one goroutine).
	SelectorSources func() *SelectorSources
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
	if h.Activator != nil && len(pods) > 0 {
		h.Activator.Activate(h.Logger, pods)
	}
}

// GetWaitingPod returns a pod waiting at Permit in this profile, or nil.
func (h *Handle) GetWaitingPod(uid types.UID) *WaitingPod {
	if h.framework == nil {
		return nil
	}
	return h.framework.GetWaitingPod(uid)
}

// IterateOverWaitingPods calls fn for each pod waiting at Permit.
func (h *Handle) IterateOverWaitingPods(fn func(*WaitingPod)) {
	if h.framework != nil {
		h.framework.IterateOverWaitingPods(fn)
	}
}

// RejectWaitingPod rejects a waiting pod; it reports whether it was waiting.
func (h *Handle) RejectWaitingPod(uid types.UID) bool {
	return h.framework != nil && h.framework.RejectWaitingPod(uid)
}

// NewHandle returns a handle over snapshot with the given parallelism.
func NewHandle(snapshot *Snapshot, parallelism int) *Handle {
	if snapshot == nil {
		snapshot = NewEmptySnapshot()
	}
	if parallelism <= 0 {
		parallelism = DefaultParallelism
	}
	return &Handle{snapshot: snapshot, parallelizer: NewParallelizer(parallelism), Clock: clock.RealClock{}, Rand: rand.New(rand.NewSource(1)), Features: DefaultFeatures, Logger: logr.Discard()}
}

// Snapshot returns the current cycle's snapshot.
func (h *Handle) Snapshot() *Snapshot { return h.snapshot }

// SetSnapshot replaces the snapshot (drivers only).
func (h *Handle) SetSnapshot(s *Snapshot) { h.snapshot = s }

// Parallelizer returns the worker pool plugins may use in PreFilter/PreScore.
func (h *Handle) Parallelizer() Parallelizer { return h.parallelizer }

// Framework returns the profile's framework (for PostFilter plugins that
// re-run filters, such as preemption). Nil until the profile is built.
func (h *Handle) Framework() *Framework { return h.framework }

// NominatedPodsForNode returns pods nominated to a node, if a nominator is set.
func (h *Handle) NominatedPodsForNode(node string) []*PodInfo {
	if h.Nominator == nil {
		return nil
	}
	return h.Nominator.NominatedPodsForNode(node)
}
