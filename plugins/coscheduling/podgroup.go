package coscheduling

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The two ways a pod joins a group.
const (
	// PodGroupLabel is scheduler-plugins' label naming the pod's PodGroup.
	PodGroupLabel = schedcore.PodGroupLabel
	// PodGroupAPIVersion is scheduler-plugins' PodGroup CRD version.
	PodGroupAPIVersion = schedcore.CRDPodGroupAPIVersion
	// NativePodGroupAPIVersion is Kubernetes 1.37's PodGroup, referenced
	// by pod.spec.schedulingGroup.podGroupName.
	NativePodGroupAPIVersion = schedcore.NativePodGroupAPIVersion
	// PodGroupKind is the kind of both.
	PodGroupKind = schedcore.PodGroupKind
)

// PodGroup is the part of scheduler-plugins' PodGroup
// (scheduling.x-k8s.io/v1alpha1) the plugin reads. The CRD's objects reach
// the engine unstructured and are decoded into it.
type PodGroup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              PodGroupSpec `json:"spec,omitempty"`
}

// PodGroupSpec is the CRD's spec.
type PodGroupSpec struct {
	// MinMember is how many pods must be placed together.
	MinMember int32 `json:"minMember,omitempty"`
	// MinResources, when set, must be available in the cluster (counted
	// over all nodes) before the group is tried.
	MinResources v1.ResourceList `json:"minResources,omitempty"`
	// ScheduleTimeoutSeconds overrides permitWaitingTimeSeconds.
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// ref is a pod's group reference.
type ref struct {
	namespace, name string
	native          bool
}

// key is "namespace/name", the group's name in messages.
func (r ref) key() string { return r.namespace + "/" + r.name }

// groupOf returns the pod's group reference. The native field wins over
// the label when a pod has both. With GenericWorkload on, a pod naming a
// native PodGroup is kube's (GangScheduling and the pod-group cycle), not
// this plugin's, even with the label: the mapping is off.
func (pl *Coscheduling) groupOf(p *v1.Pod) (ref, bool) {
	if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		if pl.nativeOff {
			return ref{}, false
		}
		return ref{namespace: p.Namespace, name: *g.PodGroupName, native: true}, true
	}
	if n := p.Labels[PodGroupLabel]; n != "" {
		return ref{namespace: p.Namespace, name: n}, true
	}
	return ref{}, false
}

// inGroup reports whether p belongs to r.
func (pl *Coscheduling) inGroup(p *v1.Pod, r ref) bool {
	if p.Namespace != r.namespace {
		return false
	}
	o, ok := pl.groupOf(p)
	return ok && o.native == r.native && o.name == r.name
}

// group is a PodGroup as the plugin uses it, whichever its form.
type group struct {
	ref
	// gang is false for a native PodGroup with the basic policy: its pods
	// are scheduled one by one.
	gang         bool
	minMember    int32
	minResources v1.ResourceList
	// timeout is the PodGroup's own Permit timeout, 0 if unset.
	timeout time.Duration
	created time.Time
}

// groupCache keeps parsed PodGroups by the object they were parsed from,
// so that Less and the per-cycle checks decode each object once.
type groupCache struct {
	mu sync.Mutex
	m  map[string]cachedGroup
}

type cachedGroup struct {
	obj runtime.Object
	g   *group
	err error
}

func (c *groupCache) parse(r ref, obj runtime.Object) (*group, error) {
	k := r.key()
	if r.native {
		k = "native:" + k
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[k]; ok && e.obj == obj {
		return e.g, e.err
	}
	g, err := parseGroup(r, obj)
	if c.m == nil {
		c.m = map[string]cachedGroup{}
	}
	c.m[k] = cachedGroup{obj: obj, g: g, err: err}
	return g, err
}

func parseGroup(r ref, obj runtime.Object) (*group, error) {
	g := &group{ref: r}
	if r.native {
		pg, ok := obj.(*schedulingv1beta1.PodGroup)
		if !ok {
			pg = &schedulingv1beta1.PodGroup{}
			if err := fromObject(obj, pg); err != nil {
				return nil, err
			}
		}
		g.created = pg.CreationTimestamp.Time
		if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
			g.gang, g.minMember = true, gang.MinCount
		}
		return g, nil
	}
	pg, ok := obj.(*PodGroup)
	if !ok {
		pg = &PodGroup{}
		if err := fromObject(obj, pg); err != nil {
			return nil, err
		}
	}
	g.gang, g.minMember, g.minResources = true, pg.Spec.MinMember, pg.Spec.MinResources
	g.created = pg.CreationTimestamp.Time
	if s := pg.Spec.ScheduleTimeoutSeconds; s != nil {
		g.timeout = time.Duration(*s) * time.Second
	}
	return g, nil
}

// fromObject decodes an unstructured object (or any JSON-marshallable one)
// into a typed struct.
func fromObject(obj runtime.Object, into any) error {
	var data []byte
	var err error
	if u, ok := obj.(*unstructured.Unstructured); ok {
		data, err = json.Marshal(u.Object)
	} else {
		data, err = json.Marshal(obj)
	}
	if err == nil {
		err = json.Unmarshal(data, into)
	}
	if err != nil {
		return fmt.Errorf("decoding PodGroup: %w", err)
	}
	return nil
}

// DeepCopyObject implements runtime.Object.
func (pg *PodGroup) DeepCopyObject() runtime.Object {
	if pg == nil {
		return nil
	}
	out := &PodGroup{TypeMeta: pg.TypeMeta}
	pg.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.MinMember = pg.Spec.MinMember
	if pg.Spec.MinResources != nil {
		out.Spec.MinResources = pg.Spec.MinResources.DeepCopy()
	}
	if s := pg.Spec.ScheduleTimeoutSeconds; s != nil {
		v := *s
		out.Spec.ScheduleTimeoutSeconds = &v
	}
	return out
}

// lookup returns the pod's group reference and its parsed PodGroup (nil
// when the PodGroup does not exist); member is false for pods in no group.
func (pl *Coscheduling) lookup(p *v1.Pod) (r ref, g *group, member bool) {
	r, member = pl.groupOf(p)
	if !member || pl.h.Objects() == nil {
		return r, nil, member
	}
	apiVersion := PodGroupAPIVersion
	if r.native {
		apiVersion = NativePodGroupAPIVersion
	}
	obj, ok := pl.h.Objects().Get(apiVersion, PodGroupKind, r.namespace, r.name)
	if !ok {
		return r, nil, true
	}
	g, err := pl.groups.parse(r, obj)
	if err != nil {
		pl.h.Logger().Error(err, "Ignoring PodGroup", "podGroup", r.key())
		return r, nil, true
	}
	return r, g, true
}

// siblings lists the group's pods that can still run (the pod itself
// included), in the driver's order.
func (pl *Coscheduling) siblings(r ref) []*v1.Pod {
	if pl.h.Objects() == nil {
		return nil
	}
	var out []*v1.Pod
	for _, p := range pl.h.Objects().Pods(r.namespace) {
		if p.DeletionTimestamp == nil && p.Status.Phase != v1.PodSucceeded && p.Status.Phase != v1.PodFailed && pl.inGroup(p, r) {
			out = append(out, p)
		}
	}
	return out
}
