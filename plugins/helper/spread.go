package helper

import (
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var (
	rcKind = v1.SchemeGroupVersion.WithKind("ReplicationController")
	rsKind = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	ssKind = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
)

// DefaultSelector returns the selector kube-scheduler's default topology
// spreading uses for a pod: the union of the selectors of the Services in
// the pod's namespace that select it, ANDed with the selector of the
// ReplicationController, ReplicaSet or StatefulSet that controls it (found
// by the pod's controller owner reference, in the pod's namespace).
//
// A pod that no Service selects and no such controller owns gets an empty
// selector (Empty() is true), which callers treat as "no default spreading".
// A nil src behaves as a cluster without those objects.
func DefaultSelector(pod *v1.Pod, src *schedcore.SelectorSources) labels.Selector {
	labelSet := make(labels.Set)
	// Services, RCs, RSs and SSs that match the pod cannot have conflicting
	// labels, so merging is safe.
	for _, svc := range GetPodServices(src, pod) {
		labelSet = labels.Merge(labelSet, svc.Spec.Selector)
	}
	selector := labelSet.AsSelector()

	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil || src == nil {
		return selector
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return selector
	}
	switch gv.WithKind(owner.Kind) {
	case rcKind:
		if rc := findReplicationController(src, pod.Namespace, owner.Name); rc != nil {
			labelSet = labels.Merge(labelSet, rc.Spec.Selector)
			selector = labelSet.AsSelector()
		}
	case rsKind:
		if rs := findReplicaSet(src, pod.Namespace, owner.Name); rs != nil {
			selector = addLabelSelector(selector, rs.Spec.Selector)
		}
	case ssKind:
		if ss := findStatefulSet(src, pod.Namespace, owner.Name); ss != nil {
			selector = addLabelSelector(selector, ss.Spec.Selector)
		}
	}
	return selector
}

// addLabelSelector ANDs the requirements of ls to selector; a selector that
// does not parse, or that selects nothing, leaves it unchanged, as in kube.
func addLabelSelector(selector labels.Selector, ls *metav1.LabelSelector) labels.Selector {
	other, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return selector
	}
	if r, ok := other.Requirements(); ok {
		selector = selector.Add(r...)
	}
	return selector
}

// GetPodServices returns the Services in the pod's namespace whose selector
// matches the pod's labels. Services with a nil selector match nothing.
func GetPodServices(src *schedcore.SelectorSources, pod *v1.Pod) []*v1.Service {
	if src == nil {
		return nil
	}
	var services []*v1.Service
	for _, svc := range src.Services {
		if svc == nil || svc.Namespace != pod.Namespace || svc.Spec.Selector == nil {
			continue
		}
		if setSelects(svc.Spec.Selector, pod.Labels) {
			services = append(services, svc)
		}
	}
	return services
}

// setSelects is labels.Set(sel).AsSelectorPreValidated().Matches(lbls)
// without making the selector (it sorts and copies the set: a pod's first
// cycle walks every Service of its namespace): every pair of sel is in
// lbls; an empty sel selects everything.
func setSelects(sel, lbls map[string]string) bool {
	for k, v := range sel {
		if lv, ok := lbls[k]; !ok || lv != v {
			return false
		}
	}
	return true
}

func findReplicationController(src *schedcore.SelectorSources, ns, name string) *v1.ReplicationController {
	for _, o := range src.ReplicationControllers {
		if o != nil && o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}

func findReplicaSet(src *schedcore.SelectorSources, ns, name string) *appsv1.ReplicaSet {
	for _, o := range src.ReplicaSets {
		if o != nil && o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}

func findStatefulSet(src *schedcore.SelectorSources, ns, name string) *appsv1.StatefulSet {
	for _, o := range src.StatefulSets {
		if o != nil && o.Namespace == ns && o.Name == name {
			return o
		}
	}
	return nil
}

// maxDefaultSelectors bounds the default selectors kept; past it they are
// all dropped (a cluster has about one per workload).
const maxDefaultSelectors = 4096

// DefaultSelectors keeps pods' default spreading selectors
// (DefaultSelector) across cycles. A pod's selector depends on the
// selector sources (every Service, ReplicaSet, StatefulSet and
// ReplicationController), the pod's namespace, its labels (which Services
// select it) and its controller reference (which owner's selector is
// added): the pods of one workload share it, and making it walks every
// Service of the namespace. The sources are replaced as a whole when they
// change (Cache.SetSelectorSources), never changed in place, so they are
// told apart by pointer; the selectors kept are those of the sources held
// in src (kept alive here, so that no later sources can reuse the
// address). Safe for concurrent use (queueing hints ask too).
type DefaultSelectors struct {
	mu  sync.Mutex
	src *schedcore.SelectorSources
	// bySource says whether src is set: nil sources are sources too.
	bySource bool
	m        map[string]labels.Selector
}

// Get returns DefaultSelector(pod, src), made once per key: the
// pod's namespace, labels and controller reference.
func (d *DefaultSelectors) Get(pod *v1.Pod, src *schedcore.SelectorSources) labels.Selector {
	k := new(schedcore.MemoKey).String(pod.Namespace).Map(pod.Labels)
	if owner := metav1.GetControllerOfNoCopy(pod); owner != nil {
		k.String(owner.APIVersion).String(owner.Kind).String(owner.Name)
	}
	key := k.Key()
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.bySource || d.src != src || len(d.m) >= maxDefaultSelectors {
		d.src, d.bySource, d.m = src, true, map[string]labels.Selector{}
	}
	if sel, ok := d.m[key]; ok {
		return sel
	}
	sel := DefaultSelector(pod, src)
	d.m[key] = sel
	return sel
}
