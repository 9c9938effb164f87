package capacity

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	apidefaults "github.com/kubectl-sched/kubectl-sched/internal/defaults"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ErrNotASpec marks an input object that is not a pod, a pod template or a
// gang (exit code 2).
var ErrNotASpec = errors.New("not a pod, a pod template or a gang")

// Kinds of spec.
const (
	KindPod         = "Pod"
	KindDeployment  = "Deployment"
	KindReplicaSet  = "ReplicaSet"
	KindStatefulSet = "StatefulSet"
	KindJob         = "Job"
	KindDaemonSet   = "DaemonSet"
	KindPodGroup    = "PodGroup"
	KindWorkload    = "Workload"
)

// Group labels and fields (plugins/coscheduling's, read here to tie a
// spec's pods to its PodGroup).
const (
	podGroupLabel         = "scheduling.x-k8s.io/pod-group"
	podGroupAPIVersion    = "scheduling.x-k8s.io/v1alpha1"
	nativePodGroupVersion = "scheduling.k8s.io/v1beta1"
)

// Spec is one workload whose copies are counted: a Pod, the pod template
// of a Deployment, ReplicaSet, StatefulSet, Job or DaemonSet, or a gang (a
// PodGroup and its pods, counted in whole groups).
type Spec struct {
	// Name is "namespace/name" of the object (the PodGroup's for a gang).
	Name string
	// Kind is one of the Kind constants.
	Kind string
	// Source is "file:line" of the object.
	Source string
	// Pod is one copy as its controller creates it: the template's labels,
	// annotations and spec in the object's namespace, with the
	// controller's labels and owner reference. Nil for a gang.
	Pod *v1.Pod
	// Gang, for a gang, is the group one copy is.
	Gang *Gang
	// ReplicaSet, StatefulSet are the controller objects kube-scheduler's
	// default spreading reads (the Deployment's ReplicaSet, created before
	// its pods); nil when the cluster has them already.
	ReplicaSet  *appsv1.ReplicaSet
	StatefulSet *appsv1.StatefulSet
	// ClaimTemplates are a StatefulSet's volumeClaimTemplates: each copy
	// gets its own claims, created before it.
	ClaimTemplates []v1.PersistentVolumeClaim
	// DaemonSet is the DaemonSet of a DaemonSet spec (one copy per node
	// it targets).
	DaemonSet *appsv1.DaemonSet
	// Replicas is the number of copies asked for (--replicas); 0: as
	// many as fit.
	Replicas int
	// Workload, for a scheduling.k8s.io/v1beta1 Workload (GenericWorkload
	// on), is the Workload one copy is, with Groups its PodGroups.
	Workload *schedulingv1beta1.Workload
	Groups   []*Gang
}

// perCopyObjects reports whether each copy comes with objects made for it
// before it is scheduled: a gang's PodGroup, a StatefulSet pod's claims, or
// the ResourceClaims kube's resourceclaim controller makes from the pod's
// ResourceClaimTemplates (engine.Offline makes those as a pod arrives,
// once DRA is in the engine). Such copies go through the scheduling cycle
// one by one, never the node-by-node count, which commits bare copies.
func (s *Spec) perCopyObjects() bool {
	return s.Gang != nil || s.Workload != nil || len(s.ClaimTemplates) > 0 || (s.Pod != nil && hasTemplateClaims(s.Pod))
}

// hasTemplateClaims reports whether the pod has claims made from a
// ResourceClaimTemplate (one per copy).
func hasTemplateClaims(p *v1.Pod) bool {
	for _, c := range p.Spec.ResourceClaims {
		if c.ResourceClaimTemplateName != nil {
			return true
		}
	}
	return false
}

// Gang is a PodGroup and the pods of one copy of it.
type Gang struct {
	// Group is the PodGroup object.
	Group *unstructured.Unstructured
	// Native is true for scheduling.k8s.io PodGroups (pods name them in
	// spec.schedulingGroup), false for scheduler-plugins' (a label).
	Native bool
	// Members are the group's pods, in input order.
	Members []*v1.Pod
	// PodGroup is the typed scheduling.k8s.io/v1beta1 PodGroup, defaulted
	// and validated, when GenericWorkload is on: the copy goes through
	// kube's pod-group cycle, not Coscheduling. Nil otherwise.
	PodGroup *schedulingv1beta1.PodGroup
	// Source is "file:line" of the PodGroup.
	Source string
}

// LoadSpecs reads the specs of manifest files ('-' is stdin). Objects
// without a namespace get namespace ("" is "default"). Every object must be
// a spec or a PodGroup whose pods are among them; anything else is an error
// wrapping ErrNotASpec and snapshot.ErrInvalid.
func LoadSpecs(paths []string, stdin io.Reader, namespace string, cl *snapshot.Cluster) ([]*Spec, error) {
	return LoadSpecsFor(paths, stdin, namespace, cl, schedcore.Features{})
}

// LoadSpecsFor is LoadSpecs under feature gates: with GenericWorkload on,
// a scheduling.k8s.io/v1beta1 PodGroup is read as kube's typed object and
// its copies go through the pod-group cycle, and Workloads are specs
// whose copies are all their PodGroups (groups.go).
func LoadSpecsFor(paths []string, stdin io.Reader, namespace string, cl *snapshot.Cluster, features schedcore.Features) ([]*Spec, error) {
	objs, err := snapshot.ReadObjects(paths, stdin)
	if err != nil {
		return nil, err
	}
	if namespace == "" {
		namespace = v1.NamespaceDefault
	}
	l := &loader{namespace: namespace, cluster: cl, groups: map[string]*Spec{}, podGroupCycle: features.GenericWorkload}
	for _, o := range objs {
		if err := l.add(o); err != nil {
			return nil, err
		}
	}
	for _, m := range l.pending {
		return nil, fmt.Errorf("%s: %s names PodGroup %s, which is not among the specs (a gang is counted with its PodGroup: give both): %w", m.source, m.what, strings.SplitN(m.key, "/", 2)[1], ErrNotASpec)
	}
	for _, s := range l.specs {
		if s.Gang != nil && len(s.Gang.Members) == 0 {
			return nil, fmt.Errorf("%s: PodGroup %s: no pods of the group among the specs (give its pods, or a workload whose template names it): %w", s.Source, s.Name, ErrNotASpec)
		}
	}
	if err := l.workloads(); err != nil {
		return nil, err
	}
	if len(l.specs) == 0 {
		return nil, fmt.Errorf("%s: no objects: %w", strings.Join(paths, ", "), ErrNotASpec)
	}
	l.resolvePriorities()
	return l.specs, nil
}

// resolvePriorities gives each copy the priority its priorityClassName
// names in the cluster, as the API server's admission would (and as
// dryrun does for the dump's pods): the copies' queue order and
// preemption follow it. A class the cluster lacks is a warning of the
// cluster's.
func (l *loader) resolvePriorities() {
	var classes []*schedulingv1.PriorityClass
	if l.cluster != nil {
		classes = l.cluster.PriorityClasses
	}
	resolve := func(p *v1.Pod) {
		if w := snapshot.ResolvePriority(p, classes); w != "" && l.cluster != nil {
			l.cluster.Warnings = append(l.cluster.Warnings, w)
		}
		if l.cluster != nil {
			// The RuntimeClass admission, as for the cluster's pods.
			if w := snapshot.AdmitRuntimeClass(p, l.cluster.RuntimeClasses); w != "" {
				l.cluster.Warnings = append(l.cluster.Warnings, w)
			}
		}
	}
	for _, s := range l.specs {
		if s.Pod != nil {
			resolve(s.Pod)
		}
		for _, g := range s.gangs() {
			for _, m := range g.Members {
				resolve(m)
			}
			if g.PodGroup != nil && l.cluster != nil {
				if w := snapshot.ResolvePodGroupPriority(g.PodGroup, classes); w != "" {
					l.cluster.Warnings = append(l.cluster.Warnings, w)
				}
			}
		}
	}
}

type loader struct {
	namespace string
	cluster   *snapshot.Cluster
	specs     []*Spec
	// groups are the PodGroups by "apiVersion/namespace/name"; pending
	// are members met before their group.
	groups  map[string]*Spec
	pending []pendingMember
	// podGroupCycle is GenericWorkload: native PodGroups are typed and
	// scheduled by the pod-group cycle; Workloads are read.
	podGroupCycle bool
}

type pendingMember struct {
	key, source, what string
	pods              []*v1.Pod
}

func (l *loader) add(o snapshot.Object) error {
	kind, group := o.Kind(), apiGroup(o.APIVersion())
	source := fmt.Sprintf("%s:%d", o.File, o.Line)
	ns := o.Namespace()
	if ns == "" {
		ns = l.namespace
	}
	var s *Spec
	var replicas int32 = 1
	switch {
	case kind == KindPod && group == "":
		p := &v1.Pod{}
		if err := o.Decode(p); err != nil {
			return err
		}
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: ns, Labels: p.Labels, Annotations: p.Annotations, OwnerReferences: p.OwnerReferences}, Spec: p.Spec}
		pod.Spec.NodeName = ""
		s = &Spec{Kind: KindPod, Pod: pod}
	case kind == KindDeployment && group == "apps":
		d := &appsv1.Deployment{}
		if err := o.Decode(d); err != nil {
			return err
		}
		d.Namespace = ns
		s = l.deployment(d)
		replicas = ptr.Deref(d.Spec.Replicas, 1)
	case kind == KindReplicaSet && group == "apps":
		rs := &appsv1.ReplicaSet{}
		if err := o.Decode(rs); err != nil {
			return err
		}
		rs.Namespace = ns
		s = &Spec{Kind: KindReplicaSet, Pod: templatePod(rs.Spec.Template, ns, owner("apps/v1", KindReplicaSet, rs.Name, rs.UID))}
		if findRS(l.cluster, ns, rs.Name) == nil {
			s.ReplicaSet = rs
		}
		replicas = ptr.Deref(rs.Spec.Replicas, 1)
	case kind == KindStatefulSet && group == "apps":
		ss := &appsv1.StatefulSet{}
		if err := o.Decode(ss); err != nil {
			return err
		}
		ss.Namespace = ns
		s = &Spec{Kind: KindStatefulSet, Pod: templatePod(ss.Spec.Template, ns, owner("apps/v1", KindStatefulSet, ss.Name, ss.UID)), ClaimTemplates: ss.Spec.VolumeClaimTemplates}
		if findSS(l.cluster, ns, ss.Name) == nil {
			s.StatefulSet = ss
		}
		replicas = ptr.Deref(ss.Spec.Replicas, 1)
	case kind == KindJob && group == "batch":
		j := &batchv1.Job{}
		if err := o.Decode(j); err != nil {
			return err
		}
		uid := string(j.UID)
		if uid == "" {
			uid = "capacity-" + ns + "-" + j.Name
		}
		pod := templatePod(j.Spec.Template, ns, owner("batch/v1", KindJob, j.Name, types.UID(uid)))
		for _, k := range []string{"batch.kubernetes.io/controller-uid", "controller-uid"} {
			setLabel(pod, k, uid)
		}
		for _, k := range []string{"batch.kubernetes.io/job-name", "job-name"} {
			setLabel(pod, k, j.Name)
		}
		s = &Spec{Kind: KindJob, Pod: pod}
		replicas = ptr.Deref(j.Spec.Parallelism, 1)
	case kind == KindDaemonSet && group == "apps":
		ds := &appsv1.DaemonSet{}
		if err := o.Decode(ds); err != nil {
			return err
		}
		ds.Namespace = ns
		s = &Spec{Kind: KindDaemonSet, Pod: templatePod(ds.Spec.Template, ns, owner("apps/v1", KindDaemonSet, ds.Name, ds.UID)), DaemonSet: ds}
	case (kind == KindPodGroup || kind == KindWorkload) && group == schedulingv1beta1.GroupName && o.APIVersion() != nativePodGroupVersion:
		return o.Errorf("%v: %s", ErrNotASpec, apidefaults.UnservedWorkloadAPI(o.APIVersion(), kind))
	case kind == KindWorkload && group == schedulingv1beta1.GroupName:
		return l.addWorkload(o, ns, source)
	case kind == KindPodGroup && (o.APIVersion() == podGroupAPIVersion || o.APIVersion() == nativePodGroupVersion):
		u := &unstructured.Unstructured{Object: o.Data}
		u.SetNamespace(ns)
		g := &Spec{Kind: KindPodGroup, Name: ns + "/" + u.GetName(), Source: source, Gang: &Gang{Group: u, Native: o.APIVersion() == nativePodGroupVersion, Source: source}}
		if g.Gang.Native && l.podGroupCycle {
			pg, err := typedPodGroup(o, ns)
			if err != nil {
				return err
			}
			g.Gang.PodGroup = pg
		}
		key := groupKey(g.Gang.Native, ns, u.GetName())
		if l.groups[key] != nil {
			return o.Errorf("PodGroup given twice")
		}
		l.groups[key] = g
		l.specs = append(l.specs, g)
		rest := l.pending[:0]
		for _, m := range l.pending {
			if m.key == key {
				g.Gang.Members = append(g.Gang.Members, m.pods...)
			} else {
				rest = append(rest, m)
			}
		}
		l.pending = rest
		return nil
	default:
		return o.Errorf("%v: kind %s/%s (want Pod, Deployment, ReplicaSet, StatefulSet, Job, DaemonSet, or a PodGroup with its pods)", ErrNotASpec, o.APIVersion(), kind)
	}
	if len(s.Pod.Spec.Containers) == 0 {
		return o.Errorf("%v: %sspec.containers: required", ErrNotASpec, templatePath(kind))
	}
	if err := defaultPod(o, kind, s.Pod); err != nil {
		return err
	}
	s.Name, s.Source = ns+"/"+o.Name(), source
	if native, name, ok := memberOf(s.Pod); ok {
		if s.Kind == KindDaemonSet {
			return o.Errorf("%v: a DaemonSet's pods cannot be a gang", ErrNotASpec)
		}
		members := make([]*v1.Pod, replicas)
		for i := range members {
			members[i] = s.Pod
		}
		key := groupKey(native, ns, name)
		if g := l.groups[key]; g != nil {
			g.Gang.Members = append(g.Gang.Members, members...)
		} else {
			l.pending = append(l.pending, pendingMember{key: key, source: source, what: kind + " " + s.Name, pods: members})
		}
		return nil
	}
	l.specs = append(l.specs, s)
	return nil
}

// defaultPod refuses what the API server would refuse of the object (a
// workload's template is validated as written) and gives the pod the
// defaults the API server gives a pod its controller creates (a Pod's
// after them, as it validates a Pod).
func defaultPod(o snapshot.Object, kind string, p *v1.Pod) error {
	var errs field.ErrorList
	if kind != KindPod {
		errs = apidefaults.ValidatePodSpec(&p.Spec, field.NewPath("spec", "template", "spec"))
	}
	if len(errs) == 0 {
		apidefaults.Pod(p)
		if kind == KindPod {
			errs = apidefaults.ValidatePodSpec(&p.Spec, field.NewPath("spec"))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	msg := (&apidefaults.InvalidError{Kind: kind, Name: o.Name(), Errs: errs}).Error()
	if o.Where != "" {
		msg = o.Where + ": " + msg
	}
	return &snapshot.LoadError{File: o.File, Line: o.Line, Msg: msg}
}

func templatePath(kind string) string {
	if kind == KindPod {
		return ""
	}
	return "spec.template."
}

func apiGroup(apiVersion string) string {
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		return apiVersion[:i]
	}
	return ""
}

func groupKey(native bool, ns, name string) string {
	return strconv.FormatBool(native) + "/" + ns + "/" + name
}

// memberOf returns the PodGroup a pod names: spec.schedulingGroup (native)
// wins over the scheduler-plugins label, as in Coscheduling.
func memberOf(p *v1.Pod) (native bool, name string, ok bool) {
	if g := p.Spec.SchedulingGroup; g != nil && g.PodGroupName != nil && *g.PodGroupName != "" {
		return true, *g.PodGroupName, true
	}
	if n := p.Labels[podGroupLabel]; n != "" {
		return false, n, true
	}
	return false, "", false
}

func owner(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}

// templatePod is a pod of the template as a controller creates it.
func templatePod(t v1.PodTemplateSpec, ns string, ref metav1.OwnerReference) *v1.Pod {
	p := &v1.Pod{ObjectMeta: *t.ObjectMeta.DeepCopy(), Spec: *t.Spec.DeepCopy()}
	p.Name, p.Namespace, p.UID, p.ResourceVersion = "", ns, "", ""
	p.OwnerReferences = []metav1.OwnerReference{ref}
	p.Spec.NodeName = ""
	return p
}

func setLabel(p *v1.Pod, k, v string) {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[k] = v
}
