package live

import (
	"time"

	"github.com/go-logr/logr"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/queue"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// The pod events kube-scheduler's handlers send, by their metrics labels.
var (
	eventAssignedPodAdd       = schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Add}
	eventAssignedPodUpdate    = schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Update}
	eventAssignedPodDelete    = schedcore.EventAssignedPodDelete
	eventUnscheduledPodAdd    = schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Add}
	eventUnscheduledPodUpdate = schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Update}
	eventUnscheduledPodDelete = schedcore.ClusterEvent{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Delete}
)

// handlers turn informer events into cache updates and queue events, as
// kube-scheduler v1.37's eventhandlers.go: assigned pods go to the cache and
// wake the pods their change may help; unassigned pods of our profiles go to
// the queue; nodes go to the cache with one event per kind of change; the
// other resources only wake pods (after the storage or selector state the
// plugins read is refreshed). Deletion tombstones are unwrapped before the
// engine sees them.
type handlers struct {
	cache    *schedcore.Cache
	queue    schedcore.SchedulingQueue
	profiles map[string]*schedruntime.Framework
	features schedcore.Features
	logger   logr.Logger
	// observe receives the handling time per event label; nil ignores it.
	observe func(event string, d time.Duration)
	// refreshStorage and refreshSelectors rebuild the PVC/PV/StorageClass/
	// CSINode state and the Service/RC/ReplicaSet/StatefulSet selector
	// sources from the listers; nil does nothing.
	refreshStorage   func()
	refreshSelectors func()
	// gangs is set when a profile runs Coscheduling: a new pod may then
	// complete a gang held in PreEnqueue, so its Add is also replayed to
	// the unschedulable pool (kube does so with GenericWorkload, which
	// features.GenericWorkload says).
	gangs bool
}

func (h *handlers) since(event schedcore.ClusterEvent, start time.Time) {
	if h.observe != nil {
		h.observe(event.Label(), time.Since(start))
	}
}

func (h *handlers) responsibleForPod(pod *v1.Pod) bool {
	_, ok := h.profiles[pod.Spec.SchedulerName]
	return ok
}

func assignedPod(pod *v1.Pod) bool { return pod.Spec.NodeName != "" }

// unwrap returns the object of a deletion tombstone (the informer missed the
// delete and only knows the last state it saw), or obj itself.
func unwrap(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}

func (h *handlers) podFuncs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{AddFunc: h.addPod, UpdateFunc: h.updatePod, DeleteFunc: h.deletePod}
}

func (h *handlers) addPod(obj any) {
	pod, ok := obj.(*v1.Pod)
	if !ok {
		h.logger.Error(nil, "Cannot convert to *v1.Pod", "obj", obj)
		return
	}
	if h.responsibleForPod(pod) && !assignedPod(pod) {
		h.addPodToSchedulingQueue(pod)
	}
	if assignedPod(pod) {
		h.addAssignedPodToCache(pod)
	}
}

func (h *handlers) updatePod(oldObj, newObj any) {
	oldPod, ok1 := oldObj.(*v1.Pod)
	newPod, ok2 := newObj.(*v1.Pod)
	if !ok1 || !ok2 {
		h.logger.Error(nil, "Cannot convert to *v1.Pod", "oldObj", oldObj, "newObj", newObj)
		return
	}
	switch {
	case assignedPod(oldPod):
		h.updateAssignedPodInCache(oldPod, newPod)
	case assignedPod(newPod):
		// The pod was bound: add it to the cache (which confirms an assumed
		// pod) and, should someone else have bound it, drop it from the queue.
		h.addAssignedPodToCache(newPod)
		if h.responsibleForPod(oldPod) {
			h.deletePodFromSchedulingQueue(oldPod, true)
		}
	case h.responsibleForPod(oldPod):
		h.updatePodInSchedulingQueue(oldPod, newPod)
	}
}

func (h *handlers) deletePod(obj any) {
	switch t := obj.(type) {
	case *v1.Pod:
		if assignedPod(t) {
			h.deleteAssignedPodFromCache(t)
		} else if h.responsibleForPod(t) {
			h.deletePodFromSchedulingQueue(t, false)
		}
	case cache.DeletedFinalStateUnknown:
		pod, ok := t.Obj.(*v1.Pod)
		if !ok {
			h.logger.Error(nil, "Cannot convert to *v1.Pod", "obj", t.Obj)
			return
		}
		// The last known state may be stale: clean up both sides.
		h.deleteAssignedPodFromCache(pod)
		if h.responsibleForPod(pod) {
			h.deletePodFromSchedulingQueue(pod, false)
		}
	default:
		h.logger.Error(nil, "Unable to handle object", "obj", obj)
	}
}

func (h *handlers) addPodToSchedulingQueue(pod *v1.Pod) {
	defer h.since(eventUnscheduledPodAdd, time.Now())
	h.logger.V(3).Info("Add event for unscheduled pod", "pod", schedcore.PodName(pod))
	h.cache.AddPodGroupMember(pod)
	h.queue.Add(h.logger, pod)
	if h.gangs || h.features.GenericWorkload {
		h.queue.MoveAllToActiveOrBackoffQueue(h.logger, eventUnscheduledPodAdd, nil, pod, nil)
	}
}

func (h *handlers) updatePodInSchedulingQueue(oldPod, newPod *v1.Pod) {
	// Identical objects (a resync) would let a duplicate of the pod through
	// scheduling (kubernetes#96071).
	if oldPod.ResourceVersion == newPod.ResourceVersion {
		return
	}
	defer h.since(eventUnscheduledPodUpdate, time.Now())
	h.cache.UpdatePodGroupMember(oldPod, newPod)
	if h.cache.IsAssumedPod(newPod) {
		if newPod.DeletionTimestamp != nil && oldPod.DeletionTimestamp == nil {
			h.handleAssumedPodDeletion(newPod)
		}
		return
	}
	h.logger.V(4).Info("Update event for unscheduled pod", "pod", schedcore.PodName(newPod))
	h.queue.Update(h.logger, oldPod, newPod)
	if hasNominatedNodeNameChanged(oldPod, newPod) {
		// Lower or equal priority pods counted the pod on its old nominated
		// node as if it ran there: that room is free now.
		h.queue.MoveAllToActiveOrBackoffQueue(h.logger, eventAssignedPodDelete, oldPod, nil, lowerOrEqualPriority(schedcore.PodPriority(oldPod)))
	}
}

func hasNominatedNodeNameChanged(oldPod, newPod *v1.Pod) bool {
	return oldPod.Status.NominatedNodeName != "" && oldPod.Status.NominatedNodeName != newPod.Status.NominatedNodeName
}

func lowerOrEqualPriority(p int32) func(*v1.Pod) bool {
	return func(pod *v1.Pod) bool { return schedcore.PodPriority(pod) <= p }
}

// deletePodFromSchedulingQueue removes a pending pod; inBinding means it
// left the queue because it was bound, not deleted.
func (h *handlers) deletePodFromSchedulingQueue(pod *v1.Pod, inBinding bool) {
	defer h.since(eventUnscheduledPodDelete, time.Now())
	h.logger.V(3).Info("Delete event for unscheduled pod", "pod", schedcore.PodName(pod))
	h.queue.Delete(pod)
	if inBinding {
		return
	}
	if h.cache.IsAssumedPod(pod) {
		h.handleAssumedPodDeletion(pod)
		return
	}
	// Not assumed: the pod group state forgets it here (kube's comment).
	h.cache.RemovePodGroupMember(pod)
	if pod.Status.NominatedNodeName != "" {
		h.queue.MoveAllToActiveOrBackoffQueue(h.logger, eventAssignedPodDelete, pod, nil, lowerOrEqualPriority(schedcore.PodPriority(pod)))
	}
}

// handleAssumedPodDeletion frees at once what a pod deleted during its
// binding cycle holds: a pod waiting on Permit is rejected (its binding cycle
// then forgets it); otherwise it is forgotten here. Either way the room it
// held may fit others.
func (h *handlers) handleAssumedPodDeletion(pod *v1.Pod) {
	assumed, ok := h.cache.GetPod(pod)
	if !ok {
		return
	}
	fw := h.profiles[assumed.Spec.SchedulerName]
	if fw == nil {
		h.logger.Error(nil, "Unable to get profile for pod", "pod", schedcore.PodName(assumed))
		return
	}
	if w := fw.GetWaitingPod(assumed.UID); w != nil {
		w.Reject("", "removed")
	} else {
		h.cache.ForgetPod(assumed)
	}
	h.queue.MoveAllToActiveOrBackoffQueue(h.logger, eventAssignedPodDelete, assumed, nil, nil)
}

func (h *handlers) addAssignedPodToCache(pod *v1.Pod) {
	defer h.since(eventAssignedPodAdd, time.Now())
	h.logger.V(3).Info("Add event for scheduled pod", "pod", schedcore.PodName(pod))
	if err := h.cache.AddPod(pod); err != nil {
		h.logger.Error(err, "Scheduler cache AddPod failed", "pod", schedcore.PodName(pod))
	}
	h.queue.MoveAllToActiveOrBackoffQueue(h.logger, eventAssignedPodAdd, nil, pod, nil)
}

func (h *handlers) updateAssignedPodInCache(oldPod, newPod *v1.Pod) {
	start := time.Now()
	defer h.since(eventAssignedPodUpdate, start)
	h.logger.V(4).Info("Update event for scheduled pod", "pod", schedcore.PodName(oldPod))
	if err := h.cache.UpdatePod(oldPod, newPod); err != nil {
		h.logger.Error(err, "Scheduler cache UpdatePod failed", "pod", schedcore.PodName(oldPod))
	}
	for _, e := range queue.PodSchedulingPropertiesChange(newPod, oldPod, false, h.features) {
		h.queue.MoveAllToActiveOrBackoffQueue(h.logger, e, oldPod, newPod, nil)
		h.since(e, start)
	}
}

func (h *handlers) deleteAssignedPodFromCache(pod *v1.Pod) {
	defer h.since(eventAssignedPodDelete, time.Now())
	h.logger.V(3).Info("Delete event for scheduled pod", "pod", schedcore.PodName(pod))
	h.cache.RemovePod(pod)
	h.queue.MoveAllToActiveOrBackoffQueue(h.logger, eventAssignedPodDelete, pod, nil, nil)
}

func (h *handlers) nodeFuncs() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{AddFunc: h.addNode, UpdateFunc: h.updateNode, DeleteFunc: h.deleteNode}
}

func (h *handlers) addNode(obj any) {
	evt := schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add}
	defer h.since(evt, time.Now())
	node, ok := obj.(*v1.Node)
	if !ok {
		h.logger.Error(nil, "Cannot convert to *v1.Node", "obj", obj)
		return
	}
	h.logger.V(3).Info("Add event for node", "node", node.Name)
	h.cache.AddNode(node)
	h.queue.MoveAllToActiveOrBackoffQueue(h.logger, evt, nil, node, nil)
}

func (h *handlers) updateNode(oldObj, newObj any) {
	start := time.Now()
	oldNode, ok1 := oldObj.(*v1.Node)
	newNode, ok2 := newObj.(*v1.Node)
	if !ok1 || !ok2 {
		h.logger.Error(nil, "Cannot convert to *v1.Node", "oldObj", oldObj, "newObj", newObj)
		return
	}
	h.logger.V(4).Info("Update event for node", "node", newNode.Name)
	h.cache.UpdateNode(oldNode, newNode)
	// Only changes that may make pods schedulable requeue them.
	for _, e := range schedcore.NodeSchedulingPropertiesChange(newNode, oldNode) {
		h.queue.MoveAllToActiveOrBackoffQueue(h.logger, e, oldNode, newNode, nil)
		h.since(e, start)
	}
}

func (h *handlers) deleteNode(obj any) {
	evt := schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Delete}
	defer h.since(evt, time.Now())
	node, ok := unwrap(obj).(*v1.Node)
	if !ok {
		h.logger.Error(nil, "Cannot convert to *v1.Node", "obj", obj)
		return
	}
	h.queue.MoveAllToActiveOrBackoffQueue(h.logger, evt, node, nil, nil)
	h.logger.V(3).Info("Delete event for node", "node", node.Name)
	h.cache.RemoveNode(node)
}

func (h *handlers) namespaceFuncs() cache.ResourceEventHandlerFuncs {
	return h.resourceFuncs(schedcore.Namespace, func(obj any, deleted bool) {
		ns, ok := obj.(*v1.Namespace)
		if !ok {
			return
		}
		if deleted {
			h.cache.RemoveNamespace(ns)
		} else {
			h.cache.AddNamespace(ns)
		}
	})
}

func (h *handlers) storageFuncs(r schedcore.EventResource) cache.ResourceEventHandlerFuncs {
	return h.resourceFuncs(r, func(any, bool) {
		if h.refreshStorage != nil {
			h.refreshStorage()
		}
	})
}

// resourceFuncs is kube's buildEvtResHandler: each Add/Update/Delete of the
// resource is an event that may requeue pods. update, if set, first brings
// the engine's view up to date (deleted is true for a delete).
func (h *handlers) resourceFuncs(r schedcore.EventResource, update func(obj any, deleted bool)) cache.ResourceEventHandlerFuncs {
	add := schedcore.ClusterEvent{Resource: r, ActionType: schedcore.Add}
	upd := schedcore.ClusterEvent{Resource: r, ActionType: schedcore.Update}
	del := schedcore.ClusterEvent{Resource: r, ActionType: schedcore.Delete}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			defer h.since(add, time.Now())
			update(obj, false)
			h.queue.MoveAllToActiveOrBackoffQueue(h.logger, add, nil, obj, nil)
		},
		UpdateFunc: func(oldObj, newObj any) {
			defer h.since(upd, time.Now())
			update(newObj, false)
			h.queue.MoveAllToActiveOrBackoffQueue(h.logger, upd, oldObj, newObj, nil)
		},
		DeleteFunc: func(obj any) {
			defer h.since(del, time.Now())
			obj = unwrap(obj)
			update(obj, true)
			h.queue.MoveAllToActiveOrBackoffQueue(h.logger, del, obj, nil, nil)
		},
	}
}

// selectorFuncs keep the default spreading selectors (Services,
// ReplicationControllers, ReplicaSets, StatefulSets) current. No plugin
// registers events for them, as in kube, so nothing is requeued; status
// updates (a ReplicaSet's replica counts) do not rebuild anything.
func (h *handlers) selectorFuncs() cache.ResourceEventHandlerFuncs {
	refresh := func() {
		if h.refreshSelectors != nil {
			h.refreshSelectors()
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { refresh() },
		UpdateFunc: func(oldObj, newObj any) {
			if selectorChanged(oldObj, newObj) {
				refresh()
			}
		},
		DeleteFunc: func(any) { refresh() },
	}
}

// selectorChanged reports whether an update changed what DefaultSelector
// reads: the spec's selector.
func selectorChanged(oldObj, newObj any) bool {
	switch o := oldObj.(type) {
	case *v1.Service:
		n, ok := newObj.(*v1.Service)
		return !ok || !equality.Semantic.DeepEqual(o.Spec.Selector, n.Spec.Selector)
	case *v1.ReplicationController:
		n, ok := newObj.(*v1.ReplicationController)
		return !ok || !equality.Semantic.DeepEqual(o.Spec.Selector, n.Spec.Selector)
	case *appsv1.ReplicaSet:
		n, ok := newObj.(*appsv1.ReplicaSet)
		return !ok || !equality.Semantic.DeepEqual(o.Spec.Selector, n.Spec.Selector)
	case *appsv1.StatefulSet:
		n, ok := newObj.(*appsv1.StatefulSet)
		return !ok || !equality.Semantic.DeepEqual(o.Spec.Selector, n.Spec.Selector)
	}
	return true
}
