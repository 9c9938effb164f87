package snapshot

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// keptAnnotationPrefixes are the annotations scheduling reads (volume
// binding, provisioning, default storage classes, scheduler hints); every
// other annotation is dropped by Strip, since annotations often hold
// configuration and last-applied manifests with secrets in them.
var keptAnnotationPrefixes = []string{
	"volume.kubernetes.io/",
	"volume.beta.kubernetes.io/",
	"pv.kubernetes.io/",
	"scheduler.alpha.kubernetes.io/",
	// CSINodes' migrated in-tree plugins (VolumeBinding translates PVs).
	"storage.alpha.kubernetes.io/migrated-plugins",
	"storageclass.kubernetes.io/is-default-class",
	"storageclass.beta.kubernetes.io/is-default-class",
	// Generated ResourceClaims: the pod claim they are for, the claim of
	// DRA-backed extended resources.
	"resource.kubernetes.io/",
}

func keepAnnotation(k string) bool {
	for _, p := range keptAnnotationPrefixes {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// Strip removes, in place, what the scheduler does not read and what may
// be sensitive: managedFields, annotations other than the scheduling ones,
// and in pods the containers' env values, envFrom, command, args, probes
// and lifecycle hooks. Names, labels, images, ports, resources, volumes,
// affinity, tolerations, spread constraints and status stay.
func (c *Cluster) Strip() {
	for _, o := range c.objects() {
		stripMeta(o.meta)
	}
	for _, p := range c.Pods {
		StripPodSpec(&p.Spec)
	}
	for _, rs := range c.ReplicaSets {
		StripPodSpec(&rs.Spec.Template.Spec)
		stripMeta(&rs.Spec.Template.ObjectMeta)
	}
	for _, ss := range c.StatefulSets {
		StripPodSpec(&ss.Spec.Template.Spec)
		stripMeta(&ss.Spec.Template.ObjectMeta)
	}
	for _, rc := range c.ReplicationControllers {
		if rc.Spec.Template != nil {
			StripPodSpec(&rc.Spec.Template.Spec)
			stripMeta(&rc.Spec.Template.ObjectMeta)
		}
	}
	for _, u := range c.Others {
		u.SetManagedFields(nil)
		ann := u.GetAnnotations()
		for k := range ann {
			if !keepAnnotation(k) {
				delete(ann, k)
			}
		}
		if len(ann) == 0 {
			ann = nil
		}
		u.SetAnnotations(ann)
	}
}

func stripMeta(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	for k := range m.Annotations {
		if !keepAnnotation(k) {
			delete(m.Annotations, k)
		}
	}
	if len(m.Annotations) == 0 {
		m.Annotations = nil
	}
}

// StripPodSpec drops the containers' env values (names stay), envFrom,
// command, args, probes and lifecycle hooks.
func StripPodSpec(s *v1.PodSpec) {
	strip := func(c *v1.Container) {
		for i := range c.Env {
			c.Env[i].Value, c.Env[i].ValueFrom = "", nil
		}
		c.EnvFrom, c.Command, c.Args = nil, nil, nil
		c.LivenessProbe, c.ReadinessProbe, c.StartupProbe, c.Lifecycle = nil, nil, nil, nil
	}
	for i := range s.Containers {
		strip(&s.Containers[i])
	}
	for i := range s.InitContainers {
		strip(&s.InitContainers[i])
	}
	for i := range s.EphemeralContainers {
		ec := &s.EphemeralContainers[i].EphemeralContainerCommon
		for j := range ec.Env {
			ec.Env[j].Value, ec.Env[j].ValueFrom = "", nil
		}
		ec.EnvFrom, ec.Command, ec.Args = nil, nil, nil
		ec.LivenessProbe, ec.ReadinessProbe, ec.StartupProbe, ec.Lifecycle = nil, nil, nil, nil
	}
}

// object is one typed object of a Cluster with its kind, for writing.
type object struct {
	apiVersion, kind string
	meta             *metav1.ObjectMeta
	obj              runtime.Object
}

// objects lists the cluster's typed objects in the order a dump is
// written: cluster-scoped kinds first, pods last, each sorted by
// namespace/name.
func (c *Cluster) objects() []object {
	var out []object
	add := func(apiVersion, kind string, n int, get func(i int) (*metav1.ObjectMeta, runtime.Object)) {
		start := len(out)
		for i := 0; i < n; i++ {
			m, o := get(i)
			out = append(out, object{apiVersion, kind, m, o})
		}
		part := out[start:]
		sort.SliceStable(part, func(i, j int) bool {
			if part[i].meta.Namespace != part[j].meta.Namespace {
				return part[i].meta.Namespace < part[j].meta.Namespace
			}
			return part[i].meta.Name < part[j].meta.Name
		})
	}
	add("v1", "Namespace", len(c.Namespaces), func(i int) (*metav1.ObjectMeta, runtime.Object) { return &c.Namespaces[i].ObjectMeta, c.Namespaces[i] })
	add("v1", "Node", len(c.Nodes), func(i int) (*metav1.ObjectMeta, runtime.Object) { return &c.Nodes[i].ObjectMeta, c.Nodes[i] })
	add("scheduling.k8s.io/v1", "PriorityClass", len(c.PriorityClasses), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &c.PriorityClasses[i].ObjectMeta, c.PriorityClasses[i]
	})
	add("node.k8s.io/v1", "RuntimeClass", len(c.RuntimeClasses), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &c.RuntimeClasses[i].ObjectMeta, c.RuntimeClasses[i]
	})
	add("storage.k8s.io/v1", "StorageClass", len(c.StorageClasses), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &c.StorageClasses[i].ObjectMeta, c.StorageClasses[i]
	})
	add("storage.k8s.io/v1", "CSINode", len(c.CSINodes), func(i int) (*metav1.ObjectMeta, runtime.Object) { return &c.CSINodes[i].ObjectMeta, c.CSINodes[i] })
	add("storage.k8s.io/v1", "CSIDriver", len(c.CSIDrivers), func(i int) (*metav1.ObjectMeta, runtime.Object) { return &c.CSIDrivers[i].ObjectMeta, c.CSIDrivers[i] })
	add("storage.k8s.io/v1", "CSIStorageCapacity", len(c.CSIStorageCapacities), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &c.CSIStorageCapacities[i].ObjectMeta, c.CSIStorageCapacities[i]
	})
	add("v1", "PersistentVolume", len(c.PVs), func(i int) (*metav1.ObjectMeta, runtime.Object) { return &c.PVs[i].ObjectMeta, c.PVs[i] })
	add("v1", "PersistentVolumeClaim", len(c.PVCs), func(i int) (*metav1.ObjectMeta, runtime.Object) { return &c.PVCs[i].ObjectMeta, c.PVCs[i] })
	add("policy/v1", "PodDisruptionBudget", len(c.PDBs), func(i int) (*metav1.ObjectMeta, runtime.Object) { return &c.PDBs[i].ObjectMeta, c.PDBs[i] })
	add("v1", "Service", len(c.Services), func(i int) (*metav1.ObjectMeta, runtime.Object) { return &c.Services[i].ObjectMeta, c.Services[i] })
	add("v1", "ReplicationController", len(c.ReplicationControllers), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &c.ReplicationControllers[i].ObjectMeta, c.ReplicationControllers[i]
	})
	add("apps/v1", "ReplicaSet", len(c.ReplicaSets), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &c.ReplicaSets[i].ObjectMeta, c.ReplicaSets[i]
	})
	add("apps/v1", "StatefulSet", len(c.StatefulSets), func(i int) (*metav1.ObjectMeta, runtime.Object) {
		return &c.StatefulSets[i].ObjectMeta, c.StatefulSets[i]
	})
	c.draObjects(add)
	c.workloadObjects(add)
	add("v1", "Pod", len(c.Pods), func(i int) (*metav1.ObjectMeta, runtime.Object) { return &c.Pods[i].ObjectMeta, c.Pods[i] })
	return out
}

// OtherCount is how many objects other than nodes and pods Marshal
// writes: what `snapshot` reports beside its nodes and pods.
func (c *Cluster) OtherCount() int {
	return len(c.objects()) - len(c.Nodes) - len(c.Pods) + len(c.Others)
}

// Marshal renders the cluster as one v1 List, in YAML or (format "json")
// JSON, that LoadPaths reads back. Every item gets its apiVersion and
// kind; scheduler-plugins' PodGroups (unstructured) keep theirs.
func (c *Cluster) Marshal(format string) ([]byte, error) {
	items := make([]json.RawMessage, 0, len(c.Nodes)+len(c.Pods))
	for _, o := range c.objects() {
		// Objects from a clientset come without TypeMeta; set it (to what
		// it already is for objects read from files).
		o.obj.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(o.apiVersion, o.kind))
		b, err := json.Marshal(o.obj)
		if err != nil {
			return nil, fmt.Errorf("encoding %s %s: %w", o.kind, o.meta.Name, err)
		}
		items = append(items, b)
	}
	others := append([]*unstructured.Unstructured(nil), c.Others...)
	sort.SliceStable(others, func(i, j int) bool {
		a, b := others[i], others[j]
		return a.GetKind()+"/"+a.GetNamespace()+"/"+a.GetName() < b.GetKind()+"/"+b.GetNamespace()+"/"+b.GetName()
	})
	for _, u := range others {
		b, err := json.Marshal(u.Object)
		if err != nil {
			return nil, fmt.Errorf("encoding %s %s: %w", u.GetKind(), u.GetName(), err)
		}
		items = append(items, b)
	}
	list := struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}{"v1", "List", items}
	js, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return nil, err
	}
	if format == "json" {
		return append(js, '\n'), nil
	}
	return yaml.JSONToYAML(js)
}

// Write renders the cluster to w (see Marshal).
func (c *Cluster) Write(w io.Writer, format string) error {
	b, err := c.Marshal(format)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
