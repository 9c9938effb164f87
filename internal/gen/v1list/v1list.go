// Package v1list writes generated objects as one `v1 List` document, the
// shape `kubectl get -o json|yaml` prints and the snapshot loader reads.
package v1list

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// list is written by hand rather than as a v1.List because a
// runtime.RawExtension marshals only its Raw bytes, not its Object.
type list struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Items      []any  `json:"items"`
}

// Marshal encodes objs as a v1 List in format "json" (indented) or "yaml".
// Items whose TypeMeta is empty get the kind of their Go type, so
// generators need not fill it in; the objects themselves are not modified.
func Marshal(format string, objs ...runtime.Object) ([]byte, error) {
	l := list{APIVersion: "v1", Kind: "List", Items: make([]any, 0, len(objs))}
	for i, o := range objs {
		it, err := typed(o)
		if err != nil {
			return nil, fmt.Errorf("items[%d]: %w", i, err)
		}
		m, err := compact(it)
		if err != nil {
			return nil, fmt.Errorf("items[%d]: %w", i, err)
		}
		l.Items = append(l.Items, m)
	}
	switch format {
	case "json":
		b, err := json.MarshalIndent(l, "", "  ")
		if err != nil {
			return nil, err
		}
		return append(b, '\n'), nil
	case "yaml", "":
		b, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		return yaml.JSONToYAML(b)
	default:
		return nil, fmt.Errorf("unsupported output format %q (want json or yaml)", format)
	}
}

// Write marshals objs (see Marshal) to w.
func Write(w io.Writer, format string, objs ...runtime.Object) error {
	b, err := Marshal(format, objs...)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// typed returns a shallow copy of o with its TypeMeta set.
func typed(o runtime.Object) (any, error) {
	switch x := o.(type) {
	case *v1.Node:
		c := *x
		c.TypeMeta.APIVersion, c.TypeMeta.Kind = "v1", "Node"
		return &c, nil
	case *v1.Pod:
		c := *x
		c.TypeMeta.APIVersion, c.TypeMeta.Kind = "v1", "Pod"
		return &c, nil
	case *v1.Namespace:
		c := *x
		c.TypeMeta.APIVersion, c.TypeMeta.Kind = "v1", "Namespace"
		return &c, nil
	case *v1.Service:
		c := *x
		c.TypeMeta.APIVersion, c.TypeMeta.Kind = "v1", "Service"
		return &c, nil
	case *policyv1.PodDisruptionBudget:
		c := *x
		c.TypeMeta.APIVersion, c.TypeMeta.Kind = "policy/v1", "PodDisruptionBudget"
		return &c, nil
	}
	if o == nil || o.GetObjectKind().GroupVersionKind().Kind == "" {
		return nil, fmt.Errorf("object of type %T has no kind", o)
	}
	return o, nil
}

// compact encodes an object and drops what Go's encoding adds but a dump
// from the API server does not carry, so files stay readable: null fields
// (absent decodes to the same value), and empty value structs at known
// places (top-level spec and status, a node's nodeInfo and daemonEndpoints).
// Empty objects elsewhere are kept: `emptyDir: {}` means something.
func compact(o any) (map[string]any, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	dropNulls(m)
	if st, ok := m["status"].(map[string]any); ok {
		if ni, ok := st["nodeInfo"].(map[string]any); ok && allZero(ni) {
			delete(st, "nodeInfo")
		}
		if de, ok := st["daemonEndpoints"].(map[string]any); ok && allZero(de) {
			delete(st, "daemonEndpoints")
		}
	}
	for _, k := range []string{"spec", "status"} {
		if v, ok := m[k].(map[string]any); ok && len(v) == 0 {
			delete(m, k)
		}
	}
	return m, nil
}

func dropNulls(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			dropNulls(e)
		}
	case []any:
		for _, e := range x {
			dropNulls(e)
		}
	}
}

// allZero reports whether every leaf under v is "", 0 or false.
func allZero(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if !allZero(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	case json.Number:
		return x.String() == "0"
	case bool:
		return !x
	case nil:
		return true
	}
	return false
}
