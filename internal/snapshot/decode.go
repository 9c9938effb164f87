package snapshot

// Decoding a document and checking what the scheduler reads of it, with
// errors that name the line.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// decodeDoc decodes one YAML or JSON document into a map (nil for null).
// js, when not nil, is the YAML document already converted to JSON.
func decodeDoc(file string, d doc, js []byte) (map[string]any, error) {
	var obj map[string]any
	if t := bytes.TrimSpace(d.data); t[0] == '{' {
		// JSON (kubectl -o json) needs no YAML pass.
		if err := json.Unmarshal(t, &obj); err != nil {
			if msg := notAnObject(err); msg != "" {
				return nil, &LoadError{File: file, Line: d.line, Msg: msg}
			}
			return nil, &LoadError{File: file, Line: d.line + jsonErrLine(t, err) - 1, Msg: "malformed JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
		}
		return obj, nil
	}
	if js == nil {
		var err error
		if js, err = yaml.YAMLToJSON(d.data); err != nil {
			return nil, &LoadError{File: file, Line: d.line + yamlErrLine(err) - 1, Msg: "malformed YAML: " + cleanYAMLErr(err)}
		}
	}
	if err := json.Unmarshal(js, &obj); err != nil {
		if msg := notAnObject(err); msg != "" {
			return nil, &LoadError{File: file, Line: d.line, Msg: msg}
		}
		return nil, &LoadError{File: file, Line: d.line, Msg: "malformed document: " + err.Error()}
	}
	return obj, nil
}

// notAnObject says what a document is that decodes to text, a number or
// a list where an object goes; "" for other errors.
func notAnObject(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return ""
	}
	what := map[string]string{"string": "plain text", "array": "a list", "number": "a number", "bool": "true or false"}[te.Value]
	if what == "" {
		what = "a " + te.Value
	}
	return "not a Kubernetes object: the document is " + what + ", not a mapping with apiVersion, kind and metadata"
}

// onlyComments reports whether document b holds nothing but blank lines
// and comment lines (a document to skip). It stops at the first other
// line, without copying: a 40 MB JSON dump is one document whose first
// line already says, where copying its lines cost a quarter of loading it.
func onlyComments(b []byte) bool {
	for len(b) > 0 {
		l := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			l, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}

// checkQuantities validates the resource quantities a scheduler reads, so a
// bad one is reported with its field path ("spec.containers[0].resources.
// requests.cpu: quantity \"4x\" ..."), and rejects negative ones. A null
// quantity is zero, as the API server reads it.
func checkQuantities(kind string, obj map[string]any) error {
	spec, _ := obj["spec"].(map[string]any)
	status, _ := obj["status"].(map[string]any)
	switch kind {
	case "Pod":
		for _, cs := range []string{"containers", "initContainers"} {
			list, _ := spec[cs].([]any)
			for i, ci := range list {
				c, _ := ci.(map[string]any)
				res, _ := c["resources"].(map[string]any)
				for _, rk := range []string{"requests", "limits"} {
					if err := checkList(fmt.Sprintf("spec.%s[%d].resources.%s", cs, i, rk), res[rk]); err != nil {
						return err
					}
				}
			}
		}
		if err := checkList("spec.overhead", spec["overhead"]); err != nil {
			return err
		}
		if res, ok := spec["resources"].(map[string]any); ok {
			for _, rk := range []string{"requests", "limits"} {
				if err := checkList("spec.resources."+rk, res[rk]); err != nil {
					return err
				}
			}
		}
	case "Node":
		for _, f := range []string{"capacity", "allocatable"} {
			if err := checkList("status."+f, status[f]); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkList(path string, v any) error {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var s string
		switch x := m[k].(type) {
		case nil:
			// null: Quantity.UnmarshalJSON reads it as zero, and the
			// API server stores that ("0"; defaults.ResourceList).
			continue
		case string:
			s = x
		case float64:
			s = fmt.Sprint(x)
			if x < 0 {
				return fmt.Errorf("%s.%s: invalid value %v: must not be negative", path, k, x)
			}
			continue
		default:
			return fmt.Errorf("%s.%s: invalid quantity %v", path, k, x)
		}
		// As Quantity.UnmarshalJSON reads it (the API server's decoding):
		// spaces around the quantity are dropped.
		q, err := resource.ParseQuantity(strings.TrimSpace(s))
		if errors.Is(err, resource.ErrFormatWrong) {
			// Not apimachinery's regular expression: what a quantity is.
			return fmt.Errorf("%s.%s: invalid quantity %q: want a number with an optional suffix (500m, 2, 1.5Gi, 10M)", path, k, s)
		}
		if err != nil {
			return fmt.Errorf("%s.%s: invalid quantity %q: %v", path, k, s, err)
		}
		if q.Sign() < 0 {
			return fmt.Errorf("%s.%s: invalid value %q: must not be negative", path, k, s)
		}
	}
	return nil
}

// jsonErrLine returns the 1-based line of a JSON syntax error's offset.
func jsonErrLine(data []byte, err error) int {
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset > 0 && int(se.Offset) <= len(data) {
		return bytes.Count(data[:se.Offset], []byte("\n")) + 1
	}
	return 1
}

func yamlErrLine(err error) int {
	// sigs.k8s.io/yaml errors read "error converting YAML to JSON: yaml: line N: ..."
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		var n int
		if _, e := fmt.Sscanf(msg[i:], "line %d", &n); e == nil {
			return n
		}
	}
	return 1
}

func cleanYAMLErr(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	if i := strings.Index(msg, "line "); i == 0 {
		if j := strings.Index(msg, ": "); j >= 0 {
			msg = msg[j+2:]
		}
	}
	return msg
}
