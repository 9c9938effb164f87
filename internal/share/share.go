// Package share makes the pods and nodes of a loaded cluster share their
// equal parts: the replicas of one workload carry the same resource lists,
// labels, containers, tolerations, affinity..., each its own copy as
// decoded, most of a loaded cluster's heap.
//
// A part is replaced only by one equal to it (by a key naming all of its
// content, or reflect.DeepEqual with the candidate a key finds), so every
// object keeps its content exactly. Sharing is safe only where nothing
// changes a pod's (or node's) maps and slices in place afterwards, as in
// the engine (see engine.Options.InPlace): a caller that adds to a shared
// list appends to a clipped copy (slices.Clip).
//
// A Sharer is safe for concurrent use: the snapshot loader shares the
// objects it decodes on every core as it decodes them, so that the
// duplicates die young, and the engine shares those of a cluster not
// loaded so.
package share

import (
	"reflect"
	"slices"
	"strconv"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Sharer holds the first-seen value of each part, by key.
type Sharer struct {
	mu          sync.Mutex
	lists       map[string]v1.ResourceList
	labels      map[string]map[string]string
	containers  map[string][]v1.Container
	tolerations map[string][]v1.Toleration
	// By the address of the pod's (shared) labels and containers: the
	// replicas of a workload share them, and their other parts too.
	affinity map[string]*v1.Affinity
	spread   map[string][]v1.TopologySpreadConstraint
	owners   map[string][]metav1.OwnerReference
	// imageNames holds the nodes' image name lists: the same image on
	// many nodes has the same names (tag and digest references, often
	// over a hundred bytes), each node's its own strings as decoded.
	imageNames map[string][]string
	// bufs holds key buffers, one per caller at a time.
	bufs sync.Pool
}

// keyBuf is a caller's buffers: the key and the sorted names of a map.
type keyBuf struct {
	key   []byte
	names []string
}

// New returns an empty Sharer.
func New() *Sharer {
	return &Sharer{
		lists:       map[string]v1.ResourceList{},
		labels:      map[string]map[string]string{},
		containers:  map[string][]v1.Container{},
		tolerations: map[string][]v1.Toleration{},
		affinity:    map[string]*v1.Affinity{},
		spread:      map[string][]v1.TopologySpreadConstraint{},
		owners:      map[string][]metav1.OwnerReference{},
		imageNames:  map[string][]string{},
		bufs:        sync.Pool{New: func() any { return &keyBuf{} }},
	}
}

// Pod shares p's resource lists, labels, containers, tolerations,
// affinity, spread constraints and owners with the equal ones of the pods
// shared before it.
func (s *Sharer) Pod(p *v1.Pod) {
	b := s.bufs.Get().(*keyBuf)
	defer s.bufs.Put(b)
	p.Labels = s.labelMap(b, p.Labels)
	p.Spec.Overhead = s.resourceList(b, p.Spec.Overhead)
	p.Spec.Containers = s.containerList(b, p.Spec.Containers)
	p.Spec.InitContainers = s.containerList(b, p.Spec.InitContainers)
	p.Spec.Tolerations = s.tolerationList(b, p.Spec.Tolerations)
	// Parts a key cannot name cheaply: the candidate is the first pod's
	// with the same (shared) labels and containers.
	k := strconv.AppendUint(b.key[:0], uint64(reflect.ValueOf(p.Labels).Pointer()), 16)
	k = append(k, 0)
	k = strconv.AppendUint(k, uint64(reflect.ValueOf(p.Spec.Containers).Pointer()), 16)
	b.key = k
	if p.Spec.Affinity != nil {
		p.Spec.Affinity = intern(s, s.affinity, k, p.Spec.Affinity, deepEqual)
	}
	if len(p.Spec.TopologySpreadConstraints) > 0 {
		p.Spec.TopologySpreadConstraints = intern(s, s.spread, k, p.Spec.TopologySpreadConstraints, deepEqual)
	}
	if len(p.OwnerReferences) > 0 {
		p.OwnerReferences = intern(s, s.owners, k, p.OwnerReferences, deepEqual)
	}
}

// Node shares n's capacity, allocatable and image name lists with the
// equal ones of the nodes shared before it.
func (s *Sharer) Node(n *v1.Node) {
	b := s.bufs.Get().(*keyBuf)
	defer s.bufs.Put(b)
	n.Status.Capacity = s.resourceList(b, n.Status.Capacity)
	n.Status.Allocatable = s.resourceList(b, n.Status.Allocatable)
	for i := range n.Status.Images {
		// Changes only which equal list the field holds (as for a
		// container's resources).
		img := &n.Status.Images[i]
		img.Names = s.nameList(b, img.Names)
	}
}

// nameList returns the list equal to names seen first.
func (s *Sharer) nameList(b *keyBuf, names []string) []string {
	if len(names) == 0 {
		return names
	}
	k := b.key[:0]
	for _, n := range names {
		// Length-prefixed: names may hold any byte.
		k = strconv.AppendInt(k, int64(len(n)), 10)
		k = append(k, ':')
		k = append(k, n...)
	}
	b.key = k
	return intern(s, s.imageNames, k, names, nil)
}

// resourceList returns the list equal to l seen first.
func (s *Sharer) resourceList(b *keyBuf, l v1.ResourceList) v1.ResourceList {
	if len(l) == 0 {
		return l
	}
	names := b.names[:0]
	for n := range l {
		names = append(names, string(n))
	}
	slices.Sort(names)
	b.names = names
	k := b.key[:0]
	for _, n := range names {
		// The quantity's value (canonical mantissa and exponent) and
		// format, which make what it reads and marshals as (String; a
		// string a quantity was parsed from is kept only when it is that
		// one): equal keys, equal lists.
		q := l[v1.ResourceName(n)]
		k = append(k, n...)
		k = append(k, 0)
		var exp int32
		k, exp = q.AsCanonicalBytes(k)
		k = append(k, 'e')
		k = strconv.AppendInt(k, int64(exp), 10)
		k = append(k, q.Format...)
		k = append(k, 0)
	}
	b.key = k
	return intern(s, s.lists, k, l, nil)
}

// labelMap returns the map equal to m seen first.
func (s *Sharer) labelMap(b *keyBuf, m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	ks := b.names[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	b.names = ks
	k := b.key[:0]
	for _, n := range ks {
		k = append(k, n...)
		k = append(k, 0)
		k = append(k, m[n]...)
		k = append(k, 0)
	}
	b.key = k
	return intern(s, s.labels, k, m, nil)
}

// containerList returns the list equal to cs seen first, its containers'
// resource lists shared first (so that the key can name them by
// address).
func (s *Sharer) containerList(b *keyBuf, cs []v1.Container) []v1.Container {
	if len(cs) == 0 {
		return cs
	}
	for i := range cs {
		r := &cs[i].Resources
		// Changes only which equal map the field holds: cs is the
		// caller's own (sharing runs on objects it may change).
		r.Requests, r.Limits = s.resourceList(b, r.Requests), s.resourceList(b, r.Limits)
	}
	k := b.key[:0]
	for i := range cs {
		c := &cs[i]
		k = append(k, c.Name...)
		k = append(k, 0)
		k = append(k, c.Image...)
		k = append(k, 0)
		k = strconv.AppendUint(k, uint64(mapAddr(c.Resources.Requests)), 16)
		k = append(k, 0)
		k = strconv.AppendUint(k, uint64(mapAddr(c.Resources.Limits)), 16)
		k = append(k, 0)
	}
	b.key = k
	return intern(s, s.containers, k, cs, deepEqual)
}

// tolerationList returns the list equal to ts seen first.
func (s *Sharer) tolerationList(b *keyBuf, ts []v1.Toleration) []v1.Toleration {
	if len(ts) == 0 {
		return ts
	}
	k := b.key[:0]
	for i := range ts {
		t := &ts[i]
		k = append(k, t.Key...)
		k = append(k, 0)
		k = append(k, t.Operator...)
		k = append(k, 0)
		k = append(k, t.Value...)
		k = append(k, 0)
		k = append(k, t.Effect...)
		k = append(k, 0)
		if t.TolerationSeconds != nil {
			k = strconv.AppendInt(k, *t.TolerationSeconds, 10)
		}
		k = append(k, 0)
	}
	b.key = k
	return intern(s, s.tolerations, k, ts, nil)
}

// intern returns the value stored under key k when it equals v, else v
// (stored under k if k is new). Values under one key are equal when eq
// is nil (the key names all of the content), else when eq says so; eq
// runs outside the lock (a stored value is never changed).
func intern[V any](s *Sharer, m map[string]V, k []byte, v V, eq func(a, b V) bool) V {
	s.mu.Lock()
	c, ok := m[string(k)]
	if !ok {
		m[string(k)] = v
	}
	s.mu.Unlock()
	if !ok || (eq != nil && !eq(c, v)) {
		return v
	}
	return c
}

func deepEqual[V any](a, b V) bool { return reflect.DeepEqual(a, b) }

// mapAddr is the address of a map's header (0 for nil): equal lists share
// one after resourceList.
func mapAddr(m v1.ResourceList) uintptr {
	return uintptr(reflect.ValueOf(m).UnsafePointer())
}
