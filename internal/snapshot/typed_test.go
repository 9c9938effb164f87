package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// loadBoth loads data as AddData does and by the map path alone.
func loadBoth(t *testing.T, file string, data []byte) (typed, mapped *Cluster, typedErr, mapErr error) {
	t.Helper()
	typed, mapped = &Cluster{}, &Cluster{}
	typedErr = typed.AddData(file, data)
	mapErr = addDataByMap(mapped, file, data)
	return typed, mapped, typedErr, mapErr
}

// addDataWith loads data as AddData does, but one document after another,
// each prepared by prepare for addDoc.
func addDataWith(c *Cluster, file string, data []byte, prepare func(doc) preparedDoc) error {
	if msg := notObjects(data); msg != "" {
		return &LoadError{File: file, Line: 1, Msg: msg}
	}
	for _, d := range splitDocs(data) {
		if onlyComments(d.data) {
			continue
		}
		if err := c.addDoc(file, d, prepare(d)); err != nil {
			return err
		}
	}
	return nil
}

// addDataByMap loads data with every document left to addDoc's map
// decoding: the reference the typed path must match.
func addDataByMap(c *Cluster, file string, data []byte) error {
	return addDataWith(c, file, data, func(doc) preparedDoc { return preparedDoc{decline: true} })
}

// addData loads data as AddData does (typed) or by the map path alone.
func addData(c *Cluster, typed bool, file string, data []byte) error {
	if typed {
		return c.AddData(file, data)
	}
	return addDataByMap(c, file, data)
}

// loadFile loads one file as LoadPaths does (typed) or with its documents
// by the map path alone.
func loadFile(path string, typed bool) (*Cluster, error) {
	if typed {
		return LoadPaths([]string{path}, nil)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	if err := addDataByMap(c, path, data); err != nil {
		return nil, err
	}
	c.defaultClaimClasses()
	c.admitRuntimeClasses()
	return c, nil
}

// sameClusters reports how a and b differ, "" if they do not: every
// list deeply, and each pod's and node's origin.
func sameClusters(a, b *Cluster) string {
	va, vb := reflect.ValueOf(*a), reflect.ValueOf(*b)
	for i := range va.NumField() {
		f := va.Type().Field(i)
		if !f.IsExported() || f.Name == "OnProgress" {
			continue
		}
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return f.Name + " differ"
		}
	}
	for i := range a.Pods {
		oa, _ := a.OriginOf(a.Pods[i])
		ob, _ := b.OriginOf(b.Pods[i])
		if oa != ob {
			return fmt.Sprintf("pod %d origin %v, %v", i, oa, ob)
		}
	}
	for i := range a.Nodes {
		oa, _ := a.OriginOf(a.Nodes[i])
		ob, _ := b.OriginOf(b.Nodes[i])
		if oa != ob {
			return fmt.Sprintf("node %d origin %v, %v", i, oa, ob)
		}
	}
	if !reflect.DeepEqual(a.named, b.named) {
		return "names differ"
	}
	return ""
}

// sameLoads reports, as errors of test t under what, how two loads of the
// same data differ: their errors, then (when both loaded) their objects.
// other names the second load. loaded is true when both loaded.
func sameLoads(t *testing.T, what, other string, a, b *Cluster, ea, eb error) (loaded bool) {
	t.Helper()
	if fmt.Sprint(ea) != fmt.Sprint(eb) {
		t.Errorf("%s: error %v, %s %v", what, ea, other, eb)
		return false
	}
	if ea != nil {
		return false
	}
	if d := sameClusters(a, b); d != "" {
		t.Errorf("%s: %s", what, d)
	}
	return true
}

// TestTypedPathLoadsAsTheMapPath loads every dump under testdata/ and
// examples/ (and KUBECTL_SCHED_DUMP, a 5000-node one, when set) by both
// paths, also as a JSON List (the form the typed path takes in one go),
// and wants the same objects, origins and errors.
func TestTypedPathLoadsAsTheMapPath(t *testing.T) {
	var files []string
	for _, dir := range []string{"../../testdata", "../../examples"} {
		fs, err := manifestFiles(dir)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	if p := os.Getenv("KUBECTL_SCHED_DUMP"); p != "" {
		files = append(files, p)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		forms := map[string][]byte{filepath.Base(f): data}
		if js, err := yaml.YAMLToJSON(data); err == nil && strings.HasSuffix(f, ".yaml") {
			forms["as JSON"] = js
		}
		for form, data := range forms {
			a, b, ea, eb := loadBoth(t, "f", data)
			if sameLoads(t, f+" ("+form+")", "by the map path", a, b, ea, eb) {
				n += len(a.Pods) + len(a.Nodes)
			}
		}
	}
	if n == 0 {
		t.Fatal("no pods or nodes loaded")
	}
}

// TestTypedPathDeclinesWhatTheMapPathRejects gives the typed path input it
// must leave to the map path, in the forms it takes (a JSON List, a JSON
// object, YAML), and wants the map path's error or objects.
func TestTypedPathDeclinesWhatTheMapPathRejects(t *testing.T) {
	node := func(alloc string) string {
		return `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"allocatable":{"cpu":` + alloc + `}}}`
	}
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`
	items := map[string]string{
		"good":                 node(`"4"`),
		"null quantity":        node(`null`),
		"negative quantity":    node(`"-1"`),
		"negative number":      node(`-1`),
		"bad quantity":         node(`"4x"`),
		"number quantity":      node(`4`),
		"bool quantity":        node(`true`),
		"pod request null":     strings.Replace(pod, `"1"`, `null`, 1),
		"pod request negative": strings.Replace(pod, `"1"`, `"-1m"`, 1),
		"pod overhead null":    strings.Replace(pod, `"spec":{`, `"spec":{"overhead":{"cpu":null},`, 1),
		"pod resources null":   strings.Replace(pod, `"spec":{`, `"spec":{"resources":{"limits":{"memory":null}},`, 1),
		"init request null":    strings.Replace(pod, `"containers"`, `"initContainers"`, 1),
		"wrong type":           strings.Replace(pod, `"name":"c"`, `"name":3`, 1),
		"missing name":         `{"apiVersion":"v1","kind":"Pod","metadata":{}}`,
		"name not a string":    `{"apiVersion":"v1","kind":"Pod","metadata":{"name":1}}`,
		"missing kind":         `{"apiVersion":"v1","metadata":{"name":"x"}}`,
		"kind twice":           `{"apiVersion":"v1","kind":"Node","metadata":{"name":"x"},"kind":"Pod"}`,
		"Kind case":            `{"apiVersion":"v1","Kind":"Node","metadata":{"name":"x"}}`,
		"escaped name":         `{"apiVersion":"v1","kind":"Node","metadata":{"name":"a\u00e9\"b"}}`,
		"unknown kind":         `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"}}`,
		"pod group":            `{"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"x"}}`,
		"scheduler config":     `{"apiVersion":"kubescheduler.config.k8s.io/v1","kind":"KubeSchedulerConfiguration"}`,
		"kubeconfig":           `{"apiVersion":"v1","kind":"Config","clusters":[]}`,
		"managed fields":       `{"apiVersion":"v1","kind":"Node","metadata":{"name":"x","managedFields":[{"fieldsV1":{"f:b":{},"f:a":{}}}]}}`,
		"big integer":          strings.Replace(pod, `"spec":{`, `"spec":{"activeDeadlineSeconds":12345678901234567,`, 1),
		"malformed":            `{"apiVersion":"v1","kind":"Node","metadata":{"name":"x"},"spec":{]}`,
		"not an object":        `3`,
		"null":                 `null`,
		"nested list":          `{"apiVersion":"v1","kind":"List","items":[` + node(`"4"`) + `]}`,
		"dra":                  `{"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":"x"}}`,
		// A key given twice: the map keeps the last value whole, a
		// typed decode would merge the two.
		"metadata twice":    strings.Replace(pod, `"metadata":{"name":"p"}`, `"metadata":{"name":"p","labels":{"a":"1"}},"metadata":{"name":"p"}`, 1),
		"labels twice":      strings.Replace(pod, `"metadata":{"name":"p"}`, `"metadata":{"name":"p","labels":{"a":"1"},"labels":{"b":"2"}}`, 1),
		"spec twice":        strings.Replace(pod, `"spec":{`, `"spec":{"nodeName":"n"},"spec":{`, 1),
		"spec then null":    strings.TrimSuffix(pod, `}`) + `,"spec":null}`,
		"spec in two cases": strings.TrimSuffix(strings.Replace(pod, `"spec":{`, `"spec":{"nodeName":"a",`, 1), `}`) + `,"Spec":{"nodeName":"b"}}`,
		"resources twice":   strings.Replace(pod, `"resources":{`, `"resources":{"limits":{"cpu":"2"}},"resources":{`, 1),
		"status twice":      strings.Replace(node(`"4"`), `"status":{`, `"status":{"capacity":{"cpu":"8"}},"status":{`, 1),
	}
	for name, it := range items {
		docs := map[string]string{
			"list":        `{"apiVersion":"v1","kind":"List","items":[` + pod + `,` + it + `]}`,
			"pod list":    `{"apiVersion":"v1","kind":"PodList","items":[` + it + `]}`,
			"list after":  `{"apiVersion":"v1","kind":"List","items":[` + it + `]} x`,
			"items twice": `{"apiVersion":"v1","kind":"List","items":[` + it + `],"items":null}`,
			"bad outside": `{"apiVersion":"v1","kind":"List","metadata":{"x":tru},"items":[` + it + `]}`,
			"object":      it,
		}
		if y, err := yaml.JSONToYAML([]byte(it)); err == nil {
			docs["yaml"] = "---\n" + string(y) + "---\n" + string(y)
		}
		for form, doc := range docs {
			a, b, ea, eb := loadBoth(t, "f.json", []byte(doc))
			if ea == nil && eb == nil && name == "big integer" && form == "object" {
				// The map path rounds integers to float64; the typed
				// path keeps them exact.
				if got := *a.Pods[0].Spec.ActiveDeadlineSeconds; got != 12345678901234567 {
					t.Errorf("big integer: typed path read %d", got)
				}
				if got := *b.Pods[0].Spec.ActiveDeadlineSeconds; got != 12345678901234568 {
					t.Errorf("big integer: map path read %d", got)
				}
				continue
			}
			sameLoads(t, name+" ("+form+")", "by the map path", a, b, ea, eb)
		}
	}
}

// TestAddTypedReadsNewTyped checks that addTyped decodes a kind where
// newTyped gives its type (and elsewhere only scheduler-plugins'
// PodGroup), into that type, and that every such type has its list
// (appendTyped).
func TestAddTypedReadsNewTyped(t *testing.T) {
	groups := []string{"", "apps", "policy", "storage.k8s.io", "scheduling.k8s.io", "node.k8s.io", "resource.k8s.io", "example.com"}
	types := 0
	for _, k := range append(Kinds, Kind{"v1", "Deployment", ""}, Kind{"v1", "Config", ""}) {
		for _, g := range groups {
			c := &Cluster{}
			var got reflect.Type
			decode := func(into any) error { got = reflect.TypeOf(into); return errors.New("stop") }
			handled, _ := c.addTyped(k.Kind, g, map[string]any{}, decode, Origin{})
			obj := newTyped(k.Kind, g)
			switch {
			case obj == nil && handled && (k.Kind != "PodGroup" || g == "scheduling.k8s.io"):
				t.Errorf("%s/%s: addTyped reads it, newTyped gives no type", g, k.Kind)
			case obj != nil && (!handled || got != reflect.TypeOf(obj)):
				t.Errorf("%s/%s: newTyped gives %T, addTyped decodes into %v (handled %v)", g, k.Kind, obj, got, handled)
			}
			if obj == nil {
				continue
			}
			types++
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s/%s: %v", g, k.Kind, r)
					}
				}()
				c.appendTyped(obj, Origin{}, false)
				if reflect.DeepEqual(c, &Cluster{}) {
					t.Errorf("%s/%s: appendTyped added %T to no list", g, k.Kind, obj)
				}
			}()
		}
	}
	if types == 0 {
		t.Fatal("newTyped gave no type")
	}
}

// TestKeysUnique checks the test for a key given twice, which sends an
// object to the map path.
func TestKeysUnique(t *testing.T) {
	many := func(n int, extra string) string {
		var b strings.Builder
		b.WriteString(`{"labels":{`)
		for i := range n {
			fmt.Fprintf(&b, `"k%d":"v",`, i)
		}
		b.WriteString(extra + `"last":"v"}}`)
		return b.String()
	}
	for _, c := range []struct {
		js   string
		want bool
	}{
		{`{}`, true},
		{`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}`, true},
		{`[{"a":1},{"a":1}]`, true},
		{`{"a":"\"a\"","b":1}`, true},
		{`{"a":1,"a":2}`, false},
		{`{"a":1,"A":2}`, false},
		{`{"spec":{"x":1},"spec":null}`, false},
		{`{"a":{"b":{"c":1,"d":[{"e":1,"e":1}]}}}`, false},
		{`{"a":{"b":1},"c":{"b":1}}`, true},
		{`{"a\u0062":1}`, false},
		{`{"ſpec":1,"spec":2}`, false},
		{many(40, ""), true},
		{many(40, `"K7":"x",`), false},
		{many(40, `"k39":"x",`), false},
		{many(31, `"k3":"x",`), false},
		{many(31, ""), true},
	} {
		if got := keysUnique([]byte(c.js)); got != c.want {
			t.Errorf("keysUnique(%.60s) = %v, want %v", c.js, got, c.want)
		}
	}
}

// keysUnique reports whether no object in js, at any depth, gives a key
// twice, as peekHeader's walk tells.
func keysUnique(js []byte) bool {
	s := scanner{b: js}
	var keys [][]byte
	if !s.uniqueValue(&keys) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}
