package schedcore

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
)

// NodeSchedulingPropertiesChange returns the events a node update is, as
// kube-scheduler v1.37's function of that name: one Node event per kind of
// change that may make pods schedulable, in kube's order. An update that
// changes none of them (a heartbeat) gives no event, so it requeues nothing.
func NodeSchedulingPropertiesChange(newNode, oldNode *v1.Node) []ClusterEvent {
	var events []ClusterEvent
	for _, fn := range nodeChangeExtractors {
		if a := fn(newNode, oldNode); a != None {
			events = append(events, ClusterEvent{Resource: Node, ActionType: a})
		}
	}
	return events
}

// nodeChangeExtractors are kube's, NodeDeclaredFeatures (GA in v1.37) last.
var nodeChangeExtractors = []func(newNode, oldNode *v1.Node) ActionType{
	nodeSpecUnschedulableChange,
	nodeAllocatableChange,
	nodeLabelsChange,
	nodeTaintsChange,
	nodeConditionsChange,
	nodeAnnotationsChange,
	nodePreemptionPolicyChange,
	nodeDeclaredFeaturesChange,
}

// nodeSpecUnschedulableChange: only a node becoming schedulable counts, and
// kube reports it as a taint change.
func nodeSpecUnschedulableChange(newNode, oldNode *v1.Node) ActionType {
	if newNode.Spec.Unschedulable != oldNode.Spec.Unschedulable && !newNode.Spec.Unschedulable {
		return UpdateNodeTaint
	}
	return None
}

func nodeAllocatableChange(newNode, oldNode *v1.Node) ActionType {
	if !equality.Semantic.DeepEqual(oldNode.Status.Allocatable, newNode.Status.Allocatable) {
		return UpdateNodeAllocatable
	}
	return None
}

func nodeLabelsChange(newNode, oldNode *v1.Node) ActionType {
	if !equality.Semantic.DeepEqual(newNode.GetLabels(), oldNode.GetLabels()) {
		return UpdateNodeLabel
	}
	return None
}

func nodeTaintsChange(newNode, oldNode *v1.Node) ActionType {
	if !equality.Semantic.DeepEqual(newNode.Spec.Taints, oldNode.Spec.Taints) {
		return UpdateNodeTaint
	}
	return None
}

// nodeConditionsChange compares condition statuses by type only: heartbeat
// and transition times, reasons and messages do not count.
func nodeConditionsChange(newNode, oldNode *v1.Node) ActionType {
	strip := func(cs []v1.NodeCondition) map[v1.NodeConditionType]v1.ConditionStatus {
		m := make(map[v1.NodeConditionType]v1.ConditionStatus, len(cs))
		for i := range cs {
			m[cs[i].Type] = cs[i].Status
		}
		return m
	}
	if !equality.Semantic.DeepEqual(strip(oldNode.Status.Conditions), strip(newNode.Status.Conditions)) {
		return UpdateNodeCondition
	}
	return None
}

func nodeAnnotationsChange(newNode, oldNode *v1.Node) ActionType {
	if !equality.Semantic.DeepEqual(oldNode.GetAnnotations(), newNode.GetAnnotations()) {
		return UpdateNodeAnnotation
	}
	return None
}

func nodePreemptionPolicyChange(newNode, oldNode *v1.Node) ActionType {
	if !equality.Semantic.DeepEqual(oldNode.Spec.PodPreemptionPolicy, newNode.Spec.PodPreemptionPolicy) {
		return UpdateNodePreemptionPolicy
	}
	return None
}

// nodeDeclaredFeaturesChange: the kubelet keeps the list sorted, so a
// slice comparison is enough.
func nodeDeclaredFeaturesChange(newNode, oldNode *v1.Node) ActionType {
	if !slices.Equal(oldNode.Status.DeclaredFeatures, newNode.Status.DeclaredFeatures) {
		return UpdateNodeDeclaredFeature
	}
	return None
}
