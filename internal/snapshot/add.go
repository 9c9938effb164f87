package snapshot

// Adding a decoded object to the cluster: checking its header, recording
// its name, decoding it into its type and list. The map decoding
// (addObject) and the fast path (addTypedObj) both add through addNamed.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-sched/kubectl-sched/internal/defaults"
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
	return c.addNamed(file, line, where, ident, apiVersion, kind, name, ns, obj, decode)
}

// addNamed adds an object whose header was checked: it records its name
// (an object named twice is an error) and decodes it into its list. obj is
// the decoded map, nil when the typed path decoded the object (which it
// does only for kinds addTyped decodes without the map).
func (c *Cluster) addNamed(file string, line int, where, ident, apiVersion, kind, name, ns string, obj map[string]any, decode func(any) error) error {
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
	handled, err := c.addTyped(kind, group, obj, decode, Origin{File: file, Line: line, Where: where})
	if !handled {
		handled, err = c.addDRA(apiVersion, kind, decode, fail)
	}
	if !handled {
		handled, err = c.addWorkloadAPI(apiVersion, kind, decode, fail)
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

// decodeDefaulted decodes an object with either path's decode and gives
// it what the API server would have (internal/defaults): defaulting, and
// for a pod the validation a decision depends on. Every kind addTyped and
// addDRA read is decoded through it, so both paths apply it once.
func decodeDefaulted(decode func(any) error, into any) error {
	if err := decode(into); err != nil {
		return err
	}
	defaults.Object(into)
	if p, ok := into.(*v1.Pod); ok {
		return defaults.ValidatePod(p)
	}
	return nil
}

// decodeError is a typed decoder's message, for addNamed to word.
type decodeError string

func (e decodeError) Error() string { return string(e) }

// addTyped decodes an object of a kind the scheduler reads into its list;
// handled is false for other kinds.
func (c *Cluster) addTyped(kind, group string, obj map[string]any, decode func(any) error, origin Origin) (handled bool, err error) {
	switch {
	case kind == "Node" && group == "":
		n := &v1.Node{}
		if err := decodeDefaulted(decode, n); err != nil {
			return true, err
		}
		c.Nodes = append(c.Nodes, n)
		c.setOrigin(n, origin)
	case kind == "Pod" && group == "":
		p := &v1.Pod{}
		if err := decodeDefaulted(decode, p); err != nil {
			return true, err
		}
		p.Namespace = c.namespaceOr(p.Namespace)
		c.Pods = append(c.Pods, p)
		c.setOrigin(p, origin)
	case kind == "Namespace" && group == "":
		return true, decodeAppend(decode, &c.Namespaces)
	case kind == "PodDisruptionBudget":
		return true, decodeAppend(decode, &c.PDBs)
	case kind == "PersistentVolumeClaim":
		if err := decodeAppend(decode, &c.PVCs); err != nil {
			return true, err
		}
		p := c.PVCs[len(c.PVCs)-1]
		p.Namespace = c.namespaceOr(p.Namespace)
	case kind == "PersistentVolume":
		return true, decodeAppend(decode, &c.PVs)
	case kind == "StorageClass":
		return true, decodeAppend(decode, &c.StorageClasses)
	case kind == "CSINode":
		return true, decodeAppend(decode, &c.CSINodes)
	case kind == "CSIDriver":
		return true, decodeAppend(decode, &c.CSIDrivers)
	case kind == "CSIStorageCapacity":
		return true, decodeAppend(decode, &c.CSIStorageCapacities)
	case kind == "Service" && group == "":
		return true, decodeAppend(decode, &c.Services)
	case kind == "ReplicaSet" && group == "apps":
		return true, decodeAppend(decode, &c.ReplicaSets)
	case kind == "StatefulSet" && group == "apps":
		return true, decodeAppend(decode, &c.StatefulSets)
	case kind == "DaemonSet" && group == "apps":
		return true, decodeAppend(decode, &c.DaemonSets)
	case kind == "ReplicationController" && group == "":
		return true, decodeAppend(decode, &c.ReplicationControllers)
	case kind == "PriorityClass" && group == "scheduling.k8s.io":
		return true, decodeAppend(decode, &c.PriorityClasses)
	case kind == "RuntimeClass" && group == "node.k8s.io":
		return true, decodeAppend(decode, &c.RuntimeClasses)
	case kind == "PodGroup" && group != "scheduling.k8s.io":
		// scheduler-plugins' (addWorkloadAPI reads kube's own).
		c.Others = append(c.Others, &unstructured.Unstructured{Object: obj})
	default:
		return false, nil
	}
	return true, nil
}

// objectIdent names an object in messages: "items[3] Pod ns/name".
func objectIdent(where, kind string, meta map[string]any) string {
	name, _ := meta["name"].(string)
	ns, _ := meta["namespace"].(string)
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

// decodeAppend decodes the object and appends it to list.
func decodeAppend[T any](decode func(any) error, list *[]*T) error {
	obj := new(T)
	if err := decodeDefaulted(decode, obj); err != nil {
		return err
	}
	*list = append(*list, obj)
	return nil
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
