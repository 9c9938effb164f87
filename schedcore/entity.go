package schedcore

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// EntityKeyType is the kind of a queued entity (kube's fwk.EntityKeyType).
type EntityKeyType string

// The entity kinds. CompositePodGroup (alpha, off in v1.37) is not
// modelled.
const (
	PodKeyType      EntityKeyType = "pod"
	PodGroupKeyType EntityKeyType = "podgroup"
)

// EntityKey names one queued entity, a pod or a pod group (kube's
// fwk.EntityKey); its String form, "TYPE/NS/NAME", is kube's queue key.
type EntityKey struct {
	Type      EntityKeyType
	Namespace string
	Name      string
}

// String returns "TYPE/NS/NAME".
func (k EntityKey) String() string { return string(k.Type) + "/" + k.Namespace + "/" + k.Name }

// PodEntityKey returns a pod's entity key (PodKey is the cache's string
// key of a pod).
func PodEntityKey(namespace, name string) EntityKey {
	return EntityKey{Type: PodKeyType, Namespace: namespace, Name: name}
}

// PodGroupKey returns a pod group's entity key.
func PodGroupKey(namespace, name string) EntityKey {
	return EntityKey{Type: PodGroupKeyType, Namespace: namespace, Name: name}
}

// PodGroupInfo is a pod group as a pod-group scheduling cycle sees it
// (kube's fwk.PodGroupInfo, without the CompositePodGroup parts): the
// PodGroup object and the members being scheduled, in the queue's member
// order (priority descending, attempts descending, queue timestamp
// ascending, then pod name).
type PodGroupInfo interface {
	// UnscheduledPods returns the members considered in this cycle, in
	// member order.
	UnscheduledPods() []*v1.Pod
	// Key returns the group's entity key.
	Key() EntityKey
	// PodGroup returns the PodGroup object (nil while it is not observed).
	PodGroup() *schedulingv1beta1.PodGroup
}

// PodGroupPriority is a PodGroup's spec.priority, 0 when unset or when
// the group is nil (kube's util.PodGroupPriority).
func PodGroupPriority(pg *schedulingv1beta1.PodGroup) int32 {
	if pg == nil || pg.Spec.Priority == nil {
		return 0
	}
	return *pg.Spec.Priority
}

// PodGroupNameOf returns the pod group a pod names in
// spec.schedulingGroup.podGroupName, and whether it names one.
func PodGroupNameOf(pod *v1.Pod) (string, bool) {
	if g := pod.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil {
		return *g.PodGroupName, true
	}
	return "", false
}

// QueuedPodGroupInfo is the pod-group part of a queued pod group entity
// (kube's framework.QueuedPodGroupInfo for a leaf PodGroup; the
// CompositePodGroup tree is not modelled): the PodGroup object and its
// queued members in member order. The entity itself is the
// *QueuedPodInfo whose Group points here; it carries the group's queueing
// fields. It implements PodGroupInfo for the pod-group cycle.
type QueuedPodGroupInfo struct {
	// Namespace and Name name the PodGroup.
	Namespace, Name string
	// Object is the observed PodGroup.
	Object *schedulingv1beta1.PodGroup
	// Members are the queued members in member order
	// (ComparePodGroupMembers); pods mirrors them.
	Members []*QueuedPodInfo
	pods    []*v1.Pod
}

var _ PodGroupInfo = (*QueuedPodGroupInfo)(nil)

// NewQueuedPodGroupInfo returns the queue entity of a pod group with no
// members yet. Its Pod is a stand-in carrying the group's namespace and
// name, the UID "podgroup/NS/NAME" (no API object has such a UID) and the
// schedulerName given (the first member's), so that the queue's logging,
// metrics and bookkeeping read an entity as they read a pod.
func NewQueuedPodGroupInfo(pg *schedulingv1beta1.PodGroup, schedulerName string) *QueuedPodInfo {
	key := PodGroupKey(pg.Namespace, pg.Name)
	standIn := &v1.Pod{}
	standIn.Namespace, standIn.Name, standIn.UID = pg.Namespace, pg.Name, types.UID(key.String())
	standIn.Spec.SchedulerName = schedulerName
	return &QueuedPodInfo{
		PodInfo:              &PodInfo{Pod: standIn},
		UnschedulablePlugins: sets.New[string](),
		PendingPlugins:       sets.New[string](),
		Group:                &QueuedPodGroupInfo{Namespace: pg.Namespace, Name: pg.Name, Object: pg},
	}
}

// UnscheduledPods returns the queued members in member order.
func (g *QueuedPodGroupInfo) UnscheduledPods() []*v1.Pod { return g.pods }

// Key returns "podgroup/NS/NAME" as an EntityKey.
func (g *QueuedPodGroupInfo) Key() EntityKey { return PodGroupKey(g.Namespace, g.Name) }

// PodGroup returns the PodGroup object.
func (g *QueuedPodGroupInfo) PodGroup() *schedulingv1beta1.PodGroup { return g.Object }

// Size is the number of queued members (kube's Size, which the group
// backoff's cap grows with).
func (g *QueuedPodGroupInfo) Size() int { return len(g.Members) }

// AddPod inserts a member at its place in member order; a pod of another
// namespace or group is ignored, as kube's AddPod does.
func (g *QueuedPodGroupInfo) AddPod(q *QueuedPodInfo) {
	name, ok := PodGroupNameOf(q.Pod)
	if !ok || name != g.Name || q.Pod.Namespace != g.Namespace || g.Object == nil {
		return
	}
	i, _ := slices.BinarySearchFunc(g.Members, q, ComparePodGroupMembers)
	g.Members = slices.Insert(g.Members, i, q)
	g.pods = slices.Insert(g.pods, i, q.Pod)
}

// RemovePod removes the member with the pod's namespace and name and
// returns it, or nil.
func (g *QueuedPodGroupInfo) RemovePod(pod *v1.Pod) *QueuedPodInfo {
	for i, m := range g.Members {
		if m.Pod.Name == pod.Name && m.Pod.Namespace == pod.Namespace {
			g.Members = slices.Delete(g.Members, i, i+1)
			g.pods = slices.Delete(g.pods, i, i+1)
			return m
		}
	}
	return nil
}

// UpdatePod replaces the pod of the member with the pod's namespace and
// name and returns the member, or nil. The member keeps its place (kube
// does not reorder on update).
func (g *QueuedPodGroupInfo) UpdatePod(pod *v1.Pod) *QueuedPodInfo {
	for i, m := range g.Members {
		if m.Pod.Name == pod.Name && m.Pod.Namespace == pod.Namespace {
			m.PodInfo = NewPodInfo(pod)
			g.pods[i] = pod
			return m
		}
	}
	return nil
}

// Member returns the member with the pod's namespace and name, or nil.
func (g *QueuedPodGroupInfo) Member(pod *v1.Pod) *QueuedPodInfo {
	for _, m := range g.Members {
		if m.Pod.Name == pod.Name && m.Pod.Namespace == pod.Namespace {
			return m
		}
	}
	return nil
}

// ComparePodGroupMembers is kube's PodGroupMemberPodsOrderingFunc: priority
// descending, then attempts descending (timestamps are renewed after every
// cycle, so older members have more attempts), then queue timestamp
// ascending, then pod name ascending.
func ComparePodGroupMembers(a, b *QueuedPodInfo) int {
	if pa, pb := a.Priority(), b.Priority(); pa != pb {
		if pa > pb {
			return -1
		}
		return 1
	}
	if a.Attempts != b.Attempts {
		if a.Attempts > b.Attempts {
			return -1
		}
		return 1
	}
	if !a.Timestamp.Equal(b.Timestamp) {
		if a.Timestamp.Before(b.Timestamp) {
			return -1
		}
		return 1
	}
	return strings.Compare(a.Pod.Name, b.Pod.Name)
}
