package snapshot

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

// Object is one object of a manifest file, untyped, with where it was
// found: lists are flattened ("items[2]" in Where).
type Object struct {
	File  string
	Line  int
	Where string
	Data  map[string]any
}

// Kind returns the object's kind.
func (o Object) Kind() string { s, _ := o.Data["kind"].(string); return s }

// APIVersion returns the object's apiVersion.
func (o Object) APIVersion() string { s, _ := o.Data["apiVersion"].(string); return s }

// Name returns metadata.name.
func (o Object) Name() string { return o.meta("name") }

// Namespace returns metadata.namespace.
func (o Object) Namespace() string { return o.meta("namespace") }

func (o Object) meta(k string) string {
	m, _ := o.Data["metadata"].(map[string]any)
	s, _ := m[k].(string)
	return s
}

// Errorf returns a LoadError (ErrInvalid) at the object: "file:line: Kind
// ns/name: msg".
func (o Object) Errorf(format string, args ...any) error {
	ident := o.Where
	if ident != "" {
		ident += " "
	}
	ident += o.Kind()
	if n := o.Name(); n != "" {
		if ns := o.Namespace(); ns != "" {
			ident += " " + ns + "/" + n
		} else {
			ident += " " + n
		}
	}
	return &LoadError{File: o.File, Line: o.Line, Msg: strings.TrimSpace(ident + ": " + fmt.Sprintf(format, args...))}
}

// Decode decodes the object into a typed one, reporting bad quantities of
// pods, nodes and pod templates with their field path.
func (o Object) Decode(into any) error {
	if err := checkQuantities(o.Kind(), o.Data); err != nil {
		return o.Errorf("%v", err)
	}
	if err := checkTemplateQuantities(o.Data); err != nil {
		return o.Errorf("%v", err)
	}
	raw, err := json.Marshal(o.Data)
	if err == nil {
		err = json.Unmarshal(raw, into)
	}
	if err != nil {
		return o.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// checkTemplateQuantities checks the pod template of a workload
// (spec.template, or spec.jobTemplate.spec.template) as a Pod.
func checkTemplateQuantities(obj map[string]any) error {
	spec, _ := obj["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	path := "spec.template."
	if tmpl == nil {
		return nil
	}
	if err := checkQuantities("Pod", tmpl); err != nil {
		return fmt.Errorf("%s%v", path, err)
	}
	return nil
}

// ReadObjects reads the objects of manifest files or directories ('-' is
// stdin), as LoadPaths does, without interpreting their kinds. Malformed
// input is a *LoadError naming the file and line.
func ReadObjects(paths []string, stdin io.Reader) ([]Object, error) {
	var out []Object
	for _, p := range paths {
		var files []string
		if p == "-" {
			files = []string{"-"}
		} else {
			st, err := os.Stat(p)
			if err != nil {
				return nil, &LoadError{File: p, Msg: strings.TrimPrefix(err.Error(), "stat "+p+": ")}
			}
			files = []string{p}
			if st.IsDir() {
				if files, err = manifestFiles(p); err != nil {
					return nil, err
				}
			}
		}
		for _, f := range files {
			var data []byte
			var err error
			name := f
			if f == "-" {
				name = "<stdin>"
				data, err = io.ReadAll(stdin)
			} else {
				data, err = os.ReadFile(f)
			}
			if err != nil {
				return nil, &LoadError{File: name, Msg: err.Error()}
			}
			objs, err := parseObjects(name, data)
			if err != nil {
				return nil, err
			}
			out = append(out, objs...)
		}
	}
	return out, nil
}

func parseObjects(file string, data []byte) ([]Object, error) {
	var out []Object
	for _, d := range splitDocs(data) {
		if onlyComments(d.data) {
			continue
		}
		obj, err := decodeDoc(file, d, nil)
		if err != nil {
			return nil, err
		}
		if obj == nil {
			continue
		}
		if err := flatten(file, d.line, "", obj, &out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func flatten(file string, line int, where string, obj map[string]any, out *[]Object) error {
	o := Object{File: file, Line: line, Where: where, Data: obj}
	kind := o.Kind()
	if kind == "" {
		return o.Errorf("missing kind")
	}
	if strings.HasSuffix(kind, "List") {
		items, _ := obj["items"].([]any)
		for i, it := range items {
			m, ok := it.(map[string]any)
			if !ok {
				return o.Errorf("items[%d]: not an object", i)
			}
			if _, ok := m["kind"]; !ok && kind != "List" {
				m["kind"] = strings.TrimSuffix(kind, "List")
			}
			if err := flatten(file, line, fmt.Sprintf("items[%d]", i), m, out); err != nil {
				return err
			}
		}
		return nil
	}
	if o.Name() == "" {
		return o.Errorf("metadata.name: required")
	}
	*out = append(*out, o)
	return nil
}
