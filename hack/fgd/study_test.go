package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/fgd"
	"github.com/kubectl-sched/kubectl-sched/internal/sweep"
)

// TestStudyComparison sweeps the six paper policies over two seeds of the
// small trace, named as the artifact's default workload, and checks the
// comparison against the means and differences worked out here from the
// merged cells and the artifact's expected results.
func TestStudyComparison(t *testing.T) {
	dir := t.TempDir()
	for src, dst := range map[string]string{"nodes.csv": "nodes.csv", "pods.csv": "openb_pod_list_default.csv"} {
		data, err := os.ReadFile(filepath.Join("../../internal/fgd/testdata", src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	study := `verb: replay
axes:
  traces: [{name: default, openbNodes: nodes.csv, openbPods: openb_pod_list_default.csv, fgdTune: 1.3}]
  configs:
  - {name: random, fgdPolicy: Random}
  - {name: dotprod, fgdPolicy: DotProd}
  - {name: gpuclustering, fgdPolicy: GpuClustering}
  - {name: gpupacking, fgdPolicy: GpuPacking}
  - {name: bestfit, fgdPolicy: BestFit}
  - {name: fgd, fgdPolicy: FGD}
  - {name: kube, fgdPolicy: kube-default/GpuShare}
  seeds: [42, 43]
`
	path := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(path, []byte(study), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := sweep.ReadStudy(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sweep.Prepare(path, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "study.results")
	if _, err := p.Run(context.Background(), sweep.RunOptions{Dir: results}); err != nil {
		t.Fatal(err)
	}
	rows, err := compareStudy(path, "")
	if err != nil {
		t.Fatal(err)
	}
	// The kube row is not one of the artifact's: left out.
	if len(rows) != 6 {
		t.Fatalf("%d rows, want the 6 paper policies", len(rows))
	}
	paper, err := fgd.LoadExpected("openb_pod_list_default")
	if err != nil {
		t.Fatal(err)
	}
	m, err := p.Merge(results)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows {
		want := fgd.PaperPolicies[i].Name
		if r.Workload != "openb_pod_list_default" || r.Policy != want || r.Seeds != 2 {
			t.Errorf("row %d: %s %s %d seeds, want openb_pod_list_default %s 2", i, r.Workload, r.Policy, r.Seeds, want)
		}
		// Our mean and the largest difference, from the cells.
		var maxDiff float64
		measured := 0
		for x := 0; x <= fgd.MaxPct; x++ {
			var sum float64
			n := 0
			for _, c := range m.Cells {
				if c.Axes.Config != strings.ToLower(want) {
					continue
				}
				var rec sweep.ReplayRecord
				if err := json.Unmarshal(c.Result, &rec); err != nil {
					t.Fatal(err)
				}
				if v := rec.FGD.Alloc[x]; v != nil {
					sum += *v
					n++
				}
			}
			if n == 0 {
				if !math.IsNaN(r.Ours[x]) {
					t.Errorf("%s at %d%%: %v, want none", want, x, r.Ours[x])
				}
				continue
			}
			measured++
			if mean := sum / float64(n); math.Abs(mean-r.Ours[x]) > 1e-9 {
				t.Errorf("%s at %d%%: mean %v, want %v", want, x, r.Ours[x], mean)
			}
			if d := math.Abs(sum/float64(n) - paper.Alloc[want][x]); d > maxDiff {
				maxDiff = d
			}
		}
		if measured < 40 {
			t.Errorf("%s: %d points measured, too few", want, measured)
		}
		if math.Abs(r.MaxDiff-maxDiff) > 1e-9 || math.Abs(math.Abs(r.Ours[r.MaxAt]-paper.Alloc[want][r.MaxAt])-maxDiff) > 1e-9 {
			t.Errorf("%s: max difference %v at %d%%, want %v", want, r.MaxDiff, r.MaxAt, maxDiff)
		}
	}
	var out bytes.Buffer
	printStudy(&out, rows)
	if !regexp.MustCompile(`(?m)^\d+ of 6 workload × policy curves within 1\.0 point .*; the worst: default \S+, [0-9.]+ points at \d+%`).Match(out.Bytes()) {
		t.Errorf("no summary line:\n%s", out.String())
	}
	// A study whose cells have no results yet: one line, exit 2.
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-study", "../../examples/study.yaml", "-results", t.TempDir()}, &stdout, &stderr); code != 2 || stdout.Len() > 0 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), "have no result") {
		t.Errorf("a study without results: exit %d, stdout %q, stderr %q; want 2 and one line", code, stdout.String(), stderr.String())
	}
}

// writeFigures draws the bar charts whose workloads the rows have, with
// our unallocated share (100 - allocation at 100%) beside the artifact's,
// and tables of the same numbers.
func TestWriteFigures(t *testing.T) {
	var rows []studyRow
	for i, pol := range fgd.BarPolicies {
		rows = append(rows, studyRow{Workload: "openb_pod_list_gpushare40", Policy: pol, At100: []float64{90 - float64(i), 92 - float64(i)}})
	}
	dir := t.TempDir()
	var out bytes.Buffer
	if err := writeFigures(dir, rows, &out); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.svg"))
	if err != nil || len(files) != 1 || filepath.Base(files[0]) != "openb_gpushare_alloc_bar.svg" {
		t.Fatalf("charts written: %v (%v), want openb_gpushare_alloc_bar.svg alone", files, err)
	}
	paper, err := fgd.ExpectedAt("openb_pod_list_gpushare40", 100)
	if err != nil {
		t.Fatal(err)
	}
	pm, psd := fgd.MeanSD(paper["FGD"])
	// FGD: ours 10 and 8 unallocated: mean 9, sd sqrt(2).
	want := regexp.QuoteMeta("| 40% | 9.00±1.4 / " + pct(100-pm) + "±" + strconv.FormatFloat(psd, 'f', 1, 64) + " |")
	if !regexp.MustCompile(want).MatchString(out.String()) {
		t.Errorf("table lacks %s:\n%s", want, out.String())
	}
}
