package schedcore

import (
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
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
