package whatif

import (
	"context"
	"errors"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// store is the in-memory API: the latest copy of every pod, by
// schedcore.PodKey, with the keys of each namespace for listing.
type store struct {
	pods  map[string]*v1.Pod
	byNS  map[string]map[string]struct{}
	names map[string]struct{} // namespace/name
}

func newStore() *store {
	return &store{pods: map[string]*v1.Pod{}, byNS: map[string]map[string]struct{}{}, names: map[string]struct{}{}}
}

func (s *store) put(p *v1.Pod) {
	k := schedcore.PodKey(p)
	s.pods[k] = p
	ns := s.byNS[p.Namespace]
	if ns == nil {
		ns = map[string]struct{}{}
		s.byNS[p.Namespace] = ns
	}
	ns[k] = struct{}{}
	s.names[p.Namespace+"/"+p.Name] = struct{}{}
}

func (s *store) get(p *v1.Pod) *v1.Pod { return s.pods[schedcore.PodKey(p)] }

func (s *store) remove(p *v1.Pod) {
	k := schedcore.PodKey(p)
	delete(s.pods, k)
	delete(s.byNS[p.Namespace], k)
	delete(s.names, p.Namespace+"/"+p.Name)
}

// list returns a namespace's pods by name (what Coscheduling reads to find
// a gang's members).
func (s *store) list(namespace string) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(s.byNS[namespace]))
	for k := range s.byNS[namespace] {
		out = append(out, s.pods[k])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// binder commits a binding into the store, as the pods/binding subresource
// would on a real API server.
type binder struct{ s *store }

func (b binder) Bind(_ context.Context, pod *v1.Pod, node string) error {
	cur := b.s.get(pod)
	if cur == nil {
		return fmt.Errorf("pod %s not found", schedcore.PodName(pod))
	}
	if cur.Spec.NodeName != "" {
		return fmt.Errorf("pod %s is already assigned to node %q", schedcore.PodName(pod), cur.Spec.NodeName)
	}
	bound := cur.DeepCopy()
	bound.Spec.NodeName = node
	bound.Status.NominatedNodeName = ""
	b.s.put(bound)
	return nil
}

// volumeBinder commits VolumeBinding's PreBind writes into the storage
// state (the PVs bound to their claims, the claims' selected node), as the
// dry-run does.
type volumeBinder struct{ state *schedcore.StorageState }

func (b *volumeBinder) BindPodVolumes(_ context.Context, _ *v1.Pod, pvs []*v1.PersistentVolume, pvcs []*v1.PersistentVolumeClaim) error {
	if b.state == nil {
		return errors.New("no storage state")
	}
	for _, pv := range pvs {
		b.state.PutPV(pv)
	}
	for _, pvc := range pvcs {
		b.state.PutPVC(pvc)
	}
	return nil
}

// objects serves schedcore.ObjectLister: the store's pods and the
// cluster's other objects (PodGroups), to which copies of a gang add
// theirs.
type objects struct {
	st    *store
	base  *engine.Objects
	added map[string]runtime.Object
	// raw are the added objects as given, in order.
	raw []*unstructured.Unstructured
}

var _ schedcore.ObjectLister = (*objects)(nil)

func newObjects(st *store, others []*unstructured.Unstructured) *objects {
	return &objects{st: st, base: engine.NewObjects(nil, others), added: map[string]runtime.Object{}}
}

func objectKey(apiVersion, kind, namespace, name string) string {
	return apiVersion + "/" + kind + "/" + namespace + "/" + name
}

// add adds (or replaces) an object, typed as engine.Objects types it.
func (o *objects) add(u *unstructured.Unstructured) {
	av, k, ns, n := u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName()
	obj, _ := engine.NewObjects(nil, []*unstructured.Unstructured{u}).Get(av, k, ns, n)
	o.added[objectKey(av, k, ns, n)] = obj
	o.raw = append(o.raw, u)
}

func (o *objects) Pods(namespace string) []*v1.Pod { return o.st.list(namespace) }

// Get returns an object by apiVersion, kind, namespace and name.
func (o *objects) Get(apiVersion, kind, namespace, name string) (runtime.Object, bool) {
	if obj, ok := o.added[objectKey(apiVersion, kind, namespace, name)]; ok {
		return obj, true
	}
	return o.base.Get(apiVersion, kind, namespace, name)
}
