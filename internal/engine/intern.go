package engine

import (
	"reflect"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// interner makes the pods and nodes of a cluster share their equal parts:
// the replicas of one workload carry the same resource lists, labels,
// containers, tolerations, affinity..., each its own copy as decoded, most
// of a loaded cluster's heap. A part is replaced only by one equal to it
// (by a key naming all of its content, or reflect.DeepEqual with the
// candidate a key finds), so every object keeps its content exactly. Sharing is safe for the reason
// shallowCopy is: nothing changes a pod's (or node's) maps and slices in
// place. It runs at loading, for Options.InPlace (the caller's objects
// are the engine's); a few milliseconds per thousand pods.
type interner struct {
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
	// key and names are buffers.
	key   []byte
	names []string
}

// Intern makes cl's pods and nodes share their equal parts (labels,
// resource lists, containers, tolerations, affinity, spread constraints,
// owners, image names), in place, as NewOffline does with
// Options.InPlace: for a caller that owns cl and, like the engine, never
// changes those parts in place (the replay's trace, whose pods arrive
// through Offline.Add sharing them). The content of every object is kept.
// At 10,000 nodes the decoded dump's own copies of these parts were half
// of a replay's live heap.
func Intern(cl *snapshot.Cluster) {
	in := newInterner()
	for _, n := range cl.Nodes {
		in.node(n)
	}
	for _, p := range cl.Pods {
		in.pod(p)
	}
}

func newInterner() *interner {
	return &interner{
		lists:       map[string]v1.ResourceList{},
		labels:      map[string]map[string]string{},
		containers:  map[string][]v1.Container{},
		tolerations: map[string][]v1.Toleration{},
		affinity:    map[string]*v1.Affinity{},
		spread:      map[string][]v1.TopologySpreadConstraint{},
		owners:      map[string][]metav1.OwnerReference{},
		imageNames:  map[string][]string{},
	}
}

// pod shares p's resource lists, labels, containers, tolerations,
// affinity, spread constraints and owners with the equal ones of the pods
// before it.
func (in *interner) pod(p *v1.Pod) {
	p.Labels = in.labelMap(p.Labels)
	p.Spec.Overhead = in.resourceList(p.Spec.Overhead)
	p.Spec.Containers = in.containerList(p.Spec.Containers)
	p.Spec.InitContainers = in.containerList(p.Spec.InitContainers)
	p.Spec.Tolerations = in.tolerationList(p.Spec.Tolerations)
	// Parts a key cannot name cheaply: the candidate is the first pod's
	// with the same (shared) labels and containers.
	k := strconv.AppendUint(in.key[:0], uint64(reflect.ValueOf(p.Labels).Pointer()), 16)
	k = append(k, 0)
	k = strconv.AppendUint(k, uint64(reflect.ValueOf(p.Spec.Containers).Pointer()), 16)
	in.key = k
	if p.Spec.Affinity != nil {
		p.Spec.Affinity = intern(in.affinity, k, p.Spec.Affinity, deepEqual)
	}
	if len(p.Spec.TopologySpreadConstraints) > 0 {
		p.Spec.TopologySpreadConstraints = intern(in.spread, k, p.Spec.TopologySpreadConstraints, deepEqual)
	}
	if len(p.OwnerReferences) > 0 {
		p.OwnerReferences = intern(in.owners, k, p.OwnerReferences, deepEqual)
	}
}

// node shares n's capacity, allocatable and image name lists with the
// equal ones of the nodes before it.
func (in *interner) node(n *v1.Node) {
	n.Status.Capacity = in.resourceList(n.Status.Capacity)
	n.Status.Allocatable = in.resourceList(n.Status.Allocatable)
	for i := range n.Status.Images {
		// Changes only which equal list the field holds (as for a
		// container's resources): interning runs in place only.
		img := &n.Status.Images[i]
		img.Names = in.nameList(img.Names)
	}
}

// nameList returns the list equal to names seen first.
func (in *interner) nameList(names []string) []string {
	if len(names) == 0 {
		return names
	}
	k := in.key[:0]
	for _, s := range names {
		// Length-prefixed: names may hold any byte.
		k = strconv.AppendInt(k, int64(len(s)), 10)
		k = append(k, ':')
		k = append(k, s...)
	}
	in.key = k
	return intern(in.imageNames, k, names, nil)
}

// resourceList returns the list equal to l seen first.
func (in *interner) resourceList(l v1.ResourceList) v1.ResourceList {
	if len(l) == 0 {
		return l
	}
	names := in.names[:0]
	for n := range l {
		names = append(names, string(n))
	}
	slices.Sort(names)
	in.names = names
	k := in.key[:0]
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
	in.key = k
	return intern(in.lists, k, l, nil)
}

// labelMap returns the map equal to m seen first.
func (in *interner) labelMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	ks := in.names[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	in.names = ks
	k := in.key[:0]
	for _, s := range ks {
		k = append(k, s...)
		k = append(k, 0)
		k = append(k, m[s]...)
		k = append(k, 0)
	}
	in.key = k
	return intern(in.labels, k, m, nil)
}

// containerList returns the list equal to cs seen first, its containers'
// resource lists shared first (so that the key can name them by
// address).
func (in *interner) containerList(cs []v1.Container) []v1.Container {
	if len(cs) == 0 {
		return cs
	}
	for i := range cs {
		r := &cs[i].Resources
		// Changes only which equal map the field holds: cs may be
		// shared with the caller's cluster when not in place, but
		// interning runs in place only.
		r.Requests, r.Limits = in.resourceList(r.Requests), in.resourceList(r.Limits)
	}
	k := in.key[:0]
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
	in.key = k
	return intern(in.containers, k, cs, deepEqual)
}

// tolerationList returns the list equal to ts seen first.
func (in *interner) tolerationList(ts []v1.Toleration) []v1.Toleration {
	if len(ts) == 0 {
		return ts
	}
	k := in.key[:0]
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
	in.key = k
	return intern(in.tolerations, k, ts, nil)
}

// intern returns the value stored under key k when it equals v, else v
// (stored under k if k is new). Values under one key are equal when eq
// is nil (the key names all of the content), else when eq says so.
func intern[V any](m map[string]V, k []byte, v V, eq func(a, b V) bool) V {
	if c, ok := m[string(k)]; ok {
		if eq == nil || eq(c, v) {
			return c
		}
		return v
	}
	m[string(k)] = v
	return v
}

func deepEqual[V any](a, b V) bool { return reflect.DeepEqual(a, b) }

// mapAddr is the address of a map's header (0 for nil): equal lists share
// one after resourceList.
func mapAddr(m v1.ResourceList) uintptr {
	return uintptr(reflect.ValueOf(m).UnsafePointer())
}
