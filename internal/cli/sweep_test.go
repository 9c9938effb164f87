package cli

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
)

func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	ex, _ := filepath.Abs("../../examples")
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.yaml", "verb: replay\nuntil: 10m\naxes:\n  traces: [{name: t, files: [\""+ex+"/cluster.yaml\", \""+ex+"/trace.yaml\"]}]\n")
	missing := write("missing.yaml", "verb: replay\naxes:\n  traces: [{name: t, files: [nope.yaml]}]\n")
	axis := write("axis.yaml", "verb: replay\naxes:\n  traces: [{name: t, files: [x]}]\n  profiles: [a]\n")
	dry := write("dry.yaml", "verb: dryrun\naxes:\n  traces: [{name: t, files: [\""+ex+"/cluster.yaml\"]}]\n")
	noSpec := write("nospec.yaml", "verb: capacity\naxes:\n  traces: [{name: t, files: [\""+ex+"/cluster.yaml\"]}]\n  workloads: [{name: w, files: [nope.yaml]}]\n")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no study", []string{"sweep"}, "-f/--filename is required"},
		{"a missing study", []string{"sweep", "-f", filepath.Join(dir, "nope.yaml")}, "nope.yaml: reading study: no such file or directory"},
		{"a missing trace file names the field", []string{"sweep", "-f", missing}, missing + ": axes.traces[0] (t): "},
		{"an unknown axis", []string{"sweep", "-f", axis}, axis + `: parsing study: unknown field "profiles"`},
		{"an unknown output format", []string{"sweep", "-f", good, "-o", "yaml"}, `--output: unknown format "yaml" (want one of table, json, csv)`},
		{"negative workers", []string{"sweep", "-f", good, "--workers", "-1"}, "--workers -1: must not be negative"},
		{"an HTML report of a study without series", []string{"sweep", "-f", good, "--html", filepath.Join(dir, "r.html")}, "--html " + filepath.Join(dir, "r.html") + ": the study's record must include series"},
		{"an HTML report of a dryrun study", []string{"sweep", "-f", dry, "--html", filepath.Join(dir, "r.html")}, "--html " + filepath.Join(dir, "r.html") + ": the report draws replays' curves, and the study's verb is dryrun"},
		{"a capacity workload's missing spec names the field", []string{"sweep", "-f", noSpec}, noSpec + ": axes.workloads[0] (w): "},
		{"an HTML report in a missing directory", []string{"sweep", "-f", good, "--html", filepath.Join(dir, "no", "r.html")}, "--html " + filepath.Join(dir, "no", "r.html") + ": "},
		{"results in a file", []string{"sweep", "-f", good, "--results", good}, "--results " + good + ": not a directory"},
		{"a cell the study lacks", []string{"sweep", "-f", good, "--cell", "1"}, "--cell 1: the study has 1 cells (0 to 0)"},
		{"a share with a report", []string{"sweep", "-f", good, "--cell", "0", "--html", filepath.Join(dir, "r.html")}, "--cell runs a share of the cells and prints nothing"},
		{"collecting before running", []string{"sweep", "-f", good, "--collect"}, "1 of 1 cells have no result in " + filepath.Join(dir, "good.results")},
		{"a cluster flag without --on-cluster", []string{"sweep", "-f", good, "--image", "i"}, "--image goes with --on-cluster"},
		{"on a cluster without an image", []string{"sweep", "-f", good, "--on-cluster", "-n", "ns"}, "--on-cluster: --image is required"},
		{"an unknown dry run", []string{"sweep", "-f", good, "--on-cluster", "-n", "ns", "--image", "i", "--dry-run", "maybe"}, `--dry-run "maybe": want "none", "client" or "server"`},
		{"objects as csv", []string{"sweep", "-f", good, "--on-cluster", "-n", "ns", "--image", "i", "--dry-run", "client", "-o", "csv"}, `--output: unknown format "csv" (want one of table, yaml, json)`},
		{"merged results as yaml", []string{"sweep", "-f", good, "--on-cluster", "-n", "ns", "--image", "i", "-o", "yaml"}, `--output: unknown format "yaml" (want one of table, json, csv)`},
		{"an image with --collect", []string{"sweep", "-f", good, "--on-cluster", "-n", "ns", "--collect", "--image", "i"}, "--image goes with creating the Job, not with --collect or --cell"},
		{"no cells per pod", []string{"sweep", "-f", good, "--on-cluster", "-n", "ns", "--image", "i", "--cells-per-pod", "0"}, "--cells-per-pod 0: at least 1"},
		{"a cpu request that is no quantity", []string{"sweep", "-f", good, "--on-cluster", "-n", "ns", "--image", "i", "--cpu", "lots"}, `--cpu "lots": not a quantity`},
		{"a Job name that is no DNS label", []string{"sweep", "-f", good, "--on-cluster", "-n", "ns", "--image", "i", "--name", "My_Sweep"}, `--name "My_Sweep": a lowercase RFC 1123 label`},
		{"a namespace that is no DNS label", []string{"sweep", "-f", good, "--on-cluster", "-n", "Team A", "--image", "i"}, `--namespace "Team A": a lowercase RFC 1123 label`},
		{"an input by absolute path cannot be mounted beside the study", []string{"sweep", "-f", good, "--on-cluster", "-n", "ns", "--image", "i", "--dry-run=client"}, good + ": axes.traces[0].files[0]: " + ex + "/cluster.yaml is an absolute path"},
		{"an index past the Job's", []string{"sweep", "-f", good, "--on-cluster", "-n", "ns", "--cell", "1"}, "--cell 1: the study has 1 cells, 1 indexes of 1 cells (0 to 0)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != ExitUsage {
				t.Errorf("exit code %d, want %d (stderr %q)", code, ExitUsage, stderr)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
			if !strings.Contains(stderr, tt.wantErr) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("stderr %q: want one line containing %q", stderr, tt.wantErr)
			}
		})
	}
}

func TestSweepRunsResumesAndCollects(t *testing.T) {
	dir := t.TempDir()
	ex, _ := filepath.Abs("../../examples")
	study := filepath.Join(dir, "study.yaml")
	text := "verb: replay\nuntil: 20m\naxes:\n  traces: [{name: t, files: [\"" + ex + "/cluster.yaml\", \"" + ex + "/trace.yaml\"]}]\n  configs: [{name: default}, {name: binpack, file: \"" + ex + "/sched-config.yaml\"}]\n  seeds: [1, 2]\n"
	if err := os.WriteFile(study, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	code, first, stderr := run(t, "", "sweep", "-f", study, "-o", "json", "--workers", "1")
	if code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	if !strings.HasPrefix(first, "{\n  \"verb\": \"replay\",\n  \"cells\": [") || strings.Count(first, `"id": `) != 4 {
		t.Errorf("-o json: want the four cells, got:\n%s", first)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "study.results", "*.json")); len(files) != 4 {
		t.Errorf("%d result files beside the study, want 4", len(files))
	}
	code, _, stderr = run(t, "", "sweep", "-f", study)
	if code != ExitUsage || !strings.Contains(stderr, "exists: --resume keeps finished cells") {
		t.Errorf("a second run without --resume: exit code %d, stderr %q", code, stderr)
	}
	// Shares of the study, as two machines (or an Indexed Job's pods) run
	// them into one directory, then merged.
	shared := filepath.Join(dir, "shared")
	for _, cells := range []string{"0,3", "2", "1"} {
		code, out, stderr := run(t, "", "sweep", "-f", study, "--results", shared, "--cell", cells)
		if code != 0 || out != "" {
			t.Fatalf("--cell %s: exit code %d, stdout %q, stderr %q; want a quiet success", cells, code, out, stderr)
		}
	}
	if code, merged, stderr := run(t, "", "sweep", "-f", study, "--results", shared, "--collect", "-o", "json"); code != 0 || merged != first {
		t.Errorf("merging the shares: exit code %d, stderr %q; want the single run's output", code, stderr)
	}
	for _, args := range [][]string{{"--resume", "--workers", "2"}, {"--collect"}} {
		code, again, stderr := run(t, "", append([]string{"sweep", "-f", study, "-o", "json"}, args...)...)
		if code != 0 || again != first {
			t.Errorf("%v: exit code %d, stderr %q; want the first run's output", args, code, stderr)
		}
	}
}

func TestSweepWritesTheOverlaidReport(t *testing.T) {
	dir := t.TempDir()
	ex, _ := filepath.Abs("../../examples")
	study := filepath.Join(dir, "study.yaml")
	text := "verb: replay\nuntil: 20m\nrecord: [summary, series]\naxes:\n  traces: [{name: t, files: [\"" + ex + "/cluster.yaml\", \"" + ex + "/trace.yaml\"]}]\n  seeds: [1, 2]\n"
	if err := os.WriteFile(study, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	code, _, stderr := run(t, "", "sweep", "-f", study, "--html", page)
	if code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<title>kubectl sched sweep</title>", `"id":"t_default_default_seed1"`, `"id":"t_default_default_seed2"`, `"allocation":{"cpu":[`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if strings.Contains(string(b), "{{DATA}}") {
		t.Error("the report's data was not filled in")
	}
}

// TestSweepOnClusterDryRun: --dry-run=client prints the objects and
// contacts no cluster (the clients would fail the test).
func TestSweepOnClusterDryRun(t *testing.T) {
	ex, _ := filepath.Abs("../../examples")
	study := filepath.Join(ex, "study.yaml")
	settings := Settings{NewClients: func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		t.Error("a client dry run contacted the cluster")
		return nil, errors.New("no cluster in this test")
	}}
	exec := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Execute(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, settings, args)
		return code, out.String(), errOut.String()
	}
	base := []string{"sweep", "-f", study, "--on-cluster", "--image", "kubectl-sched:dev", "-n", "sweeps", "--dry-run=client"}
	code, out, stderr := exec(base...)
	want := "serviceaccount/sweep-study created (dry run)\nrole.rbac.authorization.k8s.io/sweep-study created (dry run)\nrolebinding.rbac.authorization.k8s.io/sweep-study created (dry run)\nconfigmap/sweep-study-study-0 created (dry run)\njob.batch/sweep-study created (dry run)\n"
	if code != 0 || out != want || stderr != "" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, out, want)
	}
	code, out, stderr = exec(append(base, "-o", "yaml", "--parallelism", "3")...)
	if code != 0 || stderr != "" {
		t.Fatalf("-o yaml: exit %d: %s", code, stderr)
	}
	docs := strings.Split(out, "\n---\n")
	if len(docs) != 5 || !strings.HasPrefix(docs[4], "apiVersion: batch/v1\nkind: Job\n") {
		t.Fatalf("-o yaml: want 5 documents, the Job last:\n%.500s", out)
	}
	for _, want := range []string{"  completionMode: Indexed\n", "  completions: 4\n", "  parallelism: 3\n", "        - $(JOB_COMPLETION_INDEX)\n", "        image: kubectl-sched:dev\n"} {
		if !strings.Contains(docs[4], want) {
			t.Errorf("the Job lacks %q:\n%s", want, docs[4])
		}
	}
	var cm v1.ConfigMap
	var job batchv1.Job
	if err := yaml.UnmarshalStrict([]byte(docs[3]), &cm); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict([]byte(docs[4]), &job); err != nil {
		t.Fatal(err)
	}
	mounted := map[string]string{}
	for _, it := range job.Spec.Template.Spec.Volumes[0].Projected.Sources[0].ConfigMap.Items {
		mounted[it.Path] = cm.Data[it.Key]
	}
	for _, f := range []string{"study.yaml", "cluster.yaml", "trace.yaml", "sched-config.yaml"} {
		data, err := os.ReadFile(filepath.Join(ex, f))
		if err != nil {
			t.Fatal(err)
		}
		if mounted[f] != string(data) {
			t.Errorf("%s is not mounted with its contents", f)
		}
	}
	if len(mounted) != 4 {
		t.Errorf("mounted %d files, want 4", len(mounted))
	}
}

func TestSweepRunsDryRunAndCapacityStudies(t *testing.T) {
	ex, _ := filepath.Abs("../../examples")
	for _, tc := range []struct {
		name, study string
		want        []string
	}{
		{"dryrun", "verb: dryrun\naxes:\n  traces: [{name: t, files: [\"" + ex + "/cluster.yaml\"]}]\n  seeds: [1, 2]\n",
			[]string{"TRACE  CONFIG   GATES    SEED  NODES  PENDING  SCHEDULED  UNSCHEDULABLE  EVICTIONS  NODES USED  CPU ALLOC", "t      default  default  2     33     40       28         12             0"}},
		{"capacity", "verb: capacity\naxes:\n  traces: [{name: t, files: [\"" + ex + "/cluster.yaml\"]}]\n  workloads: [{name: web, files: [\"" + ex + "/web.yaml\"]}]\n",
			[]string{"TRACE  WORKLOAD  CONFIG   GATES    NODES  ADDED  SPEC                     REPLICAS  COUNT  LIMITED BY  COMPLETE", "t      web       default  default  33     0      Deployment web/checkout  -         180    fit         yes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			study := filepath.Join(dir, "study.yaml")
			if err := os.WriteFile(study, []byte(tc.study), 0o600); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := run(t, "", "sweep", "-f", study)
			if code != 0 {
				t.Fatalf("exit code %d: %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the table lacks %q:\n%s", w, out)
				}
			}
			code, again, stderr := run(t, "", "sweep", "-f", study, "--resume", "-o", "json")
			if code != 0 || !strings.HasPrefix(again, "{\n  \"verb\": \""+tc.name+"\",") {
				t.Errorf("--resume -o json: exit code %d, stderr %q, stdout:\n%s", code, stderr, again)
			}
		})
	}
}
