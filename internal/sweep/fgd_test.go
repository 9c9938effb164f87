package sweep

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/fgd"
)

// fgdData is internal/fgd's small openb trace.
var fgdData, _ = filepath.Abs("../fgd/testdata")

const fgdStudy = `verb: replay
axes:
  traces:
  - name: small
    openbNodes: {{fgd}}/nodes.csv
    openbPods: {{fgd}}/pods.csv
    fgdTune: 1.3
  configs:
  - name: fgd
    fgdPolicy: FGD
  - name: bestfit
    fgdPolicy: BestFit
  - name: own
    file: own.yaml
  seeds: [42, 43]
`

// TestFGDCellsAreTheArtifactsExperiment checks that a cell of an FGD trace
// records what internal/fgd's own run of that policy and seed measures
// (the runs behind make fgd), with a policy given by name or as a file.
func TestFGDCellsAreTheArtifactsExperiment(t *testing.T) {
	dir := t.TempDir()
	tr, err := fgd.LoadTrace(filepath.Join(fgdData, "nodes.csv"), filepath.Join(fgdData, "pods.csv"))
	if err != nil {
		t.Fatal(err)
	}
	bestFit, err := fgd.PolicyByName(tr, "BestFit")
	if err != nil {
		t.Fatal(err)
	}
	// The file configuration is BestFit's: its cells equal bestfit's.
	if err := os.WriteFile(filepath.Join(dir, "own.yaml"), []byte(bestFit.Config), 0o644); err != nil {
		t.Fatal(err)
	}
	path := writeStudy(t, dir, strings.ReplaceAll(fgdStudy, "{{fgd}}", fgdData))
	p := plan(t, path)
	if len(p.Cells) != 6 {
		t.Fatalf("%d cells, want 6", len(p.Cells))
	}
	results := filepath.Join(dir, "results")
	if _, err := p.Run(context.Background(), RunOptions{Dir: results, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	m, err := p.Merge(results)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*FGDRecord{}
	for _, c := range m.Cells {
		var rec ReplayRecord
		if err := json.Unmarshal(c.Result, &rec); err != nil {
			t.Fatal(err)
		}
		if rec.FGD == nil || len(rec.FGD.Alloc) != fgd.MaxPct+1 {
			t.Fatalf("cell %s: no FGD curves: %s", c.ID, c.Result)
		}
		measured := 0
		for _, v := range rec.FGD.Alloc {
			if v != nil {
				measured++
			}
		}
		if measured < 40 || rec.FGD.Placed == 0 {
			t.Errorf("cell %s: %d pods placed, %d points measured: too few for the comparison to mean anything", c.ID, rec.FGD.Placed, measured)
		}
		if rec.Summary.Placed != rec.FGD.Placed {
			t.Errorf("cell %s: summary placed %d, fgd placed %d", c.ID, rec.Summary.Placed, rec.FGD.Placed)
		}
		got[c.ID] = rec.FGD
	}
	for _, tt := range []struct {
		policy string
		seed   int64
		cells  []string
	}{
		{"FGD", 42, []string{"small_fgd_default_seed42"}},
		{"FGD", 43, []string{"small_fgd_default_seed43"}},
		{"BestFit", 42, []string{"small_bestfit_default_seed42", "small_own_default_seed42"}},
		{"BestFit", 43, []string{"small_bestfit_default_seed43", "small_own_default_seed43"}},
	} {
		pol, err := fgd.PolicyByName(tr, tt.policy)
		if err != nil {
			t.Fatal(err)
		}
		run, err := fgd.RunOne(context.Background(), tr, pol, tt.seed, 1.3, 1)
		if err != nil {
			t.Fatal(err)
		}
		want := fgdRecord(run)
		for _, id := range tt.cells {
			g := got[id]
			if g == nil {
				t.Fatalf("no cell %s", id)
			}
			if g.Pods != want.Pods || g.Placed != want.Placed || g.Failed != want.Failed {
				t.Errorf("cell %s: pods %d placed %d failed %d, want %d %d %d", id, g.Pods, g.Placed, g.Failed, want.Pods, want.Placed, want.Failed)
			}
			for x := range want.Alloc {
				if !sameNum(g.Alloc[x], want.Alloc[x]) || !sameNum(g.Frag[x], want.Frag[x]) {
					t.Errorf("cell %s at %d%%: alloc %v frag %v, want %v %v", id, x, num(g.Alloc[x]), num(g.Frag[x]), num(want.Alloc[x]), num(want.Frag[x]))
					break
				}
			}
		}
	}
}

func sameNum(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func num(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

func TestBadFGDStudiesNameTheField(t *testing.T) {
	trace := "  traces: [{name: s, openbNodes: {{fgd}}/nodes.csv, openbPods: {{fgd}}/pods.csv, fgdTune: 1.3}]\n"
	tests := []struct {
		name  string
		study string
		want  string
	}{
		{"no seeds", "verb: replay\naxes:\n" + trace + "  configs: [{name: f, fgdPolicy: FGD}]\n", "axes.traces[0].fgdTune: needs seeds"},
		{"a tune out of range", "verb: replay\naxes:\n  traces: [{name: s, openbNodes: a.csv, openbPods: b.csv, fgdTune: -1}]\n  seeds: [42]\n", "axes.traces[0].fgdTune: -1 is not a ratio"},
		{"a tune with files", "verb: replay\naxes:\n  traces: [{name: s, files: [x], openbNodes: a.csv, openbPods: b.csv, fgdTune: 1.3}]\n  seeds: [42]\n", "axes.traces[0].fgdTune: goes with openbNodes and openbPods alone"},
		{"series of an FGD trace", "verb: replay\nrecord: [series]\naxes:\n" + trace + "  seeds: [42]\n", "axes.traces[0].fgdTune: records the artifact's curves"},
		{"an unknown policy", "verb: replay\naxes:\n" + trace + "  configs: [{name: f, fgdPolicy: Best}]\n  seeds: [42]\n", `axes.configs[0] (f).fgdPolicy: unknown FGD policy "Best" (known: Random, DotProd, GpuClustering, GpuPacking, BestFit, FGD, kube-default/GpuShare, kube-default/DRA)`},
		{"a policy and a file", "verb: replay\naxes:\n" + trace + "  configs: [{name: f, fgdPolicy: FGD, file: x.yaml}]\n  seeds: [42]\n", "axes.configs[0]: file and fgdPolicy are exclusive"},
		{"a policy for another trace", "verb: replay\naxes:\n  traces: [{name: t, files: [\"{{ex}}/cluster.yaml\"]}]\n  configs: [{name: f, fgdPolicy: FGD}]\n", "axes.configs[0].fgdPolicy: is built for the FGD artifact's traces, and axes.traces[0] (t) has no fgdTune"},
		{"kube's defaults without GpuShare", "verb: replay\naxes:\n" + trace + "  seeds: [42]\n", "axes.configs[0] (default): axes.traces[0] (s) is the FGD artifact's experiment, which needs the GpuShare plugin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeStudy(t, dir, strings.ReplaceAll(tt.study, "{{fgd}}", fgdData))
			s, err := ReadStudy(path)
			if err == nil {
				_, err = Prepare(path, s, nil)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !IsInput(err) || !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one bad-input line naming %s and containing %q", err, path, tt.want)
			}
		})
	}
}

// TestFGDConfigFileNeedsGpuShareInTheDefaultProfile: the check asks the
// profiles as built. GpuShare in another profile than the one the trace's
// pods go to is refused before anything runs.
func TestFGDConfigFileNeedsGpuShareInTheDefaultProfile(t *testing.T) {
	dir := t.TempDir()
	cfg := `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: gpu
  plugins:
    multiPoint:
      enabled:
      - name: GpuShare
`
	if err := os.WriteFile(filepath.Join(dir, "other.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	study := "verb: replay\naxes:\n  traces: [{name: s, openbNodes: {{fgd}}/nodes.csv, openbPods: {{fgd}}/pods.csv, fgdTune: 1.3}]\n  configs: [{name: other, file: other.yaml}]\n  seeds: [42]\n"
	path := writeStudy(t, dir, strings.ReplaceAll(study, "{{fgd}}", fgdData))
	s, err := ReadStudy(path)
	if err == nil {
		_, err = Prepare(path, s, nil)
	}
	want := "axes.configs[0] (other): axes.traces[0] (s) is the FGD artifact's experiment, which needs the GpuShare plugin in the default-scheduler profile"
	if err == nil || !IsInput(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want a bad-input error containing %q", err, want)
	}
}
