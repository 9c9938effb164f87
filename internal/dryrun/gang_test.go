package dryrun

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

var update = flag.Bool("update", false, "rewrite golden files")

const gangDir = "../../testdata/gang"

// runGang dry-runs a scenario of testdata/gang with Coscheduling enabled.
func runGang(t *testing.T, name string) *report.DryRun {
	t.Helper()
	cl, err := snapshot.LoadPaths([]string{filepath.Join(gangDir, name+".yaml")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := engine.LoadConfig(filepath.Join(gangDir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rep, err := Run(ctx, cl, Options{Config: cfg, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	rep.Summary.DurationSeconds, rep.Summary.PodsPerSecond = 0, 0
	return rep
}

// TestGangScenarios compares the dry-run of each gang scenario, as JSON
// and as the wide table, with its golden files
// (testdata/gang/<name>.json, <name>.txt; -update rewrites them).
func TestGangScenarios(t *testing.T) {
	for _, name := range []string{"all-or-nothing", "timeout", "interleaved", "native"} {
		t.Run(name, func(t *testing.T) {
			rep := runGang(t, name)
			js, err := json.MarshalIndent(rep, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			var table bytes.Buffer
			if err := report.WriteDryRun(&table, rep, "wide"); err != nil {
				t.Fatal(err)
			}
			for ext, got := range map[string]string{".json": string(js) + "\n", ".txt": table.String()} {
				path := filepath.Join(gangDir, name+ext)
				if *update {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test ./internal/dryrun -update)", err)
				}
				if d := cmp.Diff(string(want), got); d != "" {
					t.Errorf("%s (-want +got):\n%s", path, d)
				}
			}
		})
	}
}
