package snapshot

// Adding a decoded object to the cluster: checking its header, recording
// its name, decoding it into its type and list. The map decoding
// (addObject) and the fast path (addTypedObj) both add through addNamed.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-sched/kubectl-sched/internal/defaults"
	"github.com/kubectl-sched/kubectl-sched/internal/share"
)

// addObject adds one decoded document (or each item of a List) to the
// cluster; where names the item within the document ("items[3]").
func (c *Cluster) addObject(file string, line int, where string, obj map[string]any) error {
	kind, _ := obj["kind"].(string)
	apiVersion, _ := obj["apiVersion"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	ident := objectIdent(where, kind, meta)
	fail := func(msg string) error {
		return &LoadError{File: file, Line: line, Msg: strings.TrimSpace(ident + ": " + msg)}
	}
	if kind == "" {
		return fail("missing kind")
	}
	if strings.HasSuffix(kind, "List") {
		return c.addList(file, line, kind, obj, fail)
	}
	switch {
	case kind == "KubeSchedulerConfiguration":
		return fail("a scheduler configuration, not cluster state: give it with --config")
	case kind == "Config" && obj["clusters"] != nil:
		return fail("a kubeconfig, not cluster state: give it with --kubeconfig, or dump the cluster with 'kubectl sched snapshot -A'")
	case name == "":
		return fail("metadata.name: required")
	}
	if err := checkQuantities(kind, obj); err != nil {
		return fail(err.Error())
	}
	raw, _ := json.Marshal(obj)
	decode := func(into any) error {
		if err := json.Unmarshal(raw, into); err != nil {
			// addNamed words it: the object's name may gain its namespace.
			return decodeError(strings.TrimPrefix(err.Error(), "json: "))
		}
		return nil
	}
	return c.addNamed(file, line, where, ident, apiVersion, kind, name, ns, source{m: obj, decode: decode})
}

// source is an object to add: the map path's decoded map and the decoding
// of it into a type, or the typed path's object, already decoded and
// defaulted (decodeTyped), with the error its check found.
type source struct {
	m        map[string]any
	decode   func(any) error
	typed    any
	typedErr error
}

// addNamed adds an object whose header was checked: it records its name
// (an object named twice is an error) and adds it to its list, decoding
// it if the typed path did not (which it does only for kinds addTyped
// reads).
func (c *Cluster) addNamed(file string, line int, where, ident, apiVersion, kind, name, ns string, src source) error {
	obj, decode := src.m, src.decode
	// fail reads ident when called: a pod's gains its namespace below.
	fail := func(msg string) error {
		return &LoadError{File: file, Line: line, Msg: strings.TrimSpace(ident + ": " + msg)}
	}
	group := ""
	if i := strings.Index(apiVersion, "/"); i >= 0 {
		group = apiVersion[:i]
	}
	if name != "" && readKind(group, kind) {
		// Two objects of one name would both count (a node's room twice,
		// a pod placed twice); the API server holds one.
		key := group + "/" + kind + "/" + ns + "/" + name
		if ns == "" && kind == "Pod" && group == "" {
			key = "/Pod/" + c.DefaultNamespace + "/" + name
			if c.DefaultNamespace == "" {
				key = "/Pod/default/" + name
			}
			ident = strings.Replace(ident, "Pod "+name, "Pod "+strings.Split(key, "/")[2]+"/"+name, 1)
		}
		here := Origin{File: file, Line: line, Where: where}
		if prev, ok := c.named[key]; ok {
			return fail("named twice (also at " + prev.String() + ")")
		}
		if c.named == nil {
			c.named = map[string]Origin{}
		}
		c.named[key] = here
	}
	var handled bool
	var err error
	if src.typed != nil {
		handled, err = true, src.typedErr
		if err == nil {
			c.appendTyped(src.typed, Origin{File: file, Line: line, Where: where}, true)
		}
	} else {
		handled, err = c.addTyped(kind, group, obj, decode, Origin{File: file, Line: line, Where: where})
	}
	if !handled {
		handled, err = c.addDRA(apiVersion, kind, decode, fail)
	}
	if !handled {
		handled, err = c.addWorkloadAPI(apiVersion, kind, decode, fail)
		if handled && err == nil && kind == "PodGroup" {
			// A replay's messages name a PodGroup's file and line.
			c.setOrigin(c.Workloads.PodGroups[len(c.Workloads.PodGroups)-1], Origin{File: file, Line: line, Where: where})
		}
	}
	if de, ok := err.(decodeError); ok {
		err = fail(string(de))
	}
	if err != nil {
		// (Inside the if: the target of errors.As is allocated.)
		var inv *defaults.InvalidError
		if errors.As(err, &inv) {
			msg := inv.Error()
			if where != "" {
				msg = where + ": " + msg
			}
			err = &LoadError{File: file, Line: line, Msg: msg}
		}
	}
	if !handled {
		c.Warnings = append(c.Warnings, fmt.Sprintf("warning: %s:%d: skipping %s (kind %s/%s is not used by the scheduler)", file, line, ident, apiVersion, kind))
	}
	return err
}

// decodeDefaulted decodes an object with the map path's decode and gives
// it what the API server would have (defaultObject). Every kind addTyped
// and addDRA read is decoded through it or, on the typed path, through
// decodeTyped, so both paths apply it once.
func decodeDefaulted(decode func(any) error, into any) error {
	if err := decode(into); err != nil {
		return err
	}
	return defaultObject(into)
}

// defaultObject gives a decoded object what the API server would have
// (internal/defaults): defaulting, and for a pod the validation a decision
// depends on.
func defaultObject(obj any) error {
	defaults.Object(obj)
	if p, ok := obj.(*v1.Pod); ok {
		return defaults.ValidatePod(p)
	}
	return nil
}

// decodeError is a typed decoder's message, for addNamed to word.
type decodeError string

func (e decodeError) Error() string { return string(e) }

// addTyped decodes an object of a kind the scheduler reads (newTyped)
// into its list; handled is false for other kinds.
func (c *Cluster) addTyped(kind, group string, obj map[string]any, decode func(any) error, origin Origin) (handled bool, err error) {
	if kind == "PodGroup" && group != "scheduling.k8s.io" {
		// scheduler-plugins' (addWorkloadAPI reads kube's own).
		c.Others = append(c.Others, &unstructured.Unstructured{Object: obj})
		return true, nil
	}
	into := newTyped(kind, group)
	if into == nil {
		return false, nil
	}
	if err := decodeDefaulted(decode, into); err != nil {
		return true, err
	}
	c.appendTyped(into, origin, false)
	return true, nil
}

// newTyped returns a new object of the type kind is decoded into, nil for
// kinds addTyped does not read (the DRA and Workload API kinds are read by
// addDRA and addWorkloadAPI, which the typed path leaves to the map path).
func newTyped(kind, group string) any {
	switch {
	case kind == "Node" && group == "":
		return &v1.Node{}
	case kind == "Pod" && group == "":
		return &v1.Pod{}
	case kind == "Namespace" && group == "":
		return &v1.Namespace{}
	case kind == "PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	case kind == "PersistentVolumeClaim":
		return &v1.PersistentVolumeClaim{}
	case kind == "PersistentVolume":
		return &v1.PersistentVolume{}
	case kind == "StorageClass":
		return &storagev1.StorageClass{}
	case kind == "CSINode":
		return &storagev1.CSINode{}
	case kind == "CSIDriver":
		return &storagev1.CSIDriver{}
	case kind == "CSIStorageCapacity":
		return &storagev1.CSIStorageCapacity{}
	case kind == "Service" && group == "":
		return &v1.Service{}
	case kind == "ReplicaSet" && group == "apps":
		return &appsv1.ReplicaSet{}
	case kind == "StatefulSet" && group == "apps":
		return &appsv1.StatefulSet{}
	case kind == "DaemonSet" && group == "apps":
		return &appsv1.DaemonSet{}
	case kind == "ReplicationController" && group == "":
		return &v1.ReplicationController{}
	case kind == "PriorityClass" && group == "scheduling.k8s.io":
		return &schedulingv1.PriorityClass{}
	case kind == "RuntimeClass" && group == "node.k8s.io":
		return &nodev1.RuntimeClass{}
	}
	return nil
}

// appendTyped appends a decoded object of a type newTyped gives to its
// list; pods and claims without a namespace get the default one. Pods and
// nodes share their parts through c.Sharer, if set, unless shared (by
// decodeTyped) already.
func (c *Cluster) appendTyped(obj any, origin Origin, shared bool) {
	if c.Sharer != nil && !shared {
		shareObject(c.Sharer, obj)
	}
	switch o := obj.(type) {
	case *v1.Node:
		c.Nodes = append(c.Nodes, o)
		c.setOrigin(o, origin)
	case *v1.Pod:
		o.Namespace = c.namespaceOr(o.Namespace)
		c.Pods = append(c.Pods, o)
		c.setOrigin(o, origin)
	case *v1.Namespace:
		c.Namespaces = append(c.Namespaces, o)
	case *policyv1.PodDisruptionBudget:
		c.PDBs = append(c.PDBs, o)
	case *v1.PersistentVolumeClaim:
		o.Namespace = c.namespaceOr(o.Namespace)
		c.PVCs = append(c.PVCs, o)
	case *v1.PersistentVolume:
		c.PVs = append(c.PVs, o)
	case *storagev1.StorageClass:
		c.StorageClasses = append(c.StorageClasses, o)
	case *storagev1.CSINode:
		c.CSINodes = append(c.CSINodes, o)
	case *storagev1.CSIDriver:
		c.CSIDrivers = append(c.CSIDrivers, o)
	case *storagev1.CSIStorageCapacity:
		c.CSIStorageCapacities = append(c.CSIStorageCapacities, o)
	case *v1.Service:
		c.Services = append(c.Services, o)
	case *appsv1.ReplicaSet:
		c.ReplicaSets = append(c.ReplicaSets, o)
	case *appsv1.StatefulSet:
		c.StatefulSets = append(c.StatefulSets, o)
	case *appsv1.DaemonSet:
		c.DaemonSets = append(c.DaemonSets, o)
	case *v1.ReplicationController:
		c.ReplicationControllers = append(c.ReplicationControllers, o)
	case *schedulingv1.PriorityClass:
		c.PriorityClasses = append(c.PriorityClasses, o)
	case *nodev1.RuntimeClass:
		c.RuntimeClasses = append(c.RuntimeClasses, o)
	default:
		panic(fmt.Sprintf("snapshot: appendTyped: %T", obj))
	}
}

// objectIdent names an object in messages: "items[3] Pod ns/name".
func objectIdent(where, kind string, meta map[string]any) string {
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
	return identOf(where, kind, name, ns)
}

// identOf is objectIdent with the name and namespace read.
func identOf(where, kind, name, ns string) string {
	ident := where
	if ident != "" && kind != "" {
		ident += " "
	}
	ident += kind
	if name != "" {
		if ns != "" {
			ident += " " + ns + "/" + name
		} else {
			ident += " " + name
		}
	}
	return ident
}

// addList adds a List's items; a typed list (PodList) gives its items
// their kind when they have none.
func (c *Cluster) addList(file string, line int, kind string, obj map[string]any, fail func(string) error) error {
	items, _ := obj["items"].([]any)
	for i, it := range items {
		if c.OnProgress != nil {
			c.OnProgress(file, i, len(items))
		}
		m, ok := it.(map[string]any)
		if !ok {
			return fail(fmt.Sprintf("items[%d]: not an object", i))
		}
		if _, ok := m["kind"]; !ok && kind != "List" {
			m["kind"] = strings.TrimSuffix(kind, "List")
		}
		if err := c.addObject(file, line, fmt.Sprintf("items[%d]", i), m); err != nil {
			return err
		}
	}
	return nil
}

// shareObject shares the parts of a pod or node through s (other kinds
// are left alone).
func shareObject(s *share.Sharer, obj any) {
	switch o := obj.(type) {
	case *v1.Pod:
		s.Pod(o)
	case *v1.Node:
		s.Node(o)
	}
}

// namespaceOr returns ns, or the namespace given to objects without one.
func (c *Cluster) namespaceOr(ns string) string {
	switch {
	case ns != "":
		return ns
	case c.DefaultNamespace != "":
		return c.DefaultNamespace
	}
	return "default"
}

// readKind says whether the loader reads objects of the kind (Kinds).
func readKind(group, kind string) bool {
	for _, k := range Kinds {
		g, _, ok := strings.Cut(k.APIVersion, "/")
		if !ok {
			g = ""
		}
		if k.Kind == kind && g == group {
			return true
		}
	}
	return false
}
