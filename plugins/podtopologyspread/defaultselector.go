package podtopologyspread

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// maxDefaultSelectors bounds the default selectors kept; past it they are
// all dropped (a cluster has about one per workload).
const maxDefaultSelectors = 4096

// defaultSelectors keeps pods' default spreading selectors
// (helper.DefaultSelector) across cycles. A pod's selector depends on the
// selector sources (every Service, ReplicaSet, StatefulSet and
// ReplicationController), the pod's namespace, its labels (which Services
// select it) and its controller reference (which owner's selector is
// added): the pods of one workload share it, and making it walks every
// Service of the namespace. The sources are replaced as a whole when they
// change (Cache.SetSelectorSources), never changed in place, so they are
// told apart by pointer; the selectors kept are those of the sources held
// in src (kept alive here, so that no later sources can reuse the
// address). Safe for concurrent use (queueing hints ask too).
type defaultSelectors struct {
	mu  sync.Mutex
	src *schedcore.SelectorSources
	// bySource says whether src is set: nil sources are sources too.
	bySource bool
	m        map[string]labels.Selector
}

// get returns helper.DefaultSelector(pod, src), made once per key: the
// pod's namespace, labels and controller reference.
func (d *defaultSelectors) get(pod *v1.Pod, src *schedcore.SelectorSources) labels.Selector {
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
	sel := helper.DefaultSelector(pod, src)
	d.m[key] = sel
	return sel
}
