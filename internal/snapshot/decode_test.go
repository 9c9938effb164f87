package snapshot

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// onlyComments skips a document exactly when keeping its non-blank lines
// that do not start with '#' (the copy it replaced) left nothing.
func TestOnlyComments(t *testing.T) {
	kept := func(b []byte) bool {
		var out bytes.Buffer
		for _, l := range bytes.Split(b, []byte("\n")) {
			if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
				out.Write(l)
				out.WriteByte('\n')
			}
		}
		return len(bytes.TrimSpace(out.Bytes())) == 0
	}
	for _, tc := range []struct {
		name, doc string
		want      bool
	}{
		{"empty", "", true},
		{"blank lines", "\n  \n\t\n", true},
		{"comments", "# a\n  # b\n#c", true},
		{"comments and CRLF", "# a\r\n\r\n", true},
		{"object after comments", "# a\n\napiVersion: v1\n", false},
		{"object on the last line, no newline", "# a\n{}", false},
		{"JSON", "{\n  \"kind\": \"List\"\n}\n", false},
		{"hash inside a line", "kind: Pod # a pod\n", false},
		{"unicode space then a comment", "\u00a0# a\n", true},
		{"only a newline", "\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := onlyComments([]byte(tc.doc)); got != tc.want {
				t.Errorf("onlyComments(%q) = %v, want %v", tc.doc, got, tc.want)
			}
			if got := kept([]byte(tc.doc)); got != tc.want {
				t.Errorf("the copying check says %v for %q, want %v", got, tc.doc, tc.want)
			}
		})
	}
}

// A null quantity is zero, as the API server reads it: Quantity.UnmarshalJSON
// takes null as zero, and kube-apiserver v1.37.2 stores and returns "0" for
// it (checked on the test cluster of test/e2e: a pod created with requests
// and limits {cpu: null} reads back {cpu: "0"}, its defaulted requests too,
// and a node with capacity and allocatable {cpu: null}, created or its
// status replaced, reads back {cpu: "0"}). Both decoding paths read it so;
// the map path rejected it ("invalid quantity <nil>") and the typed path
// left it to the map path.
func TestNullQuantityAsTheAPIServerReadsIt(t *testing.T) {
	zero := resource.MustParse("0")
	gi := resource.MustParse("1Gi")
	type fields map[string]v1.ResourceList
	cases := []struct {
		name, data string
		want       func(c *Cluster) fields
		wantFields fields
	}{
		{
			name: "requests and limits of a pod, as JSON",
			data: `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":null,"memory":"1Gi"},"limits":{"cpu":null,"memory":"1Gi","ephemeral-storage":null}}}]}}]}`,
			want: func(c *Cluster) fields {
				r := c.Pods[0].Spec.Containers[0].Resources
				return fields{"requests": r.Requests, "limits": r.Limits}
			},
			// Requests default to the limits: ephemeral-storage too.
			wantFields: fields{
				"requests": {v1.ResourceCPU: zero, v1.ResourceMemory: gi, v1.ResourceEphemeralStorage: zero},
				"limits":   {v1.ResourceCPU: zero, v1.ResourceMemory: gi, v1.ResourceEphemeralStorage: zero},
			},
		},
		{
			name: "limits only, as YAML",
			data: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, namespace: ns}\n  spec:\n    containers:\n    - {name: c, image: i, resources: {limits: {cpu: null}}}\n    overhead: {memory: null}\n",
			want: func(c *Cluster) fields {
				r := c.Pods[0].Spec.Containers[0].Resources
				return fields{"requests": r.Requests, "limits": r.Limits, "overhead": c.Pods[0].Spec.Overhead}
			},
			wantFields: fields{
				"requests": {v1.ResourceCPU: zero},
				"limits":   {v1.ResourceCPU: zero},
				"overhead": {v1.ResourceMemory: zero},
			},
		},
		{
			name: "capacity and allocatable of a node",
			data: `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"capacity":{"cpu":null,"memory":"1Gi"},"allocatable":{"cpu":null}}}`,
			want: func(c *Cluster) fields {
				return fields{"capacity": c.Nodes[0].Status.Capacity, "allocatable": c.Nodes[0].Status.Allocatable}
			},
			wantFields: fields{
				"capacity":    {v1.ResourceCPU: zero, v1.ResourceMemory: gi},
				"allocatable": {v1.ResourceCPU: zero},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, typed := range []bool{true, false} {
				c := &Cluster{}
				if err := addData(c, typed, "f", []byte(tc.data)); err != nil {
					t.Fatalf("typed %v: %v", typed, err)
				}
				got := tc.want(c)
				if diff := cmp.Diff(tc.wantFields, got); diff != "" {
					t.Errorf("typed %v: (-want +got):\n%s", typed, diff)
				}
				// Field by field too (cmp compares quantities by value):
				// the zero reads back as "0" would, format included.
				if !reflect.DeepEqual(tc.wantFields, got) {
					t.Errorf("typed %v: got %#v, want %#v", typed, got, tc.wantFields)
				}
			}
		})
	}
}
