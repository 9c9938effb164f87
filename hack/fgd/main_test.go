package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/fgd"
)

func TestConfigsAreWrittenAndLoad(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-configs", dir, "-nodes", "../../testdata/openb/openb_node_list_all_node.csv", "-pods", "../../testdata/openb/openb_pod_list_default.csv"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) != 7 {
		t.Fatalf("got %d configurations, want 7: %v", len(files), files)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fgd.LoadConfig(string(data)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestFromSavedRows(t *testing.T) {
	dir := t.TempDir()
	rows := filepath.Join(dir, "rows.json")
	curve := make([]float64, fgd.MaxPct+1)
	b, _ := json.Marshal(map[string]any{"rows": []fgd.Row{{Policy: "FGD", Seeds: 10, AllocAt100: 95.2, AllocAt130: 95.38, UnallocatedGPUsAt130: 287, FragAt130: 4.58, Curve: curve}}})
	if err := os.WriteFile(rows, b, 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(dir, "alloc.svg")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-from", rows, "-svg", svg}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "95.38") || !strings.Contains(stdout.String(), "95.39") {
		t.Errorf("table without ours and the paper's FGD at 130%%:\n%s", stdout.String())
	}
	if data, err := os.ReadFile(svg); err != nil || !bytes.HasPrefix(data, []byte("<svg")) {
		t.Errorf("svg: %v %q", err, data[:min(len(data), 20)])
	}
}

func TestBadUsage(t *testing.T) {
	for _, args := range [][]string{{"-from", "nope.json"}, {"-nodes", "nope.csv"}, {"-bogus"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q; want 2 and nothing", args, code, stdout.String())
		}
	}
}
