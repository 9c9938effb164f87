package schedcore

import (
	"fmt"
	"maps"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
)

// PodGroupState is what the scheduler knows of one pod group's members
// (kube's framework.PodGroupState): the members it has seen, and which of
// them are unscheduled, assumed (past Reserve) or assigned (bound). The
// state exists while a member or the PodGroup object is known: a member
// may name a PodGroup that does not exist (yet).
type PodGroupState interface {
	// AllPods returns the UIDs of all members known to the scheduler.
	AllPods() sets.Set[types.UID]
	// AllPodsCount is len(AllPods()).
	AllPodsCount() int
	// UnscheduledPods returns the members neither assumed nor assigned,
	// by pod name (the argument of Handle.Activate).
	UnscheduledPods() map[string]*v1.Pod
	// AssumedPods returns the UIDs of the assumed members.
	AssumedPods() sets.Set[types.UID]
	// AssignedPods returns the UIDs of the bound members.
	AssignedPods() sets.Set[types.UID]
	// ScheduledPods returns the members assumed or assigned: assigned
	// first, then assumed, each in no particular order (kube: map order).
	ScheduledPods() []*v1.Pod
	// ScheduledPodsCount is len(ScheduledPods()).
	ScheduledPodsCount() int
}

// PodGroupStateLister gives a pod group's state by namespace and name
// (kube's framework.PodGroupStateLister).
type PodGroupStateLister interface {
	Get(namespace, name string) (PodGroupState, error)
}

// PodGroupLister gives a cached scheduling.k8s.io/v1beta1 PodGroup by
// namespace and name (kube's framework.PodGroupLister).
type PodGroupLister interface {
	Get(namespace, name string) (*schedulingv1beta1.PodGroup, error)
}

// PodGroupManager gives the cache's pod groups, as kube's
// framework.PodGroupManager (without the CompositePodGroup parts, alpha
// and off): what PreEnqueue reads, outside a cycle's snapshot.
type PodGroupManager interface {
	PodGroupStates() PodGroupStateLister
	PodGroups() PodGroupLister
}

// podGroupKey is a pod group's namespace and name.
type podGroupKey struct{ namespace, name string }

// String is kube's EntityKey form, "podgroup/NS/NAME".
func (k podGroupKey) String() string { return "podgroup/" + k.namespace + "/" + k.name }

// memberKey returns the group a pod names; ok is false for a pod in none.
func memberKey(pod *v1.Pod) (podGroupKey, bool) {
	sg := pod.Spec.SchedulingGroup
	if sg == nil || sg.PodGroupName == nil {
		return podGroupKey{}, false
	}
	return podGroupKey{pod.Namespace, *sg.PodGroupName}, true
}

var podGroupGeneration atomic.Int64

// nextPodGroupGeneration is global, not per group, so that a group deleted
// and created again never repeats a generation a snapshot holds.
func nextPodGroupGeneration() int64 { return podGroupGeneration.Add(1) }

// podGroupState is kube's podGroupStateData (backend/cache/podgroupstate.go):
// the cache holds one per group, a snapshot a clone of it. Pods and the
// PodGroup object are shared, never changed.
type podGroupState struct {
	// generation changes with every change; UpdateSnapshot clones a
	// group whose generation differs from the snapshot's copy.
	generation  int64
	allPods     map[types.UID]*v1.Pod
	unscheduled sets.Set[types.UID]
	assumed     map[types.UID]*v1.Pod
	assigned    sets.Set[types.UID]
	podGroup    *schedulingv1beta1.PodGroup
}

var _ PodGroupState = (*podGroupState)(nil)

func newPodGroupState() *podGroupState {
	return &podGroupState{
		allPods:     map[types.UID]*v1.Pod{},
		unscheduled: sets.New[types.UID](),
		assumed:     map[types.UID]*v1.Pod{},
		assigned:    sets.New[types.UID](),
	}
}

// addPod adds a member: assigned when it has a node (leaving the other
// states: a queued member bound by someone else), else unscheduled.
func (d *podGroupState) addPod(pod *v1.Pod) {
	d.generation = nextPodGroupGeneration()
	d.allPods[pod.UID] = pod
	if pod.Spec.NodeName != "" {
		d.assigned.Insert(pod.UID)
		d.unscheduled.Delete(pod.UID)
		delete(d.assumed, pod.UID)
		return
	}
	d.unscheduled.Insert(pod.UID)
}

// updatePod replaces a member; a member given a node becomes assigned.
func (d *podGroupState) updatePod(oldPod, newPod *v1.Pod) {
	d.generation = nextPodGroupGeneration()
	d.allPods[newPod.UID] = newPod
	if oldPod.Spec.NodeName == "" && newPod.Spec.NodeName != "" {
		d.assigned.Insert(newPod.UID)
		d.unscheduled.Delete(newPod.UID)
		delete(d.assumed, newPod.UID)
	}
}

// deletePod forgets a member.
func (d *podGroupState) deletePod(uid types.UID) {
	d.generation = nextPodGroupGeneration()
	delete(d.allPods, uid)
	d.unscheduled.Delete(uid)
	delete(d.assumed, uid)
	d.assigned.Delete(uid)
}

// assumePod marks a known member assumed (assigned if the stored copy
// already has a node); an unknown pod (deleted meanwhile) is ignored.
func (d *podGroupState) assumePod(pod *v1.Pod) {
	stored, ok := d.allPods[pod.UID]
	if !ok {
		return
	}
	d.generation = nextPodGroupGeneration()
	if stored.Spec.NodeName != "" {
		d.assigned.Insert(pod.UID)
	} else {
		d.assumed[pod.UID] = pod
	}
	d.unscheduled.Delete(pod.UID)
}

// forgetPod undoes assumePod: the member is unscheduled again, or
// assigned if the stored copy has a node; an unknown pod is ignored.
func (d *podGroupState) forgetPod(uid types.UID) {
	pod := d.allPods[uid]
	if pod == nil {
		return
	}
	d.generation = nextPodGroupGeneration()
	delete(d.assumed, uid)
	if pod.Spec.NodeName != "" {
		d.assigned.Insert(uid)
	} else {
		d.unscheduled.Insert(uid)
	}
}

func (d *podGroupState) setPodGroup(pg *schedulingv1beta1.PodGroup) {
	d.generation = nextPodGroupGeneration()
	d.podGroup = pg
}

func (d *podGroupState) removePodGroup() {
	d.generation = nextPodGroupGeneration()
	d.podGroup = nil
}

// empty: no member and no PodGroup object, the state can go.
func (d *podGroupState) empty() bool { return len(d.allPods) == 0 && d.podGroup == nil }

// clone copies the sets; pods and the PodGroup are shared.
func (d *podGroupState) clone() *podGroupState {
	return &podGroupState{
		generation:  d.generation,
		allPods:     maps.Clone(d.allPods),
		unscheduled: d.unscheduled.Clone(),
		assumed:     maps.Clone(d.assumed),
		assigned:    d.assigned.Clone(),
		podGroup:    d.podGroup,
	}
}

func (d *podGroupState) AllPods() sets.Set[types.UID] { return sets.KeySet(d.allPods) }
func (d *podGroupState) AllPodsCount() int            { return len(d.allPods) }
func (d *podGroupState) AssumedPods() sets.Set[types.UID] {
	return sets.KeySet(d.assumed)
}
func (d *podGroupState) AssignedPods() sets.Set[types.UID] { return d.assigned.Clone() }
func (d *podGroupState) ScheduledPodsCount() int           { return len(d.assumed) + len(d.assigned) }

func (d *podGroupState) UnscheduledPods() map[string]*v1.Pod {
	m := make(map[string]*v1.Pod, len(d.unscheduled))
	for uid := range d.unscheduled {
		p := d.allPods[uid]
		m[p.Name] = p
	}
	return m
}

func (d *podGroupState) ScheduledPods() []*v1.Pod {
	out := make([]*v1.Pod, 0, len(d.assigned)+len(d.assumed))
	for uid := range d.assigned {
		out = append(out, d.allPods[uid])
	}
	for _, p := range d.assumed {
		out = append(out, p)
	}
	return out
}

// podGroupStates is a map of group states served as kube's listers; the
// errors are kube's (backend/cache/cache.go, snapshot.go).
type podGroupStates struct {
	enabled bool
	m       map[podGroupKey]*podGroupState
	// lock, for the cache's listers, read-locks the cache and returns the
	// unlock: the live state changes under other goroutines, so a caller
	// gets a copy of a state taken under the lock.
	lock func() func()
}

func (l podGroupStates) get(namespace, name string) (*podGroupState, func(), error) {
	unlock := func() {}
	if l.lock != nil {
		unlock = l.lock()
	}
	st, ok := l.m[podGroupKey{namespace, name}]
	return st, unlock, boolErr(ok, "pod group state not found for pod group %s/%s", namespace, name)
}

func boolErr(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

type podGroupStateLister podGroupStates

func (l podGroupStateLister) Get(namespace, name string) (PodGroupState, error) {
	// The cache's lister says the gate is off, the snapshot's does not
	// (kube's snapshot lister: its map is empty then).
	if l.lock != nil && !l.enabled {
		return nil, errGenericWorkloadOff
	}
	st, unlock, err := podGroupStates(l).get(namespace, name)
	defer unlock()
	if err != nil {
		return nil, err
	}
	if l.lock != nil {
		return st.clone(), nil
	}
	return st, nil
}

type podGroupLister podGroupStates

func (l podGroupLister) Get(namespace, name string) (*schedulingv1beta1.PodGroup, error) {
	if !l.enabled {
		return nil, errGenericWorkloadOff
	}
	key := podGroupKey{namespace, name}
	st, unlock, err := podGroupStates(l).get(namespace, name)
	defer unlock()
	if err != nil {
		return nil, fmt.Errorf("pod group state not found for pod group %s", key)
	}
	if st.podGroup == nil {
		return nil, fmt.Errorf("pod group object not found for pod group %s", key)
	}
	return st.podGroup, nil
}

var errGenericWorkloadOff = fmt.Errorf("generic workload feature gate is disabled")
