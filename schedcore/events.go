package schedcore

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
)

// ActionType is a bit set of kinds of change to a resource.
type ActionType int64

// Action types, as kube-scheduler v1.37 defines them.
const (
	Add ActionType = 1 << iota
	Delete
	UpdateNodeAllocatable
	UpdateNodeLabel
	UpdateNodeTaint
	UpdateNodeCondition
	UpdateNodeAnnotation
	UpdateNodeDeclaredFeature
	UpdateNodePreemptionPolicy
	UpdatePodLabel
	UpdatePodScaleDown
	UpdatePodScaleUp
	UpdatePodToleration
	UpdatePodSchedulingGatesEliminated
	UpdatePodGeneratedResourceClaim

	// All matches every action.
	All ActionType = 1<<iota - 1
	// Update matches every update action.
	Update = UpdateNodeAllocatable | UpdateNodeLabel | UpdateNodeTaint | UpdateNodeCondition | UpdateNodeAnnotation |
		UpdateNodeDeclaredFeature | UpdateNodePreemptionPolicy | UpdatePodLabel | UpdatePodScaleDown | UpdatePodScaleUp |
		UpdatePodToleration | UpdatePodSchedulingGatesEliminated | UpdatePodGeneratedResourceClaim
	// None is no action.
	None ActionType = 0
)

var actionNames = map[ActionType]string{
	Add: "Add", Delete: "Delete", UpdateNodeAllocatable: "UpdateNodeAllocatable", UpdateNodeLabel: "UpdateNodeLabel",
	UpdateNodeTaint: "UpdateNodeTaint", UpdateNodeCondition: "UpdateNodeCondition", UpdateNodeAnnotation: "UpdateNodeAnnotation",
	UpdateNodeDeclaredFeature: "UpdateNodeDeclaredFeature", UpdateNodePreemptionPolicy: "UpdateNodePreemptionPolicy",
	UpdatePodLabel: "UpdatePodLabel", UpdatePodScaleDown: "UpdatePodScaleDown", UpdatePodScaleUp: "UpdatePodScaleUp",
	UpdatePodToleration: "UpdatePodToleration", UpdatePodSchedulingGatesEliminated: "UpdatePodSchedulingGatesEliminated",
	UpdatePodGeneratedResourceClaim: "UpdatePodGeneratedResourceClaim", All: "All", Update: "Update",
}

// String returns kube's name of a single action type.
func (a ActionType) String() string { return actionNames[a] }

// EventResource names a kind of API object an event is about.
type EventResource string

// Event resources, as kube-scheduler v1.37 names them.
const (
	Pod                   EventResource = "Pod"
	AssignedPod           EventResource = "AssignedPod"
	UnscheduledPod        EventResource = "UnscheduledPod"
	TargetPod             EventResource = "TargetPod"
	Node                  EventResource = "Node"
	PersistentVolume      EventResource = "PersistentVolume"
	PersistentVolumeClaim EventResource = "PersistentVolumeClaim"
	CSINode               EventResource = "storage.k8s.io/CSINode"
	CSIDriver             EventResource = "storage.k8s.io/CSIDriver"
	VolumeAttachment      EventResource = "storage.k8s.io/VolumeAttachment"
	CSIStorageCapacity    EventResource = "storage.k8s.io/CSIStorageCapacity"
	StorageClass          EventResource = "storage.k8s.io/StorageClass"
	PodGroup              EventResource = "scheduling.k8s.io/PodGroup"
	// PodGroupCRD is scheduler-plugins' PodGroup, named as kube names
	// custom resources (<resource>.<version>.<group>).
	PodGroupCRD   EventResource = "podgroups.v1alpha1.scheduling.x-k8s.io"
	ResourceClaim EventResource = "resource.k8s.io/ResourceClaim"
	DeviceClass   EventResource = "resource.k8s.io/DeviceClass"
	Namespace     EventResource = "Namespace"
	WildCard      EventResource = "*"
)

// The PodGroup APIs group plugins read through ObjectLister.Get, and the
// label by which a pod joins a scheduler-plugins PodGroup. Drivers serve
// these objects without knowing the plugins.
const (
	// PodGroupKind is the kind of both PodGroup APIs.
	PodGroupKind = "PodGroup"
	// NativePodGroupAPIVersion is Kubernetes 1.37's PodGroup, referenced
	// by pod.spec.schedulingGroup.podGroupName.
	NativePodGroupAPIVersion = "scheduling.k8s.io/v1beta1"
	// CRDPodGroupAPIVersion is scheduler-plugins' PodGroup CRD version.
	CRDPodGroupAPIVersion = "scheduling.x-k8s.io/v1alpha1"
	// PodGroupLabel is scheduler-plugins' label naming the pod's PodGroup.
	PodGroupLabel = "scheduling.x-k8s.io/pod-group"
)

// ClusterEvent is a change in the cluster that may make pods schedulable.
type ClusterEvent struct {
	Resource    EventResource
	ActionType  ActionType
	CustomLabel string
}

// Label is the event's name in metrics (queue_incoming_pods_total{event}).
func (ce ClusterEvent) Label() string {
	if ce.CustomLabel != "" {
		return ce.CustomLabel
	}
	return string(ce.Resource) + ce.ActionType.String()
}

// IsWildCard reports whether the event matches every registration.
func (ce ClusterEvent) IsWildCard() bool { return ce.Resource == WildCard && ce.ActionType == All }

// Match reports whether a registered event ce covers the incoming event, as
// kube does: a wildcard registration covers everything; otherwise the
// resources must match (Pod covers AssignedPod, UnscheduledPod and
// TargetPod), the action bits must overlap and the incoming action must not
// be wider than the registered one (so an UpdateNodeLabel registration does
// not match a plain Node/Update).
func (ce ClusterEvent) Match(incoming ClusterEvent) bool {
	if ce.IsWildCard() {
		return true
	}
	return matchResource(ce.Resource, incoming.Resource) && ce.ActionType&incoming.ActionType != 0 && incoming.ActionType <= ce.ActionType
}

func matchResource(r, incoming EventResource) bool {
	return r == WildCard || r == incoming ||
		r == Pod && (incoming == AssignedPod || incoming == UnscheduledPod || incoming == TargetPod)
}

// Well-known events the queue generates itself.
var (
	// EventUnschedulableTimeout moves pods left too long in the unschedulable pool.
	EventUnschedulableTimeout = ClusterEvent{Resource: WildCard, ActionType: All, CustomLabel: "UnschedulableTimeout"}
	// EventForceActivate is sent when a plugin activates pods.
	EventForceActivate = ClusterEvent{Resource: WildCard, ActionType: All, CustomLabel: "ForceActivate"}
	// EventAssignedPodDelete frees resources.
	EventAssignedPodDelete = ClusterEvent{Resource: AssignedPod, ActionType: Delete}
)

// QueueingHint says whether an event may make a rejected pod schedulable.
type QueueingHint int

const (
	// QueueSkip means the event cannot help the pod.
	QueueSkip QueueingHint = iota
	// Queue means the event may help: retry the pod.
	Queue
)

// String names the hint.
func (h QueueingHint) String() string {
	if h == Queue {
		return "Queue"
	}
	return "QueueSkip"
}

// QueueingHintFn decides, for a pod rejected by the plugin, whether an event
// (old and new object; either may be nil) may make it schedulable. An error
// counts as Queue.
type QueueingHintFn func(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (QueueingHint, error)

// ClusterEventWithHint registers an event with an optional hint; a nil hint
// always queues.
type ClusterEventWithHint struct {
	Event          ClusterEvent
	QueueingHintFn QueueingHintFn
}
