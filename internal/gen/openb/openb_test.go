package openb

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
)

const (
	traceDir    = "../../../testdata/openb"
	nodesCSV    = traceDir + "/openb_node_list_all_node.csv"
	defaultCSV  = traceDir + "/openb_pod_list_default.csv"
	gpuspecCSV  = traceDir + "/openb_pod_list_gpuspec33.csv"
	multigpuCSV = traceDir + "/openb_pod_list_multigpu50.csv"
	fixture     = "../../../testdata/conformance/openb-400/snapshot.json"
)

// quantityExact compares quantities by value and by format, so "32000m"
// and "32" are equal but "1Gi" and "1073741824" are not.
var quantityExact = cmp.Comparer(func(a, b resource.Quantity) bool {
	return a.Cmp(b) == 0 && a.Format == b.Format
})

type fixtureObjects struct {
	namespaces []*v1.Namespace
	nodes      []*v1.Node
	pods       []*v1.Pod
}

// loadList decodes a v1 List into typed objects as they are, without the
// defaults the snapshot loader fills in.
func loadList(t *testing.T, data []byte) fixtureObjects {
	t.Helper()
	var l struct {
		APIVersion, Kind string
		Items            []json.RawMessage
	}
	if err := json.Unmarshal(data, &l); err != nil {
		t.Fatal(err)
	}
	if l.APIVersion != "v1" || l.Kind != "List" {
		t.Fatalf("got %s %s, want v1 List", l.APIVersion, l.Kind)
	}
	var out fixtureObjects
	for i, raw := range l.Items {
		var tm metav1.TypeMeta
		if err := json.Unmarshal(raw, &tm); err != nil {
			t.Fatal(err)
		}
		var into any
		switch tm.Kind {
		case "Namespace":
			n := &v1.Namespace{}
			out.namespaces, into = append(out.namespaces, n), n
		case "Node":
			n := &v1.Node{}
			out.nodes, into = append(out.nodes, n), n
		case "Pod":
			p := &v1.Pod{}
			out.pods, into = append(out.pods, p), p
		default:
			t.Fatalf("items[%d]: unexpected kind %q", i, tm.Kind)
		}
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatalf("items[%d]: %v", i, err)
		}
	}
	return out
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// objects returns the namespace, nodes and pods in List order.
func objects(nodes []*v1.Node, pods []*v1.Pod) []runtime.Object {
	objs := []runtime.Object{NamespaceObject(Options{})}
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, p := range pods {
		objs = append(objs, p)
	}
	return objs
}

// maxDiffs bounds the diffs printed when the mapping breaks: one broken
// rule would otherwise print all 1923 objects.
const maxDiffs = 5

func compareWithFixture(t *testing.T, want, got fixtureObjects) {
	t.Helper()
	if len(got.nodes) != len(want.nodes) || len(got.pods) != len(want.pods) {
		t.Fatalf("got %d nodes, %d pods; want %d nodes, %d pods", len(got.nodes), len(got.pods), len(want.nodes), len(want.pods))
	}
	if diff := cmp.Diff(want.namespaces, got.namespaces); diff != "" {
		t.Errorf("namespaces (-want +got):\n%s", diff)
	}
	failed := 0
	report := func(what string, diff string) {
		if failed++; failed <= maxDiffs {
			t.Errorf("%s (-want +got):\n%s", what, diff)
		}
	}
	for i := range got.nodes {
		if diff := cmp.Diff(want.nodes[i], got.nodes[i], quantityExact); diff != "" {
			report(fmt.Sprintf("node %d %s", i, want.nodes[i].Name), diff)
		}
	}
	for i := range got.pods {
		if diff := cmp.Diff(want.pods[i], got.pods[i], quantityExact); diff != "" {
			report(fmt.Sprintf("pod %d %s", i, want.pods[i].Name), diff)
		}
	}
	if failed > maxDiffs {
		t.Errorf("... and %d more objects differ", failed-maxDiffs)
	}
}

func TestConvertReproducesTheOpenb400Fixture(t *testing.T) {
	want := loadList(t, readFile(t, fixture))
	nodes, pods, err := LoadFiles(nodesCSV, defaultCSV, Options{Limit: 400})
	if err != nil {
		t.Fatal(err)
	}
	t.Run("typed objects", func(t *testing.T) {
		tm := func(kind string) metav1.TypeMeta { return metav1.TypeMeta{APIVersion: "v1", Kind: kind} }
		got := fixtureObjects{namespaces: []*v1.Namespace{NamespaceObject(Options{})}}
		got.namespaces[0].TypeMeta = tm("Namespace")
		for _, n := range nodes {
			n = n.DeepCopy()
			n.TypeMeta = tm("Node")
			got.nodes = append(got.nodes, n)
		}
		for _, p := range pods {
			p = p.DeepCopy()
			p.TypeMeta = tm("Pod")
			got.pods = append(got.pods, p)
		}
		compareWithFixture(t, want, got)
	})
	for _, format := range []string{"json", "yaml"} {
		t.Run("written as a "+format+" List", func(t *testing.T) {
			b, err := v1list.Marshal(format, objects(nodes, pods)...)
			if err != nil {
				t.Fatal(err)
			}
			if format == "yaml" {
				if b, err = yaml.YAMLToJSON(b); err != nil {
					t.Fatal(err)
				}
			}
			compareWithFixture(t, want, loadList(t, b))
		})
	}
}

func TestGPUSpecBecomesRequiredNodeAffinity(t *testing.T) {
	_, plain, err := LoadFiles(nodesCSV, defaultCSV, Options{Limit: 400})
	if err != nil {
		t.Fatal(err)
	}
	_, constrained, err := LoadFiles(nodesCSV, gpuspecCSV, Options{Limit: 400})
	if err != nil {
		t.Fatal(err)
	}
	withAffinity := 0
	for i, p := range constrained {
		if p.Spec.Affinity != nil {
			withAffinity++
			terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			if len(terms) != 1 || len(terms[0].MatchExpressions) != 1 || terms[0].MatchExpressions[0].Key != LabelGPUModel ||
				terms[0].MatchExpressions[0].Operator != v1.NodeSelectorOpIn || len(terms[0].MatchExpressions[0].Values) == 0 {
				t.Errorf("pod %s: unexpected affinity %v", p.Name, p.Spec.Affinity)
			}
		}
		// Apart from the affinity, the two traces are the same pods.
		q := p.DeepCopy()
		q.Spec.Affinity = nil
		if diff := cmp.Diff(plain[i], q, quantityExact); diff != "" {
			t.Errorf("pod %s differs beyond affinity (-default +gpuspec33):\n%s", p.Name, diff)
		}
	}
	if withAffinity != 101 {
		t.Errorf("got %d pods with gpu.model affinity among the first 400, want 101", withAffinity)
	}
}

func TestReadPods(t *testing.T) {
	const header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
	q := resource.MustParse
	pod := func(name string, created int64, qos string, res v1.ResourceList) *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name: name, Namespace: Namespace, Labels: map[string]string{LabelApp: AppValue, LabelQoS: qos},
				CreationTimestamp: metav1.NewTime(Epoch.Add(time.Duration(created) * time.Second)),
			},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: ContainerName, Image: Image,
				Resources: v1.ResourceRequirements{Requests: res, Limits: res}}}},
			Status: v1.PodStatus{Phase: v1.PodPending},
		}
	}
	tests := []struct {
		name string
		csv  string
		opts Options
		want []*v1.Pod
	}{
		{
			name: "a GPU-sharing pod asks for one whole GPU",
			csv:  header + "p0,6000,12288,1,460,,LS,Running,427061,12902960,427061\n",
			want: []*v1.Pod{pod("p0", 427061, "LS", v1.ResourceList{"cpu": q("6"), "memory": q("12Gi"), GPUResource: q("1")})},
		},
		{
			name: "failed pods are dropped and the others are all pending",
			csv: header + "p0,100,10,0,0,,BE,Failed,1,2,1\n" + "p1,100,10,0,0,,BE,Succeeded,2,3,2\n" +
				"p2,100,10,8,1000,,LS,Pending,3,4,\n",
			want: []*v1.Pod{
				pod("p1", 2, "BE", v1.ResourceList{"cpu": q("100m"), "memory": q("10Mi")}),
				pod("p2", 3, "LS", v1.ResourceList{"cpu": q("100m"), "memory": q("10Mi"), GPUResource: q("8")}),
			},
		},
		{
			name: "the limit counts pods kept, not rows read",
			csv:  header + "p0,1,1,0,0,,BE,Failed,1,2,1\n" + "p1,1,1,0,0,,BE,Running,1,2,1\n" + "p2,1,1,0,0,,BE,Running,1,2,1\n",
			opts: Options{Limit: 1},
			want: []*v1.Pod{pod("p1", 1, "BE", v1.ResourceList{"cpu": q("1m"), "memory": q("1Mi")})},
		},
		{
			name: "namespace and epoch can be overridden",
			csv:  header + "p0,1,1,0,0,,BE,Running,60,2,1\n",
			opts: Options{Namespace: "trace", Epoch: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)},
			want: func() []*v1.Pod {
				p := pod("p0", 0, "BE", v1.ResourceList{"cpu": q("1m"), "memory": q("1Mi")})
				p.Namespace = "trace"
				p.CreationTimestamp = metav1.NewTime(time.Date(2020, 1, 1, 0, 1, 0, 0, time.UTC))
				return []*v1.Pod{p}
			}(),
		},
		{
			name: "with departures a pod leaves at its deletion_time",
			csv:  header + "p0,6000,12288,1,460,,LS,Running,427061,12902960,427061\n" + "p1,100,10,0,0,,BE,Pending,5,,\n",
			opts: Options{Departures: true},
			want: func() []*v1.Pod {
				p0 := pod("p0", 427061, "LS", v1.ResourceList{"cpu": q("6"), "memory": q("12Gi"), GPUResource: q("1")})
				gone := metav1.NewTime(Epoch.Add(12902960 * time.Second))
				p0.DeletionTimestamp = &gone
				return []*v1.Pod{p0, pod("p1", 5, "BE", v1.ResourceList{"cpu": q("100m"), "memory": q("10Mi")})}
			}(),
		},
		{
			name: "without departures deletion_time is not read, even when malformed",
			csv:  header + "p0,100,10,0,0,,BE,Running,5,soon,\n",
			want: []*v1.Pod{pod("p0", 5, "BE", v1.ResourceList{"cpu": q("100m"), "memory": q("10Mi")})},
		},
		{
			name: "without qos, phase and times (multigpu50) every row is a pod created at the epoch",
			csv:  "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,2,1000\n",
			want: func() []*v1.Pod {
				p := pod("p0", 0, "", v1.ResourceList{"cpu": q("1"), "memory": q("1Gi"), GPUResource: q("2")})
				delete(p.Labels, LabelQoS)
				return []*v1.Pod{p}
			}(),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadPods(strings.NewReader(tt.csv), "pods.csv", tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, quantityExact); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestWholeTraces(t *testing.T) {
	tests := []struct {
		file string
		want int
	}{
		{defaultCSV, 8152 - 1870},
		{gpuspecCSV, 8152 - 1870},
		{multigpuCSV, 9061},
		// The artifact's other lists ship gzipped.
		{traceDir + "/openb_pod_list_multigpu40.csv.gz", 8746},
		{traceDir + "/openb_pod_list_cpu250.csv.gz", 9420 - zcatFailed(t, traceDir+"/openb_pod_list_cpu250.csv.gz")},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			nodes, pods, err := LoadFiles(nodesCSV, tt.file, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes) != 1523 || len(pods) != tt.want {
				t.Errorf("got %d nodes and %d pods, want 1523 and %d", len(nodes), len(pods), tt.want)
			}
		})
	}
}

// zcatFailed counts the Failed rows of a gzipped pod list.
func zcatFailed(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), ",Failed,")
}

func TestGzippedListsReadAsPlainOnes(t *testing.T) {
	data, err := os.ReadFile(defaultCSV)
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(t.TempDir(), "pods.csv.gz")
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write(data)
	z.Close()
	if err := os.WriteFile(gz, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, want, err := LoadFiles(nodesCSV, defaultCSV, Options{Departures: true})
	if err != nil {
		t.Fatal(err)
	}
	_, got, err := LoadFiles(nodesCSV, gz, Options{Departures: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gzipped list differs (-plain +gzipped):\n%s", diff)
	}
	// A .gz that is not gzip names the file.
	bad := filepath.Join(t.TempDir(), "bad.csv.gz")
	os.WriteFile(bad, data[:100], 0o644)
	if _, _, err := LoadFiles(nodesCSV, bad, Options{}); err == nil || !strings.Contains(err.Error(), "bad.csv.gz") {
		t.Errorf("a .gz that is not gzip: got %v, want an error naming the file", err)
	}
}

func TestMalformedInputIsReportedWithFileAndLine(t *testing.T) {
	const podHeader = "name,cpu_milli,memory_mib,num_gpu\n"
	tests := []struct {
		name  string
		nodes bool
		csv   string
		want  string
	}{
		{"an empty file", false, "", "pods.csv: invalid openb trace: empty file, want a header row"},
		{"a missing column", false, "name,cpu_milli\n", "pods.csv:1: invalid openb trace: missing column(s) memory_mib, num_gpu"},
		{"a number that is not one", false, podHeader + "p0,1,1,0\np1,x,1,0\n", `pods.csv:3: invalid openb trace: cpu_milli: invalid value "x": want a non-negative integer`},
		{"a negative number", false, podHeader + "p0,1,-1,0\n", `pods.csv:2: invalid openb trace: memory_mib: invalid value "-1": want a non-negative integer`},
		{"a duplicate pod", false, podHeader + "p0,1,1,0\np0,1,1,0\n", `pods.csv:3: invalid openb trace: name: duplicate pod "p0"`},
		{"a short row", false, podHeader + "p0,1,1\n", "pods.csv:2: invalid openb trace: wrong number of fields"},
		{"a bare quote", false, podHeader + "p0,1,1,0\np\"1,1,1,0\n", `pods.csv:3: invalid openb trace: bare " in non-quoted-field`},
		{"a departure before the arrival", false, "name,cpu_milli,memory_mib,num_gpu,creation_time,deletion_time\np0,1,1,0,10,20\np1,1,1,0,30,29\n", "pods.csv:3: invalid openb trace: deletion_time 29 is before creation_time 30"},
		{"a departure that is not a number", false, "name,cpu_milli,memory_mib,num_gpu,creation_time,deletion_time\np0,1,1,0,10,soon\n", `pods.csv:2: invalid openb trace: deletion_time: invalid value "soon": want a non-negative integer`},
		{"a node without a name", true, "sn,cpu_milli,memory_mib,gpu,model\n,1,1,0,\n", "nodes.csv:2: invalid openb trace: sn: empty node name"},
		{"a duplicate node", true, "sn,cpu_milli,memory_mib,gpu,model\nn,1,1,0,\nn,1,1,0,\n", `nodes.csv:3: invalid openb trace: sn: duplicate node "n"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			if tt.nodes {
				_, err = ReadNodes(strings.NewReader(tt.csv), "nodes.csv")
			} else {
				_, err = ReadPods(strings.NewReader(tt.csv), "pods.csv", Options{Departures: true})
			}
			if err == nil || err.Error() != tt.want || !errors.Is(err, ErrInvalid) {
				t.Errorf("got error %v, want %q wrapping ErrInvalid", err, tt.want)
			}
		})
	}
}
