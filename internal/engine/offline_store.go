package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"unsafe"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// store is the in-memory API: the latest copy of every pod, by
// namespace/name, with each namespace's names in order.
type store struct {
	pods map[podName]*v1.Pod
	byNS map[string]*nsNames
	// changes counts the puts and deletes (Offline.Changes).
	changes uint64
}

// nsNames are a namespace's pod names: names[:sorted] in order, then the
// names added since, in the order they came. A new name is appended (an
// insertion in place moved the names after it: capacity's copies made that
// quadratic, 34 of 64 CPU s at 50,000 nodes); the tail is sorted and
// merged in when the names are read in order (ordered).
type nsNames struct {
	names  []string
	sorted int
}

// ordered returns the names in order, merging the tail in first.
func (n *nsNames) ordered() []string {
	if n.sorted == len(n.names) {
		return n.names
	}
	tail := n.names[n.sorted:]
	sort.Strings(tail)
	if n.sorted > 0 && n.names[n.sorted-1] > tail[0] {
		merged := make([]string, 0, len(n.names))
		head := n.names[:n.sorted]
		i, j := 0, 0
		for i < len(head) && j < len(tail) {
			if head[i] < tail[j] {
				merged = append(merged, head[i])
				i++
			} else {
				merged = append(merged, tail[j])
				j++
			}
		}
		merged = append(append(merged, head[i:]...), tail[j:]...)
		n.names = merged
	}
	n.sorted = len(n.names)
	return n.names
}

// podName is a store key: the pod's own strings, nothing allocated per
// pod or per lookup.
type podName struct{ namespace, name string }

func newStore() *store { return &store{pods: map[podName]*v1.Pod{}, byNS: map[string]*nsNames{}} }

func (s *store) get(namespace, name string) (*v1.Pod, bool) {
	p, ok := s.pods[podName{namespace, name}]
	return p, ok
}

func (s *store) put(p *v1.Pod) {
	k := podName{p.Namespace, p.Name}
	if _, ok := s.pods[k]; !ok {
		n := s.byNS[p.Namespace]
		if n == nil {
			n = &nsNames{}
			s.byNS[p.Namespace] = n
		}
		n.names = append(n.names, p.Name)
	}
	s.pods[k] = p
	s.changes++
}

func (s *store) delete(p *v1.Pod) {
	k := podName{p.Namespace, p.Name}
	if _, ok := s.pods[k]; !ok {
		return
	}
	delete(s.pods, k)
	s.changes++
	n := s.byNS[p.Namespace]
	names := n.ordered()
	if i := sort.SearchStrings(names, p.Name); i < len(names) && names[i] == p.Name {
		n.names = append(names[:i], names[i+1:]...)
		n.sorted = len(n.names)
	}
}

// list returns a namespace's pods in name order.
func (s *store) list(namespace string) []*v1.Pod {
	var names []string
	if n := s.byNS[namespace]; n != nil {
		names = n.ordered()
	}
	out := make([]*v1.Pod, len(names))
	for i, n := range names {
		out[i] = s.pods[podName{namespace, n}]
	}
	return out
}

// binder commits a binding into the store, as the pods/binding subresource
// would on a real API server.
type binder struct{ s *store }

func (b binder) Bind(_ context.Context, pod *v1.Pod, node string) error {
	cur, ok := b.s.get(pod.Namespace, pod.Name)
	if !ok || cur.UID != pod.UID {
		return fmt.Errorf("pod %s not found", schedcore.PodName(pod))
	}
	if cur.Spec.NodeName != "" {
		return fmt.Errorf("pod %s is already assigned to node %q", schedcore.PodName(pod), cur.Spec.NodeName)
	}
	// The pod to bind is, most often, the scheduler's assumed pod: a copy
	// of cur's top-level fields with the node set. It is then the bound
	// pod, as it is (objects are never changed in place, see shallowCopy),
	// rather than another copy of cur.
	bound := pod
	if pod.Spec.NodeName != node || cur.Status.NominatedNodeName != "" || !sameButNode(pod, cur) {
		bound = shallowCopy(cur)
		bound.Spec.NodeName = node
		// The API server clears the nomination on binding
		// (ClearingNominatedNodeNameAfterBinding, on by default).
		bound.Status.NominatedNodeName = ""
	}
	b.s.put(bound)
	return nil
}

// sameButNode reports whether pod is cur's top-level fields but
// spec.nodeName, bit for bit: the same strings, slices, maps and pointers,
// not only equal ones, so that whatever reads pod reads what it would read
// in cur. Padding bytes count too: a pod whose padding differs is only
// copied for nothing.
func sameButNode(pod, cur *v1.Pod) bool {
	x := *pod
	x.Spec.NodeName = cur.Spec.NodeName
	n := unsafe.Sizeof(x)
	return bytes.Equal(unsafe.Slice((*byte)(unsafe.Pointer(&x)), n), unsafe.Slice((*byte)(unsafe.Pointer(cur)), n))
}

// shallowCopy copies a pod's top-level fields only: its maps, slices and
// pointers stay shared with p. The store's pods are never changed in
// place (every update, here and in the DRA writer, stores a new object
// made from a DeepCopy, and the loading fills in only top-level fields
// such as the UID), so a pod of the caller's cluster and a bound pod may
// share what they do not change; one deep copy per pod and per binding
// was the largest part of a dry-run's heap at 5000 nodes.
func shallowCopy(p *v1.Pod) *v1.Pod {
	cp := *p
	return &cp
}

// volumeBinder commits VolumeBinding's PreBind writes into the storage
// state, as the API server would store them: the PVs bound to their claims
// and the claims annotated with the selected node. No PV controller runs,
// so claims stay unbound, as in kube-scheduler's assume cache right after
// Reserve; later pods see the bound PVs and the selected nodes.
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

// evictor carries out preemption in the in-memory cluster, as the API
// server and the informers would: the victim is deleted from the store and
// the cache, and the deletion is an AssignedPod/Delete event for the queue
// (it requeues the preemptor, among others).
type evictor struct{ c *Offline }

func (e evictor) PreemptPod(_ context.Context, preemptor, victim *v1.Pod, node string) error {
	cur := e.evict(victim)
	if cur != nil && e.c.obs.Evicted != nil {
		e.c.obs.Evicted(cur, node, preemptor)
	}
	e.moved(cur)
	return nil
}

// PreemptPodForPodGroup implements schedcore.PodGroupEvictor.
func (e evictor) PreemptPodForPodGroup(_ context.Context, pg *schedulingv1beta1.PodGroup, _ string, victim *v1.Pod) error {
	cur := e.evict(victim)
	if cur != nil && e.c.obs.GroupEvicted != nil {
		e.c.obs.GroupEvicted(cur, pg)
	}
	e.moved(cur)
	return nil
}

// evict deletes the victim from the store, the cache and its claims; nil
// when it is gone already.
func (e evictor) evict(victim *v1.Pod) *v1.Pod {
	cur, ok := e.c.store.get(victim.Namespace, victim.Name)
	if !ok || cur.UID != victim.UID {
		return nil
	}
	e.c.store.delete(cur)
	e.c.Cache.RemovePod(cur)
	e.c.releaseClaims(context.Background(), cur)
	return cur
}

// moved delivers the deletion to the queue (AssignedPod/Delete).
func (e evictor) moved(cur *v1.Pod) {
	if cur != nil {
		e.c.Queue.MoveAllToActiveOrBackoffQueue(e.c.Options.Logger, schedcore.EventAssignedPodDelete, cur, nil, nil)
	}
}

func (e evictor) ClearNominatedNodeName(_ context.Context, pods []*v1.Pod) error {
	for _, p := range pods {
		e.c.setNominatedNode(p, "")
	}
	return nil
}
