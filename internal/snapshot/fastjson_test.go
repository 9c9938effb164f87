package snapshot

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func TestUnmarshalTypedDecodesAsEncodingJSON(t *testing.T) {
	cases := []struct {
		name, kind, js string
	}{
		{"a pod with requests, tolerations, affinity and times", "Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"web","labels":{"app":"a"},"creationTimestamp":"2026-01-02T03:04:05Z","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u","controller":true}]},"spec":{"schedulerName":"default-scheduler","priority":10,"containers":[{"name":"c","image":"i:v1","resources":{"requests":{"cpu":"500m","memory":"1Gi"},"limits":{"nvidia.com/gpu":2}},"ports":[{"containerPort":80,"hostPort":8080,"protocol":"TCP"}]}],"tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule","tolerationSeconds":30}],"affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":20,"preference":{"matchExpressions":[{"key":"pool","operator":"In","values":["a","b"]}]}}]}},"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule","labelSelector":{"matchLabels":{"app":"a"}}}]},"status":{"phase":"Pending"}}`},
		{"a node with images, taints and quantities in several formats", "Node", `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":{"zone":"z"}},"spec":{"unschedulable":true,"taints":[{"key":"k","value":"v","effect":"NoExecute","timeAdded":"2026-01-02T03:04:05Z"}]},"status":{"allocatable":{"cpu":"3900m","memory":"15465Mi","pods":"58","ephemeral-storage":"1e3"},"capacity":{"cpu":4,"memory":"16Gi"},"images":[{"names":["r/app:v1","r/app@sha256:0d"],"sizeBytes":819986432}],"conditions":[{"type":"Ready","status":"True"}]}}`},
		{"keys in another case, as encoding/json matches them", "Pod", `{"apiVersion":"v1","kind":"Pod","Metadata":{"NAME":"p","Namespace":"n"},"spec":{"NodeName":"x","containers":[{"Name":"c"}]}}`},
		{"a key given twice: the last one", "Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","name":"b"}}`},
		{"nulls", "Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":null,"annotations":{"a":"1"}},"spec":{"containers":null,"nodeSelector":null,"priority":null}}`},
		{"escapes kubectl writes", "Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","annotations":{"x":"\u003cb\u003e \u0026 \"q\" \\ \/ \t\n é \u00e9 \u4e2d"}}}`},
		{"unknown fields of every shape", "Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","extra":{"a":[1,2.5e3,-0.1,true,false,null,"s\"\\"],"b":{}}},"zzz":[[],[{}]]}`},
		{"an int-or-string and a number where a string goes (an error for both)", "Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":5}}`},
		{"a fraction where an integer goes (an error for both)", "Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"priority":1.5}}`},
		{"an integer too large for its field (an error for both)", "Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"priority":99999999999}}`},
		{"a pod disruption budget with an int-or-string", "PodDisruptionBudget", `{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"b","namespace":"n"},"spec":{"maxUnavailable":"10%","selector":{"matchLabels":{"app":"a"}}},"status":{"disruptionsAllowed":1}}`},
		{"bytes that are not UTF-8 (encoding/json decodes them)", "Pod", "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\xff\"}}"},
		{"an escaped surrogate (encoding/json decodes it)", "Pod", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p\ud83d\ude00\ud800"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !json.Valid([]byte(tc.js)) {
				t.Fatalf("case is not valid JSON")
			}
			assertSameDecoding(t, tc.kind, []byte(tc.js))
		})
	}
}

// TestUnmarshalTypedDecodesTheExamplesAsEncodingJSON decodes every object
// of the examples and the shared clusters both ways.
func TestUnmarshalTypedDecodesTheExamplesAsEncodingJSON(t *testing.T) {
	var files []string
	for _, pat := range []string{"../../examples/*.yaml", "../../testdata/clusters/*.yaml", "testdata/*.yaml"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatal("no example files found")
	}
	objects := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range splitDocs(data) {
			js, err := yaml.YAMLToJSON(d.data)
			if err != nil || len(js) == 0 || js[0] != '{' {
				continue
			}
			var head struct {
				Kind  string            `json:"kind"`
				Items []json.RawMessage `json:"items"`
			}
			if json.Unmarshal(js, &head) != nil {
				continue
			}
			items := head.Items
			if items == nil {
				items = []json.RawMessage{js}
			}
			for _, it := range items {
				var h struct {
					Kind string `json:"kind"`
				}
				if json.Unmarshal(it, &h) == nil && h.Kind != "" {
					objects++
					assertSameDecoding(t, h.Kind, it)
				}
			}
		}
	}
	if objects < 50 {
		t.Fatalf("decoded %d objects of %d files, want more", objects, len(files))
	}
}

// assertSameDecoding decodes js into kind's type with unmarshalTyped and
// with encoding/json and compares the objects and whether each failed.
func assertSameDecoding(t *testing.T, kind string, js []byte) {
	t.Helper()
	fast, std := newTyped(kind, groupOf(js)), newTyped(kind, groupOf(js))
	if fast == nil {
		return
	}
	fastErr, stdErr := unmarshalTyped(js, fast), json.Unmarshal(js, std)
	if (fastErr == nil) != (stdErr == nil) {
		t.Fatalf("%s: error %v, encoding/json's %v", js, fastErr, stdErr)
	}
	if stdErr == nil && !reflect.DeepEqual(fast, std) {
		t.Fatalf("%s: decoded\n%#v\nencoding/json decoded\n%#v", js, fast, std)
	}
}

// groupOf is the API group of the object js.
func groupOf(js []byte) string {
	var h struct {
		APIVersion string `json:"apiVersion"`
	}
	_ = json.Unmarshal(js, &h)
	if g, _, ok := strings.Cut(h.APIVersion, "/"); ok {
		return g
	}
	return ""
}

func TestPlainText(t *testing.T) {
	cases := []struct {
		name, js string
		want     bool
	}{
		{"ASCII", `{"a":"b"}`, true},
		{"UTF-8 and escapes of other characters", `{"a":"é\u00e9\u003c\u4e2d"}`, true},
		{"an escaped surrogate", `{"a":"\ud83d\ude00"}`, false},
		{"an escaped surrogate in capitals", `{"a":"\uD800"}`, false},
		{"a byte that is not UTF-8", "{\"a\":\"\xc3\"}", false},
		{"a \\u at the very end", `\u`, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := plainText([]byte(tc.js)); got != tc.want {
				t.Errorf("plainText(%q) = %v, want %v", tc.js, got, tc.want)
			}
		})
	}
}

// A decoded item's file must be free once the cluster holds what was
// decoded: json-iterator's pooled iterator would keep the last input it
// read (a slice of the file, so the whole file) until two collections had
// emptied the pool. One collection must free it.
func TestUnmarshalTypedKeepsNoSliceOfItsInput(t *testing.T) {
	freed := make(chan struct{})
	func() {
		file := []byte(`[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"n"},"spec":{"containers":[{"name":"c"}]}}]` + strings.Repeat(" ", 1<<20))
		runtime.SetFinalizer(&file[0], func(*byte) { close(freed) })
		var p v1.Pod
		if err := unmarshalTyped(file[1:bytes.LastIndexByte(file, ']')], &p); err != nil || p.Name != "p" {
			t.Fatalf("decoded %q, %v", p.Name, err)
		}
	}()
	runtime.GC()
	select {
	case <-freed:
	case <-time.After(5 * time.Second):
		t.Fatal("the file is still reachable after a collection")
	}
}
