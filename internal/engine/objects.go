package engine

import (
	"encoding/json"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Objects serves schedcore.ObjectLister from a snapshot: the pods of a pod
// source (the dry-run's store, so plugins see bindings as they happen)
// and the snapshot's other objects: kube's Workload API (Workloads and
// PodGroups of scheduling.k8s.io/v1beta1), typed, and scheduler-plugins'
// PodGroups, unstructured.
type Objects struct {
	pods   func(namespace string) []*v1.Pod
	others map[string]runtime.Object
}

var _ schedcore.ObjectLister = (*Objects)(nil)

// NewObjects indexes others; pods lists a namespace's pods.
func NewObjects(pods func(namespace string) []*v1.Pod, others []*unstructured.Unstructured) *Objects {
	o := &Objects{pods: pods, others: make(map[string]runtime.Object, len(others))}
	for _, u := range others {
		o.Add(u)
	}
	return o
}

// Add adds or replaces an object (typed when it is a kind of k8s.io/api,
// a native PodGroup).
func (o *Objects) Add(u *unstructured.Unstructured) {
	var obj runtime.Object = u
	if u.GetAPIVersion() == schedulingv1beta1.SchemeGroupVersion.String() && u.GetKind() == "PodGroup" {
		pg := &schedulingv1beta1.PodGroup{}
		if data, err := json.Marshal(u.Object); err == nil && json.Unmarshal(data, pg) == nil {
			obj = pg
		}
	}
	o.others[objectKey(u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())] = obj
}

// AddWorkloads adds (or replaces) the Workload API objects of a dump,
// typed, under scheduling.k8s.io/v1beta1.
func (o *Objects) AddWorkloads(w snapshot.Workloads) {
	gv := schedulingv1beta1.SchemeGroupVersion.String()
	for _, wl := range w.Workloads {
		o.others[objectKey(gv, "Workload", wl.Namespace, wl.Name)] = wl
	}
	for _, pg := range w.PodGroups {
		o.others[objectKey(gv, "PodGroup", pg.Namespace, pg.Name)] = pg
	}
}

func objectKey(apiVersion, kind, namespace, name string) string {
	return apiVersion + "/" + kind + "/" + namespace + "/" + name
}

// Pods lists the namespace's pods.
func (o *Objects) Pods(namespace string) []*v1.Pod {
	if o.pods == nil {
		return nil
	}
	return o.pods(namespace)
}

// Get returns an object by apiVersion, kind, namespace and name.
func (o *Objects) Get(apiVersion, kind, namespace, name string) (runtime.Object, bool) {
	obj, ok := o.others[objectKey(apiVersion, kind, namespace, name)]
	return obj, ok
}
