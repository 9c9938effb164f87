package snapshot

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const goodNode = `apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
`

func TestLoadPathsRejectsBadInput(t *testing.T) {
	tests := []struct {
		name    string
		content string
		wantErr string
	}{
		{"malformed YAML names the line", goodNode + "---\nkind: Pod\nmetadata: [\n", "c.yaml:9: malformed YAML"},
		{"malformed JSON names the line", "{\"kind\": \"List\",\n\"items\": [\n{\"kind\": \"Node\"},,\n]}", "c.yaml:3: malformed JSON: invalid character ','"},
		{"plain text", "root:x:0:0:root:/root:/bin/bash\n", "c.yaml:1: not a Kubernetes object: the document is plain text, not a mapping with apiVersion, kind and metadata"},
		{"a YAML list", "- a\n- b\n", "c.yaml:1: not a Kubernetes object: the document is a list, not a mapping"},
		{"a JSON list", "[1, 2]", "c.yaml:1: not a Kubernetes object: the document is a list, not a mapping"},
		{"a number in the second document", goodNode + "---\n42\n", "c.yaml:8: not a Kubernetes object: the document is a number"},
		{"a pod without a name", "apiVersion: v1\nkind: Pod\nmetadata: {namespace: a}\n", "c.yaml:1: Pod: metadata.name: required"},
		{"an unparseable quantity names the field", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    resources: {requests: {cpu: 4x}}\n",
			`c.yaml:1: Pod p: spec.containers[0].resources.requests.cpu: invalid quantity "4x": want a number with an optional suffix (500m, 2, 1.5Gi, 10M)`},
		{"a negative quantity", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \"-1\"}}\n", "c.yaml:1: Node n1: status.allocatable.cpu"},
		{"an object without kind", "apiVersion: v1\nmetadata: {name: x}\n", "c.yaml:1: x: missing kind"},
		{"a List item without kind or name", "apiVersion: v1\nkind: List\nitems: [{}]\n", "c.yaml:1: items[0]: missing kind"},
		{"a List item without kind", "apiVersion: v1\nkind: List\nitems: [{metadata: {name: x}}]\n", "c.yaml:1: items[0] x: missing kind"},
		{"a List item that is not an object", "apiVersion: v1\nkind: List\nitems: [3]\n", "c.yaml:1: List: items[0]: not an object"},
		{"a wrongly typed field", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {unschedulable: maybe}\n", "c.yaml:1: Node n1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "c.yaml")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadPaths([]string{path}, nil)
			if err == nil {
				t.Fatalf("no error, want %q", tt.wantErr)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v is not ErrInvalid", err)
			}
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			if !strings.HasPrefix(msg, tt.wantErr) {
				t.Errorf("error = %q, want prefix %q", msg, tt.wantErr)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error spans lines: %q", msg)
			}
		})
	}
}

func TestLoadPathsReadsListsDocumentsAndDirectories(t *testing.T) {
	dir := t.TempDir()
	list := `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"}},
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},"spec":{"containers":[{"name":"c"}]}}]}`
	multi := goodNode + "---\n# comment only\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ns1}\n"
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte(list), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(multi), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ignored.txt"), []byte("not yaml: ["), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadPaths([]string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var nodes, pods, nss []string
	for _, n := range c.Nodes {
		nodes = append(nodes, n.Name)
	}
	for _, p := range c.Pods {
		pods = append(pods, p.Namespace+"/"+p.Name+"@"+p.Spec.SchedulerName)
	}
	for _, n := range c.Namespaces {
		nss = append(nss, n.Name)
	}
	if d := cmp.Diff([]string{"n2", "n1"}, nodes); d != "" {
		t.Errorf("nodes (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"default/p1@default-scheduler"}, pods); d != "" {
		t.Errorf("pods (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"ns1"}, nss); d != "" {
		t.Errorf("namespaces (-want +got):\n%s", d)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "skipping Deployment d") {
		t.Errorf("warnings = %q, want one about the Deployment", c.Warnings)
	}
}

func TestLoadPathsMissingFile(t *testing.T) {
	_, err := LoadPaths([]string{"/nonexistent/cluster.yaml"}, nil)
	if err == nil || !errors.Is(err, ErrInvalid) || err.Error() != "/nonexistent/cluster.yaml: no such file or directory" {
		t.Fatalf("error = %v", err)
	}
}

// TestLoadPathsDirectoryWithoutDumps: a directory with no file the loader
// reads says so, rather than that the cluster has no nodes.
func TestLoadPathsDirectoryWithoutDumps(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(goodNode), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadPaths([]string{dir}, nil)
	if err == nil || !errors.Is(err, ErrInvalid) || err.Error() != dir+": a directory without *.yaml, *.yml or *.json files" {
		t.Fatalf("error = %v", err)
	}
}

// FuzzLoad checks that no input panics the loader, that every failure is
// an ErrInvalid naming the file, and that the map path alone
// (addDataByMap) fails with the same error.
func FuzzLoad(f *testing.F) {
	f.Add([]byte(goodNode))
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: p}\n  spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}\n"))
	f.Add([]byte(`{"kind":"PodList","items":[{"metadata":{"name":"x"},"spec":{"overhead":{"cpu":"-1"}}}]}`))
	f.Add([]byte("---\n---\nkind: Node\nmetadata: {name: n}\nstatus: {capacity: {memory: 1x}}\n"))
	// Null quantities: zero, as the API server reads them.
	f.Add([]byte(`{"kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":null},"limits":{"memory":null}}}]}}]}`))
	f.Add([]byte("kind: Node\nmetadata: {name: n}\nstatus: {capacity: {cpu: null}, allocatable: {cpu: ~}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &Cluster{}
		err := c.AddData("f.yaml", data)
		if em := addDataByMap(&Cluster{}, "f.yaml", data); fmt.Sprint(em) != fmt.Sprint(err) {
			t.Fatalf("error %v, by the map path %v", err, em)
		}
		if err == nil {
			return
		}
		if !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v is not ErrInvalid", err)
		}
		if !strings.HasPrefix(err.Error(), "f.yaml") {
			t.Fatalf("error %q does not name the file", err)
		}
	})
}

func TestLoadSaysWhatAFileThatIsNotObjectsIs(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"the trace's node list", "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,32000,262144,0,\n",
			"f:1: the Alibaba GPU trace's node list (CSV: sn,cpu_milli,memory_mib,gpu,model), not Kubernetes objects: convert it with 'go run ./hack/openb2k8s -nodes NODES.csv -pods PODS.csv > cluster.yaml' in a clone of kubectl-sched (see docs/dryrun.md), then dry-run cluster.yaml"},
		{"the trace's pod list", "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\nopenb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0\n",
			"f:1: the Alibaba GPU trace's pod list (CSV: name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time), not Kubernetes objects: convert it"},
		{"another CSV", "\ufeffhost,cpus\na,4\n", "f:1: a CSV table (first line: host,cpus), not Kubernetes objects: dryrun and explain read YAML or JSON"},
		{"a scheduler configuration", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
			"f:1: KubeSchedulerConfiguration: a scheduler configuration, not cluster state: give it with --config"},
		{"a kubeconfig", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://x'}}]\n",
			"f:1: Config: a kubeconfig, not cluster state: give it with --kubeconfig, or dump the cluster with 'kubectl sched snapshot -A'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := (&Cluster{}).AddData("f", []byte(tt.data))
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrInvalid starting %q", err, tt.want)
			}
		})
	}
	// JSON or YAML whose first line has a comma is not taken for a table.
	for _, data := range []string{`{"apiVersion": "v1", "kind": "List", "items": []}`, "metadata: {name: n1, labels: {a: b}}\napiVersion: v1\nkind: Node\n"} {
		if err := (&Cluster{}).AddData("f", []byte(data)); err != nil {
			t.Errorf("%q: %v", data, err)
		}
	}
}

func TestOriginsNameFileLineAndListItem(t *testing.T) {
	c := &Cluster{}
	docs := "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n---\n# a pod\napiVersion: v1\nkind: Pod\nmetadata: {name: p1}\n"
	list := "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p2}}\n"
	if err := c.AddData("docs.yaml", []byte(docs)); err != nil {
		t.Fatal(err)
	}
	if err := c.AddData("list.yaml", []byte(list)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, obj := range []any{c.Nodes[0], c.Pods[0], c.Pods[1]} {
		o, ok := c.OriginOf(obj)
		if !ok {
			t.Fatalf("no origin for %T", obj)
		}
		got = append(got, o.String())
	}
	want := []string{"docs.yaml:1", "docs.yaml:5", "list.yaml:1: items[0]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestEveryListedKindIsRead: Kinds, which the docs quote, are kinds the
// loader reads rather than skips with a warning.
func TestEveryListedKindIsRead(t *testing.T) {
	for _, k := range Kinds {
		c := &Cluster{}
		doc := "apiVersion: " + k.APIVersion + "\nkind: " + k.Kind + "\nmetadata: {name: x, namespace: default}\n"
		if k.Kind == "ResourceSlice" {
			// The loader checks what the API server requires of a slice.
			doc += "spec: {driver: gpu.example.com, pool: {name: p, resourceSliceCount: 1}, allNodes: true}\n"
		}
		switch k.APIVersion + " " + k.Kind {
		case "scheduling.k8s.io/v1beta1 Workload":
			doc += "spec: {podGroupTemplates: [{name: t, schedulingPolicy: {basic: {}}}]}\n"
		case "scheduling.k8s.io/v1beta1 PodGroup":
			doc += "spec: {schedulingPolicy: {gang: {minCount: 1}}}\n"
		}
		if err := c.AddData("f.yaml", []byte(doc)); err != nil {
			t.Errorf("%s: %v", k.Kind, err)
		}
		if len(c.Warnings) > 0 {
			t.Errorf("%s is skipped: %v", k.Kind, c.Warnings)
		}
	}
	c := &Cluster{}
	if err := c.AddData("f.yaml", []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n")); err != nil || len(c.Warnings) != 1 {
		t.Errorf("a Deployment is not skipped with a warning: %v, %v", err, c.Warnings)
	}
}

// TestAnObjectNamedTwiceIsAnError: the API server holds one object of a
// kind and name (per namespace); a dump that has two (a file given twice,
// a pod with and without its namespace) would count it twice, so it is
// refused, naming both places.
func TestAnObjectNamedTwiceIsAnError(t *testing.T) {
	node := func(name string) string {
		return "apiVersion: v1\nkind: Node\nmetadata: {name: " + name + "}\n"
	}
	pod := func(meta string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: " + meta + "\nspec: {containers: [{name: c}]}\n"
	}
	tests := []struct {
		name    string
		files   [][2]string // name, content
		wantErr string      // "" = loads
	}{
		{"one file given twice", [][2]string{{"a.yaml", node("n1")}, {"a.yaml", node("n1")}}, "a.yaml:1: Node n1: named twice (also at a.yaml:1)"},
		{"a pod twice in one List", [][2]string{{"l.yaml", "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: x}}\n- {apiVersion: v1, kind: Pod, metadata: {name: p, namespace: x}}\n"}},
			"l.yaml:1: items[1] Pod x/p: named twice (also at l.yaml:1: items[0])"},
		{"a pod without a namespace is the one in default", [][2]string{{"a.yaml", pod("{name: p, namespace: default}")}, {"b.yaml", pod("{name: p}")}}, "b.yaml:1: Pod default/p: named twice (also at a.yaml:1)"},
		{"one name in two namespaces", [][2]string{{"a.yaml", pod("{name: p, namespace: a}")}, {"b.yaml", pod("{name: p, namespace: b}")}}, ""},
		{"one name for two kinds", [][2]string{{"a.yaml", node("x")}, {"b.yaml", pod("{name: x}")}}, ""},
		{"a kind that is skipped is not counted", [][2]string{{"a.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"}, {"b.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n"}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Cluster{}
			var err error
			for _, f := range tt.files {
				if err = c.AddData(f[0], []byte(f[1])); err != nil {
					break
				}
			}
			if tt.wantErr == "" {
				if err != nil {
					t.Errorf("error %v, want none", err)
				}
				return
			}
			if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v, want %q (invalid input)", err, tt.wantErr)
			}
		})
	}
}

// TestQuantityWithSpacesAsTheAPIServerReadsIt: Quantity.UnmarshalJSON (the
// API server's decoding) drops the spaces around a quantity; both paths
// read " 2 " as 2 (the map path rejected it; FuzzLoad found it).
func TestQuantityWithSpacesAsTheAPIServerReadsIt(t *testing.T) {
	data := []byte("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: \" 2 \", memory: \"1Gi \"}}\n")
	c := &Cluster{}
	if err := c.AddData("f.yaml", data); err != nil {
		t.Fatalf("AddData: %v", err)
	}
	if err := addDataByMap(&Cluster{}, "f.yaml", data); err != nil {
		t.Fatalf("map path: %v", err)
	}
	if len(c.Nodes) != 1 {
		t.Fatalf("nodes = %d, want 1", len(c.Nodes))
	}
	a := c.Nodes[0].Status.Allocatable
	if cpu, mem := a.Cpu().MilliValue(), a.Memory().Value(); cpu != 2000 || mem != 1<<30 {
		t.Errorf("cpu %dm, memory %d; want 2000m, %d", cpu, mem, 1<<30)
	}
}
