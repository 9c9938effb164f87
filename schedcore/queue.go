package schedcore

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
)

// SchedulingQueue is what the scheduler loop needs from the queue: the
// active / backoff / unschedulable queues with event-driven requeueing, plus
// the nominator. The implementation is schedcore/queue; the interface lives
// here so the loop does not import it.
type SchedulingQueue interface {
	PodNominator
	// Add adds a new pending pod (PreEnqueue runs first; gated pods wait).
	Add(logger logr.Logger, pod *v1.Pod)
	// Update updates a pending pod; it may move between queues.
	Update(logger logr.Logger, oldPod, newPod *v1.Pod)
	// Delete removes a pending pod from every queue.
	Delete(pod *v1.Pod)
	// Activate moves the given pods to activeQ if they wait elsewhere.
	Activate(logger logr.Logger, pods map[string]*v1.Pod)
	// AddUnschedulableIfNotPresent puts back a pod whose attempt failed; it
	// goes to backoffQ or the unschedulable pool depending on the events
	// received while it was in flight.
	AddUnschedulableIfNotPresent(logger logr.Logger, qpi *QueuedPodInfo, podSchedulingCycle int64) error
	// AddAttemptedPodGroupIfNeeded requeues a popped pod group entity at
	// the end of its pod-group cycle, with the cycle's status (kube's
	// function of that name); the members the cycle handed back through
	// AddUnschedulableIfNotPresent come back inside it.
	AddAttemptedPodGroupIfNeeded(logger logr.Logger, group *QueuedPodInfo, schedulingCycle int64, status *Status) error
	// AddPodGroup, UpdatePodGroup and DeletePodGroup follow the observed
	// PodGroups (GenericWorkload): members wait for their PodGroup, and
	// go back to waiting when it is deleted.
	AddPodGroup(logger logr.Logger, pg *schedulingv1beta1.PodGroup)
	UpdatePodGroup(logger logr.Logger, pg *schedulingv1beta1.PodGroup)
	DeletePodGroup(logger logr.Logger, pg *schedulingv1beta1.PodGroup)
	// SchedulingCycle returns the number of entities popped so far.
	SchedulingCycle() int64
	// Pop blocks until an entity is in activeQ or the queue is closed. The
	// entity is a pod, or with GenericWorkload a pod group: then its Group
	// is set, Group.Members are the members to schedule (each in flight
	// until Done or AddUnschedulableIfNotPresent) and Pod is only a
	// stand-in naming the group.
	Pop(logger logr.Logger) (*QueuedPodInfo, error)
	// TryPop pops without blocking; ok is false when activeQ is empty.
	TryPop(logger logr.Logger) (qpi *QueuedPodInfo, ok bool)
	// Done tells the queue the pod's scheduling attempt has finished.
	Done(uid types.UID)
	// MoveAllToActiveOrBackoffQueue requeues unschedulable pods whose
	// rejector plugins' hints say the event may help. preCheck, if set,
	// filters candidates first.
	MoveAllToActiveOrBackoffQueue(logger logr.Logger, event ClusterEvent, oldObj, newObj any, preCheck func(*v1.Pod) bool)
	// AssignedPodAdded is called when a pod is bound or assumed elsewhere.
	AssignedPodAdded(logger logr.Logger, pod *v1.Pod)
	// AssignedPodUpdated is called when an assigned pod changes.
	AssignedPodUpdated(logger logr.Logger, oldPod, newPod *v1.Pod, event ClusterEvent)
	// AddNominatedPod records a nomination (from PostFilter).
	AddNominatedPod(logger logr.Logger, pi *PodInfo, nominating *NominatingInfo)
	// DeleteNominatedPodIfExists forgets a pod's nomination.
	DeleteNominatedPodIfExists(pod *v1.Pod)
	// PendingPods lists pending pods and the kube summary line
	// "activeQ:%v; backoffQ:%v; unschedulableEntities:%v".
	PendingPods() ([]*v1.Pod, string)
	// Lengths reports the size of each sub-queue (for metrics and top).
	Lengths() QueueLengths
	// Run starts the periodic flushes (backoff every second, leftover
	// unschedulable pods every 30s).
	Run(logger logr.Logger)
	// Close wakes Pop callers and stops the flushes.
	Close()
}

// QueueLengths are the sizes of the sub-queues, in pods (a queued pod
// group counts its members).
type QueueLengths struct {
	Active, Backoff, Unschedulable, Gated int
	// PendingPodGroupPods are members waiting for their in-flight group,
	// IncompletePodGroupPods members waiting for their PodGroup to be
	// observed (GenericWorkload only).
	PendingPodGroupPods, IncompletePodGroupPods int
}
