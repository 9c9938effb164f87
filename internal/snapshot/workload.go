package snapshot

import (
	"strings"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/internal/defaults"
)

// Workloads holds the objects of kube's Workload API
// (scheduling.k8s.io/v1beta1, served with the GenericWorkload gate): the
// Workloads, and the PodGroups their pods join by
// spec.schedulingGroup.podGroupName. scheduler-plugins' PodGroup
// (scheduling.x-k8s.io/v1alpha1, pods joined by a label) is another kind,
// kept unstructured in Cluster.Others. CompositePodGroups are
// scheduling.k8s.io/v1alpha3 only (alpha gate CompositePodGroup) and are
// not read.
type Workloads struct {
	Workloads []*schedulingv1beta1.Workload
	PodGroups []*schedulingv1beta1.PodGroup
}

// Empty reports whether the dump has no Workload API object.
func (w *Workloads) Empty() bool { return len(w.Workloads)+len(w.PodGroups) == 0 }

// addWorkloadAPI decodes a scheduling.k8s.io Workload or PodGroup into
// c.Workloads, defaulted and validated as the API server does; handled is
// false for other kinds. Other versions than v1beta1 (1.35's v1alpha1
// Workload, 1.36's v1alpha2, the alpha v1alpha3) are refused in one line:
// kube-scheduler v1.37 reads v1beta1 only.
func (c *Cluster) addWorkloadAPI(apiVersion, kind string, decode func(any) error, fail func(string) error) (handled bool, err error) {
	group, _, _ := strings.Cut(apiVersion, "/")
	if group != schedulingv1beta1.GroupName || (kind != "Workload" && kind != "PodGroup") {
		return false, nil
	}
	if apiVersion != schedulingv1beta1.SchemeGroupVersion.String() {
		return true, fail(defaults.UnservedWorkloadAPI(apiVersion, kind))
	}
	switch kind {
	case "Workload":
		w := &schedulingv1beta1.Workload{}
		if err := decodeDefaulted(decode, w); err != nil {
			return true, err
		}
		w.Namespace = c.namespaceOr(w.Namespace)
		if err := defaults.ValidateWorkload(w); err != nil {
			return true, err
		}
		c.Workloads.Workloads = append(c.Workloads.Workloads, w)
	case "PodGroup":
		pg := &schedulingv1beta1.PodGroup{}
		if err := decodeDefaulted(decode, pg); err != nil {
			return true, err
		}
		pg.Namespace = c.namespaceOr(pg.Namespace)
		if err := defaults.ValidatePodGroup(pg); err != nil {
			return true, err
		}
		c.Workloads.PodGroups = append(c.Workloads.PodGroups, pg)
	}
	return true, nil
}

// workloadObjects lists the Workload API objects for writing a dump.
func (c *Cluster) workloadObjects(add func(apiVersion, kind string, n int, get func(i int) (*metav1.ObjectMeta, runtime.Object))) {
	gv := schedulingv1beta1.SchemeGroupVersion.String()
	w := &c.Workloads
	add(gv, "Workload", len(w.Workloads), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &w.Workloads[i].ObjectMeta, w.Workloads[i]
	})
	add(gv, "PodGroup", len(w.PodGroups), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &w.PodGroups[i].ObjectMeta, w.PodGroups[i]
	})
}
