package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"an HTML report in a missing directory", []string{"sweep", "-f", good, "--html", filepath.Join(dir, "no", "r.html")}, "--html " + filepath.Join(dir, "no", "r.html") + ": "},
		{"results in a file", []string{"sweep", "-f", good, "--results", good}, "--results " + good + ": not a directory"},
		{"a cell the study lacks", []string{"sweep", "-f", good, "--cell", "1"}, "--cell 1: the study has 1 cells (0 to 0)"},
		{"a share with a report", []string{"sweep", "-f", good, "--cell", "0", "--html", filepath.Join(dir, "r.html")}, "--cell runs a share of the cells and prints nothing"},
		{"collecting before running", []string{"sweep", "-f", good, "--collect"}, "1 of 1 cells have no result in " + filepath.Join(dir, "good.results")},
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
