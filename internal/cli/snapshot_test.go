package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// fakeCluster serves the objects of a cluster file (nodes, pods,
// namespaces and DRA objects) through a fake clientset, as a live API
// server without the resourceclaim controller would: template claims the
// file lacks do not exist.
func fakeCluster(t *testing.T, file string) Settings {
	t.Helper()
	cl, err := snapshot.LoadPaths([]string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, n := range cl.Nodes {
		objs = append(objs, n)
	}
	for _, p := range cl.Pods {
		objs = append(objs, p)
	}
	for _, n := range cl.Namespaces {
		objs = append(objs, n)
	}
	d := cl.DRA
	for _, o := range d.DeviceClasses {
		objs = append(objs, o)
	}
	for _, o := range d.ResourceSlices {
		objs = append(objs, o)
	}
	for _, o := range d.ResourceClaims {
		objs = append(objs, o)
	}
	for _, o := range d.ResourceClaimTemplates {
		objs = append(objs, o)
	}
	kc := fake.NewClientset(objs...)
	return Settings{NewClients: func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		return &kube.Clients{Kube: kc, Discovery: kc.Discovery()}, nil
	}}
}

func runWith(t *testing.T, s Settings, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, s, args)
	return code, out.String(), errOut.String()
}

func TestSnapshotThenDryRunGivesTheSamePlacements(t *testing.T) {
	live := fakeCluster(t, small)
	dump := filepath.Join(t.TempDir(), "cluster.yaml")
	code, out, stderr := runWith(t, live, "snapshot", "-A", "--output-file", dump)
	if code != 0 || out != "" {
		t.Fatalf("snapshot: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	if !strings.HasPrefix(stderr, "wrote "+dump+": 4 nodes, 6 pods, ") {
		t.Errorf("stderr = %q", stderr)
	}
	_, want, _ := run(t, "", "dryrun", "-f", small, "-o", "json")
	code, got, stderr := run(t, "", "dryrun", "-f", dump, "-o", "json")
	if code != 0 || stderr != "" {
		t.Fatalf("dryrun of the dump: exit %d, stderr %q", code, stderr)
	}
	var w, g report.DryRun
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(w.Placements, g.Placements); d != "" {
		t.Errorf("placements (-file +dump):\n%s", d)
	}
	if d := cmp.Diff(w.Unschedulable, g.Unschedulable); d != "" {
		t.Errorf("unschedulable (-file +dump):\n%s", d)
	}
}

func TestSnapshotFormatsAndScope(t *testing.T) {
	live := fakeCluster(t, small)
	code, out, _ := runWith(t, live, "snapshot", "-A")
	if code != 0 || !strings.HasPrefix(out, "apiVersion: v1\nitems:\n") || !strings.HasSuffix(out, "kind: List\n") {
		t.Errorf("stdout is not a YAML v1 List (exit %d):\n%.200s", code, out)
	}
	code, out, _ = runWith(t, live, "snapshot", "-A", "-o", "json")
	var list struct {
		Kind  string
		Items []struct{ Kind string }
	}
	if err := json.Unmarshal([]byte(out), &list); code != 0 || err != nil || list.Kind != "List" || len(list.Items) != 10 {
		t.Errorf("json: exit %d, err %v, kind %q, %d items", code, err, list.Kind, len(list.Items))
	}
	dump := filepath.Join(t.TempDir(), "shop.json")
	code, _, stderr := runWith(t, live, "snapshot", "-n", "shop", "--output-file", dump)
	if code != 0 || !strings.Contains(stderr, "4 nodes, 4 pods") || !strings.Contains(stderr, "namespace shop (pods of other namespaces are left out: -A for all)") {
		t.Errorf("snapshot -n shop: exit %d, stderr %q", code, stderr)
	}
	if b, _ := os.ReadFile(dump); !bytes.HasPrefix(b, []byte("{")) {
		t.Errorf("%s is not JSON", dump)
	}
}

func TestSnapshotBadInput(t *testing.T) {
	live := fakeCluster(t, small)
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"-n and -A", []string{"snapshot", "-n", "a", "-A"}, "cannot be used together"},
		{"an unknown format", []string{"snapshot", "-A", "-o", "xml"}, `--output: unknown format "xml" (want yaml or json)`},
		{"a file name for -o, the format, names the flag for files", []string{"snapshot", "-A", "-o", "cluster.yaml"},
			`--output: unknown format "cluster.yaml" (want yaml or json); to write the dump to a file: --output-file cluster.yaml`},
		{"an argument", []string{"snapshot", "pods"}, "unknown command"},
		{"standard output as the file", []string{"snapshot", "-A", "--output-file", "-"}, "--output-file: '-' is standard output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runWith(t, live, tt.args...)
			if code != 2 || out != "" || !strings.Contains(stderr, tt.wantErr) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, one line with %q", code, out, stderr, tt.wantErr)
			}
		})
	}
}

func TestLiveExplainReadsTheClusterOnce(t *testing.T) {
	live := fakeCluster(t, small)
	// A live cluster's pending pods are the real scheduler's: no dry-run
	// check at the pod's turn (--check-turn=false for the dump).
	_, want, _ := run(t, "", "explain", "pod", "batch", "-n", "shop", "--snapshot", small, "-o", "json", "--check-turn=false")
	code, got, stderr := runWith(t, live, "explain", "pod", "batch", "-n", "shop", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want = strings.Replace(want, `"source": "snapshot"`, `"source": "cluster"`, 1)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("live vs snapshot (-snapshot +live):\n%s", d)
	}
	code, _, stderr = runWith(t, live, "explain", "pod", "nope", "-n", "shop")
	if code != 2 || stderr != "error: pods \"nope\" not found in namespace \"shop\"\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestSnapshotStripsSensitiveFieldsUnlessFull(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "a",
			Annotations:   map[string]string{"note": "password=hunter2", "volume.kubernetes.io/selected-node": "n1"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubectl-client-side-apply"}}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "app:1",
			Command: []string{"/app", "--token=t0ken"}, Args: []string{"--key=s3cret"},
			Env: []v1.EnvVar{{Name: "DB_PASSWORD", Value: "hunter2"}}}}},
	}
	kc := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, pod,
		&v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "a"}, StringData: map[string]string{"pw": "sekrit"}})
	live := Settings{NewClients: func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		return &kube.Clients{Kube: kc, Discovery: kc.Discovery()}, nil
	}}
	secrets := []string{"hunter2", "t0ken", "s3cret", "kubectl-client-side-apply", "note", "sekrit"}
	tests := []struct {
		name string
		args []string
		kept []string // of secrets, what the dump holds
	}{
		{"by default, what the scheduler does not read is stripped", []string{"snapshot", "-A"}, nil},
		{"--full keeps everything but Secrets, which are never read", []string{"snapshot", "-A", "--full"}, []string{"hunter2", "t0ken", "s3cret", "kubectl-client-side-apply", "note"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runWith(t, live, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var kept []string
			for _, s := range secrets {
				if strings.Contains(out, s) {
					kept = append(kept, s)
				}
			}
			if d := cmp.Diff(tt.kept, kept); d != "" {
				t.Errorf("sensitive strings in the dump (-want +got):\n%s", d)
			}
			for _, must := range []string{"volume.kubernetes.io/selected-node", "DB_PASSWORD", "app:1"} {
				if !strings.Contains(out, must) {
					t.Errorf("dump lost %q, which the scheduler reads", must)
				}
			}
		})
	}
}

func TestSnapshotOutputFlags(t *testing.T) {
	live := fakeCluster(t, small)
	dir := t.TempDir()
	t.Chdir(dir)
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr []string // lines
		// file is written, in format "json" or "yaml"; "" for none.
		file, format string
	}{
		{name: "--output-file names the file; its extension the format", args: []string{"--output-file", "c.json"},
			wantStderr: []string{"wrote c.json: 4 nodes, 6 pods, 0 other objects from all namespaces"}, file: "c.json", format: "json"},
		{name: "-o wins over the extension, with a warning", args: []string{"-o", "json", "--output-file", "c.yaml"},
			wantStderr: []string{"warning: writing JSON into c.yaml (-o json)", "wrote c.yaml: 4 nodes, 6 pods, 0 other objects from all namespaces"}, file: "c.yaml", format: "json"},
		{name: "a file named as a format is written, with a warning", args: []string{"--output-file", "json"},
			wantStderr: []string{`warning: writing the dump to a file named "json" (-o json is the format)`, "wrote json: 4 nodes, 6 pods, 0 other objects from all namespaces"}, file: "json", format: "yaml"},
		{name: "--format still works, deprecated", args: []string{"--format", "json"},
			wantStderr: []string{"warning: --format is deprecated: use -o/--output"}},
		{name: "a missing directory fails before the cluster is listed, naming it, not a temporary file", args: []string{"--output-file", "missing/c.yaml"}, wantCode: 2,
			wantStderr: []string{"error: --output-file missing/c.yaml: directory missing does not exist"}},
		{name: "a directory fails before the cluster is listed", args: []string{"--output-file", "."}, wantCode: 2,
			wantStderr: []string{"error: --output-file .: is a directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runWith(t, live, append([]string{"snapshot", "-A"}, tt.args...)...)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if d := cmp.Diff(tt.wantStderr, strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")); d != "" {
				t.Errorf("stderr (-want +got):\n%s", d)
			}
			if tt.file == "" {
				return
			}
			b, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if isJSON := bytes.HasPrefix(b, []byte("{")); isJSON != (tt.format == "json") {
				t.Errorf("%s: JSON %v, want %s:\n%.80s", tt.file, isJSON, tt.format, b)
			}
		})
	}
}

func TestSnapshotOfAMissingNamespaceWarns(t *testing.T) {
	code, out, stderr := runWith(t, fakeCluster(t, small), "snapshot", "-n", "nope")
	if code != 0 || !strings.HasPrefix(out, "apiVersion: v1\n") {
		t.Errorf("exit %d, stdout %.80q", code, out)
	}
	if want := "warning: namespace \"nope\" not found: the snapshot has no pods or other objects of it\n"; stderr != want {
		t.Errorf("stderr = %q, want %q", stderr, want)
	}
}
