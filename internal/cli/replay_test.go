package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	exampleCluster = "../../examples/cluster.yaml"
	exampleTrace   = "../../examples/trace.yaml"
	exampleConfig  = "../../examples/sched-config.yaml"
)

func TestGoldenReplayAndCompareOutputs(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"replay-example-table", []string{"replay", "-f", exampleCluster, "-f", exampleTrace}},
		{"replay-example-until-csv", []string{"replay", "-f", exampleCluster, "-f", exampleTrace, "--until", "20m", "-o", "csv"}},
		{"compare-example-table", []string{"compare", "-f", exampleCluster, "--config", exampleConfig}},
		{"compare-example-replay-table", []string{"compare", "-f", exampleCluster, "-f", exampleTrace, "--config", "default", "--config", exampleConfig, "--replay"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != 0 {
				t.Fatalf("exit code %d: %s", code, stderr)
			}
			golden(t, tt.name, out)
		})
	}
}

func TestReplayJSONIsTheDocumentedContract(t *testing.T) {
	code, out, stderr := run(t, "", "replay", "-f", exampleCluster, "-f", exampleTrace, "-o", "json")
	if code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	var doc struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for _, e := range doc.Events {
		for _, k := range []string{"time", "pod", "type"} {
			if _, ok := e[k].(string); !ok {
				t.Fatalf("event without a string %q: %v", k, e)
			}
		}
		typ := e["type"].(string)
		types[typ]++
		if _, hasNode := e["node"]; hasNode != (typ != "unschedulable" && typ != "deleted") {
			t.Errorf("%s event with node %v", typ, e["node"])
		}
	}
	for _, typ := range []string{"placed", "unschedulable", "departed", "deleted"} {
		if types[typ] == 0 {
			t.Errorf("no %q event in the example's log: %v", typ, types)
		}
	}
}

func TestReplayAndCompareBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	backwards := write("backwards.yaml", `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", pods: "10"}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1, creationTimestamp: "2026-01-01T10:00:00Z", deletionTimestamp: "2026-01-01T09:00:00Z"}
spec: {containers: [{name: c}]}
`)
	groupBackwards := write("group-backwards.yaml", `apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "1", pods: "10"}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: g, namespace: default, creationTimestamp: "2026-01-01T10:00:00Z", deletionTimestamp: "2026-01-01T09:00:00Z"}
spec: {schedulingPolicy: {gang: {minCount: 1}}}
`)
	nodesCSV := write("nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1024,0,\n")
	badPods := write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,creation_time,deletion_time\np0,100,10,0,5,9\np1,100,ten,0,5,9\n")
	podsBackwards := write("back.csv", "name,cpu_milli,memory_mib,num_gpu,creation_time,deletion_time\np0,100,10,0,5,9\np1,100,10,0,5,4\n")
	badConfig := write("cfg.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n      enabled: [{name: NoSuchPlugin}]\n")
	notAConfig := write("notcfg.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles: [\n")
	html := filepath.Join(dir, "report.html")
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"a departure before its arrival names the file and line", []string{"replay", "-f", backwards, "--html", html}, backwards + ":6: Pod default/p1: invalid trace: metadata.deletionTimestamp 2026-01-01T09:00:00Z is before metadata.creationTimestamp 2026-01-01T10:00:00Z"},
		{"a PodGroup deleted before it is created names the file and line", []string{"replay", "-f", groupBackwards, "--feature-gates", "GenericWorkload=true", "--html", html}, groupBackwards + ":6: PodGroup default/g: invalid trace: metadata.deletionTimestamp 2026-01-01T09:00:00Z is before metadata.creationTimestamp 2026-01-01T10:00:00Z"},
		{"an openb CSV with a malformed row names the file and line", []string{"replay", "--openb-nodes", nodesCSV, "--openb-pods", badPods, "--html", html}, badPods + `:3: invalid openb trace: memory_mib: invalid value "ten"`},
		{"an openb departure before its arrival names the file and line", []string{"replay", "--openb-nodes", nodesCSV, "--openb-pods", podsBackwards, "--html", html}, podsBackwards + ":3: invalid openb trace: deletion_time 4 is before creation_time 5"},
		{"a config that fails to load", []string{"replay", "-f", exampleTrace, "-f", exampleCluster, "--config", notAConfig, "--html", html}, "loading config: " + notAConfig},
		{"a config with an unknown plugin names the file", []string{"replay", "-f", exampleCluster, "--config", badConfig, "--html", html}, badConfig + ": "},
		{"compare: a config with an unknown plugin names the file", []string{"compare", "-f", exampleCluster, "--config", exampleConfig, "--config", badConfig}, badConfig + ": "},
		{"compare: a config that fails to load", []string{"compare", "-f", exampleCluster, "--config", notAConfig}, "loading config: " + notAConfig},
		{"compare: a departure before its arrival", []string{"compare", "--replay", "-f", backwards, "--config", exampleConfig}, backwards + ":6: Pod default/p1: invalid trace"},
		{"compare without --config", []string{"compare", "-f", exampleCluster}, "--config is required"},
		{"compare: openb flags without --replay", []string{"compare", "--openb-nodes", nodesCSV, "--openb-pods", badPods, "--config", exampleConfig}, "need --replay"},
		{"replay: openb nodes without pods", []string{"replay", "--openb-nodes", nodesCSV}, "--openb-nodes and --openb-pods go together"},
		{"replay without input", []string{"replay"}, "-f/--filename (a cluster dump and trace) or --openb-nodes and --openb-pods are required"},
		{"replay: an unknown output format", []string{"replay", "-f", exampleCluster, "-o", "wide"}, `--output: unknown format "wide"`},
		{"replay: a file for -o gets told to redirect", []string{"replay", "-f", exampleCluster, "-o", "replay.json"}, `--output: unknown format "replay.json" (want one of table, json, yaml, csv); -o is the output format, as in kubectl; to save the output, redirect it: > replay.json`},
		{"replay: an HTML file for -o gets told about --html", []string{"replay", "-f", exampleCluster, "-o", "out/r.html"}, `; the HTML report is written with --html out/r.html`},
		{"replay: -o html gets told about --html", []string{"replay", "-f", exampleCluster, "-o", "html"}, `--output: unknown format "html" (want one of table, json, yaml, csv); the HTML report is written with --html report.html`},
		{"compare: a file for -o gets told to redirect", []string{"compare", "-f", exampleCluster, "--config", exampleConfig, "-o", "out.json"}, `; -o is the output format, as in kubectl; to save the output, redirect it: > out.json`},
		{"replay: a negative --until names it", []string{"replay", "-f", exampleCluster, "--until", "-1h"}, "--until -1h0m0s: must not be negative"},
		{"replay: a negative --wait-window names it", []string{"replay", "-f", exampleCluster, "--wait-window", "-1m"}, "--wait-window -1m0s: must not be negative"},
		{"compare: negative --workers", []string{"compare", "-f", exampleCluster, "--config", exampleConfig, "--workers", "-1"}, "--workers -1: must not be negative (0 is one per core)"},
		{"replay: --html a directory, before the replay", []string{"replay", "-f", exampleCluster, "--html", dir}, "--html " + dir + ": is a directory"},
		{"replay: --html in a missing directory, before the replay", []string{"replay", "-f", exampleCluster, "--html", filepath.Join(dir, "no", "r.html")}, "directory " + filepath.Join(dir, "no") + " does not exist"},
		{"replay: a trace without the nodes it starts on says what to give", []string{"replay", "-f", exampleTrace, "--html", html}, exampleTrace + ": the trace has no node at its start (it starts at 2026-03-02T09:10:00Z, the first pending pod's arrival; the first node arrives at 2026-03-02T09:40:00Z): give the nodes there from the start too, e.g. the cluster dump: -f cluster.yaml -f trace.yaml"},
		{"compare: a trace without the nodes it starts on", []string{"compare", "--replay", "-f", exampleTrace, "--config", exampleConfig}, "the trace has no node at its start"},
		{"replay: a missing openb file", []string{"replay", "--openb-nodes", filepath.Join(dir, "nope.csv"), "--openb-pods", badPods}, "nope.csv: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != 2 {
				t.Errorf("exit code = %d, want 2 (stderr %q)", code, stderr)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "error: ") || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("stderr = %q, want one line containing %q", stderr, tt.wantErr)
			}
			if _, err := os.Stat(html); err == nil {
				t.Errorf("%s was written despite the error", html)
			}
		})
	}
}

func TestReplayHTMLDoesNotOverwriteOnFailure(t *testing.T) {
	dir := t.TempDir()
	html := filepath.Join(dir, "report.html")
	if err := os.WriteFile(html, []byte("earlier report"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := run(t, "", "replay", "-f", exampleCluster, "--config", filepath.Join(dir, "missing.yaml"), "--html", html); code != 2 {
		t.Fatalf("exit code %d, want 2", code)
	}
	if b, _ := os.ReadFile(html); string(b) != "earlier report" {
		t.Errorf("the earlier report was overwritten: %.40q", b)
	}
	if code, _, stderr := run(t, "", "replay", "-f", exampleCluster, "-f", exampleTrace, "--until", "10m", "--html", html); code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(html); !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Errorf("the report was not written: %.40q", b)
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// TestReplayHTMLIsWrittenAsTheShellWould: --html through a symbolic link
// writes the link's target and keeps the link, and an existing report
// keeps its mode (replay used to rename a new file over the link).
func TestReplayHTMLIsWrittenAsTheShellWould(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "reports", "r.html")
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "latest.html")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(t, "", "replay", "-f", exampleCluster, "-f", exampleTrace, "--until", "10m", "--html", link); code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("%s is no longer a symbolic link: %v", link, err)
	}
	fi, err := os.Stat(target)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); !strings.HasPrefix(string(b), "<!DOCTYPE html>") {
		t.Errorf("the link's target was not written: %.40q", b)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the report's mode is %v, want the old file's 0600", fi.Mode().Perm())
	}
}
