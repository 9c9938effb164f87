package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
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
	if len(files) != 8 {
		t.Fatalf("got %d configurations, want 8: %v", len(files), files)
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

// TestSweepOnASmallTrace runs the whole program on a small trace (6 GPU
// nodes, 40 pods), 2 seeds: the table on stdout, a progress line as each
// replay ends and a line per run on stderr, and the JSON rows the issue asks for, the kube rows named as
// such.
func TestSweepOnASmallTrace(t *testing.T) {
	out := filepath.Join(t.TempDir(), "rows.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-nodes", "../../internal/fgd/testdata/nodes.csv", "-pods", "../../internal/fgd/testdata/pods.csv", "-seeds", "2", "-json", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var policies []string
	for _, r := range doc.Rows {
		policies = append(policies, r["policy"].(string))
		// With 26 GPUs one 8-GPU pod is 31% of the cluster: no event
		// lands near 130%, and those figures are null.
		for _, k := range []string{"allocAt100", "allocAt130", "unallocatedGPUsAt130", "fragAt130"} {
			v, ok := r[k]
			if _, num := v.(float64); !ok || k == "allocAt100" && !num || k != "allocAt100" && v != nil {
				t.Errorf("%s: %s = %v (present %v), want a number at 100%%, null at 130%%", r["policy"], k, v, ok)
			}
		}
		if !strings.Contains(stdout.String(), r["policy"].(string)) {
			t.Errorf("the table has no row %s:\n%s", r["policy"], stdout.String())
		}
	}
	want := []string{"Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD", fgd.KubeDefaultName, fgd.KubeDRAName}
	if strings.Join(policies, ",") != strings.Join(want, ",") {
		t.Errorf("rows %v, want %v", policies, want)
	}
	for _, p := range want[6:] {
		if !strings.Contains(p, "kube") {
			t.Errorf("kube row %q is not named so", p)
		}
	}
	if n := strings.Count(stderr.String(), " placed, alloc@100 "); n != 2*len(want) {
		t.Errorf("%d run lines, want one per run (%d):\n%s", n, 2*len(want), stderr.String())
	}
	if n := strings.Count(stderr.String(), " replays done, "); n != 2*len(want) {
		t.Errorf("%d progress lines, want one per run (%d):\n%s", n, 2*len(want), stderr.String())
	}
	// The last line says how long the runs took and the most memory held.
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	last := regexp.MustCompile(`^fgd: 16 runs in [0-9.]+s, (peak [0-9.]+ [MG]iB resident|[0-9.]+ [MG]iB held at the end)$`)
	if !last.MatchString(lines[len(lines)-1]) {
		t.Errorf("last line %q, want it to match %s", lines[len(lines)-1], last)
	}
}

func TestBadMemLimitIsBadUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-memlimit", "lots", "-nodes", "../../internal/fgd/testdata/nodes.csv", "-pods", "../../internal/fgd/testdata/pods.csv"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), `-memlimit "lots"`) {
		t.Errorf("exit %d, stderr %q; want 2 naming the flag", code, stderr.String())
	}
}

// TestDRARowFromASeed runs the DRA row alone from seed 44: one run, of
// that seed, with its fragmentation measured from the claims' devices.
func TestDRARowFromASeed(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-nodes", "../../internal/fgd/testdata/nodes.csv", "-pods", "../../internal/fgd/testdata/pods.csv", "-policy", fgd.KubeDRAName, "-first-seed", "44", "-seeds", "1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if n := strings.Count(stderr.String(), " placed, alloc@100 "); n != 1 || !strings.Contains(stderr.String(), fgd.KubeDRAName+"       seed 44: ") {
		t.Errorf("want one run line, of seed 44:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), fgd.KubeDRAName) {
		t.Errorf("the table has no DRA row:\n%s", stdout.String())
	}
}

func TestDump(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-nodes", "../../internal/fgd/testdata/nodes.csv", "-pods", "../../internal/fgd/testdata/pods.csv", "-seeds", "1", "-dump", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for name, kinds := range map[string][]string{
		"seed-42.json":     {"Namespace", "Node", "Pod"},
		"seed-42-dra.json": {"Namespace", "DeviceClass", "ResourceSlice", "ResourceClaimTemplate", "Node", "Pod"},
	} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var list struct{ Items []struct{ Kind string } }
		if err := json.Unmarshal(data, &list); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []string
		for _, it := range list.Items {
			if len(got) == 0 || got[len(got)-1] != it.Kind {
				got = append(got, it.Kind)
			}
		}
		if strings.Join(got, ",") != strings.Join(kinds, ",") {
			t.Errorf("%s: kinds %v, want %v", name, got, kinds)
		}
	}
}

func TestBadUsage(t *testing.T) {
	for _, args := range [][]string{{"-from", "nope.json"}, {"-nodes", "nope.csv"}, {"-bogus"}, {"-policy", "FGD,Nope"}} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stdout %q; want 2 and nothing", args, code, stdout.String())
		}
	}
}
