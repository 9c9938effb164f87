package sweep

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

var update = flag.Bool("update", false, "rewrite golden files")

// clusterStudy's inputs are beside it and in a sibling directory (one of
// them a directory): the pods mount their common root.
const clusterStudy = "testdata/cluster-study/studies/study.yaml"

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestGoldenClusterObjects(t *testing.T) {
	p := plan(t, clusterStudy)
	for _, tc := range []struct {
		name, golden, format string
		opts                 ClusterOptions
	}{
		{
			name: "one pod per cell, with its ServiceAccount and Role", golden: "cluster-objects.yaml", format: "yaml",
			opts: ClusterOptions{Name: "sweep-study", Namespace: "sweeps", Image: "registry.example.com/kubectl-sched:v0.1.0", Parallelism: 4,
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}},
		},
		{
			name: "two cells per pod, an existing ServiceAccount, the study in the image", golden: "cluster-objects-image.json", format: "json",
			opts: ClusterOptions{Name: "big", Namespace: "sweeps", Image: "registry.example.com/study:v1", CellsPerPod: 4,
				ServiceAccount: "sweeper", ImageStudy: "/data/study.yaml",
				Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("2Gi")}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := p.ClusterObjects(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			data, err := objs.Marshal(tc.format)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, data)
		})
	}
}

func TestClusterObjectsJob(t *testing.T) {
	p := plan(t, clusterStudy) // 6 cells
	for _, tc := range []struct {
		name            string
		perPod          int
		wantCompletions int32
		wantArgs        string
	}{
		{"one cell per index", 1, 6, "sweep -f /study/studies/study.yaml --on-cluster --name s -n ns --results /results --workers 1 --cell $(JOB_COMPLETION_INDEX)"},
		{"four cells per index: the last index has two", 4, 2, "sweep -f /study/studies/study.yaml --on-cluster --name s -n ns --results /results --workers 1 --cells-per-pod 4 --cell $(JOB_COMPLETION_INDEX)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := p.ClusterObjects(ClusterOptions{Name: "s", Namespace: "ns", Image: "i", CellsPerPod: tc.perPod})
			if err != nil {
				t.Fatal(err)
			}
			job := objs.Job
			if got := *job.Spec.Completions; got != tc.wantCompletions {
				t.Errorf("completions = %d, want %d", got, tc.wantCompletions)
			}
			if got := string(*job.Spec.CompletionMode); got != "Indexed" {
				t.Errorf("completionMode = %s", got)
			}
			if got := strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "); got != tc.wantArgs {
				t.Errorf("args:\n got %s\nwant %s", got, tc.wantArgs)
			}
			var covered []int
			for i := 0; i < int(tc.wantCompletions); i++ {
				covered = append(covered, ChunkCells(i, tc.perPod, len(p.Cells))...)
			}
			if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5}, covered); diff != "" {
				t.Errorf("the indexes' cells (-want +got):\n%s", diff)
			}
		})
	}
}

// bigStudy writes a study whose node file is size bytes (a comment pads
// it) and whose pods are in a second file of the same size.
func bigStudy(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	nodes, err := os.ReadFile("testdata/cluster-study/data/nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pods, err := os.ReadFile("testdata/cluster-study/data/pods/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	pad := func(data []byte) []byte {
		line := "# " + strings.Repeat("x", 97) + "\n"
		var b bytes.Buffer
		for b.Len()+len(data)+len(line) <= size {
			b.WriteString(line)
		}
		b.Write(data)
		return b.Bytes()
	}
	for name, data := range map[string][]byte{"nodes.yaml": pad(nodes), "pods.yaml": pad(pods)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return writeStudy(t, dir, "verb: replay\naxes:\n  traces:\n  - name: big\n    files: [nodes.yaml, pods.yaml]\n")
}

func TestClusterObjectsSplitsTheStudyAcrossConfigMaps(t *testing.T) {
	p := plan(t, bigStudy(t, 700_000))
	objs, err := p.ClusterObjects(ClusterOptions{Name: "s", Namespace: "ns", Image: "i"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cm := range objs.ConfigMaps {
		size := 0
		var keys []string
		for k, v := range cm.Data {
			size += len(v)
			keys = append(keys, k)
		}
		if size > ConfigMapLimit {
			t.Errorf("%s holds %d bytes", cm.Name, size)
		}
		got = append(got, cm.Name)
	}
	if diff := cmp.Diff([]string{"s-study-0", "s-study-1"}, got); diff != "" {
		t.Errorf("configmaps (-want +got):\n%s", diff)
	}
	srcs := objs.Job.Spec.Template.Spec.Volumes[0].Projected.Sources
	var paths []string
	for _, s := range srcs {
		for _, it := range s.ConfigMap.Items {
			paths = append(paths, s.ConfigMap.Name+":"+it.Path)
		}
	}
	if diff := cmp.Diff([]string{"s-study-0:study.yaml", "s-study-0:nodes.yaml", "s-study-1:pods.yaml"}, paths); diff != "" {
		t.Errorf("mounted files (-want +got):\n%s", diff)
	}
}

func TestClusterObjectsBadInput(t *testing.T) {
	dir := t.TempDir()
	abs := writeStudy(t, dir, "verb: replay\naxes:\n  traces:\n  - name: ex\n    files: [\"{{ex}}/cluster.yaml\"]\n")
	for _, tc := range []struct {
		name, study, want string
	}{
		{"an absolute path cannot be mounted beside the study", abs, "axes.traces[0].files[0]: " + examples + "/cluster.yaml is an absolute path: the pods find the inputs beside the study, so give it relative to the study file"},
		{"a file over a ConfigMap's 1 MiB", bigStudy(t, 1_100_000), "study.yaml: nodes.yaml is 1099941 bytes: a ConfigMap holds at most 1 MiB; build the study and its inputs into the image and give --image-study PATH (docs/sweep.md)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := plan(t, tc.study).ClusterObjects(ClusterOptions{Name: "s", Namespace: "ns", Image: "i"})
			if err == nil || !IsInput(err) || !strings.HasSuffix(err.Error(), tc.want) {
				t.Fatalf("got %v, want bad input ending %q", err, tc.want)
			}
		})
	}
}

func TestResultConfigMapRoundTrip(t *testing.T) {
	p := plan(t, clusterStudy)
	c := p.Cells[1]
	result := func(n int) []byte {
		return []byte(`{"id":"` + c.ID + `","hash":"` + c.Hash + `","axes":{},"result":{"pad":"` + strings.Repeat("ab", n) + `"}}` + "\n")
	}
	for _, tc := range []struct {
		name    string
		file    []byte
		wantKey string
	}{
		{"a small result as text", result(10), c.ID + ".json"},
		{"a result over 1 MiB gzipped", result(800_000), c.ID + ".json.gz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cm, err := ResultConfigMap("s", "ns", c, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k := range cm.Data {
				keys = append(keys, k)
			}
			for k := range cm.BinaryData {
				keys = append(keys, k)
			}
			if diff := cmp.Diff([]string{tc.wantKey}, keys); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
			if cm.Name != "s-result-1" || cm.Annotations[AnnotationCell] != c.ID || cm.Annotations[AnnotationHash] != c.Hash {
				t.Errorf("name %s, annotations %v", cm.Name, cm.Annotations)
			}
			r, err := resultFromConfigMap(cm, c)
			if err != nil {
				t.Fatal(err)
			}
			if r.ID != c.ID || r.Hash != c.Hash || !bytes.Contains(tc.file, r.Result) {
				t.Errorf("decoded %s %s %.40s", r.ID, r.Hash, r.Result)
			}
		})
	}
	t.Run("a result too large even gzipped is an error that says what to do", func(t *testing.T) {
		noise := make([]byte, 1_200_000)
		seed := uint32(1)
		for i := range noise {
			seed = seed*1664525 + 1013904223
			noise[i] = byte(seed >> 24)
		}
		_, err := ResultConfigMap("s", "ns", c, noise)
		if err == nil || !strings.Contains(err.Error(), "record less") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestNames(t *testing.T) {
	for _, tc := range []struct{ study, want string }{
		{"study.yaml", "sweep-study"},
		{"/x/FGD_Study.v2.yaml", "sweep-fgd-study-v2"},
		{"___.yaml", "sweep"},
		{strings.Repeat("a", 80) + ".yaml", "sweep-" + strings.Repeat("a", 34)},
	} {
		if got := DefaultName(tc.study); got != tc.want {
			t.Errorf("DefaultName(%q) = %q, want %q", tc.study, got, tc.want)
		}
		if err := CheckName(DefaultName(tc.study)); err != nil {
			t.Errorf("CheckName(DefaultName(%q)): %v", tc.study, err)
		}
	}
	for _, bad := range []string{"Upper", "a_b", strings.Repeat("a", 41), ""} {
		if err := CheckName(bad); err == nil {
			t.Errorf("CheckName(%q) = nil", bad)
		}
	}
}
