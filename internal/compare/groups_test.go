package compare_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/compare"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestComparePodGroups: with GenericWorkload on, each run counts its
// PodGroups (scheduled, with members pending) from its own dry-run or
// replay, and the table shows them; with the gate off nothing is counted.
func TestComparePodGroups(t *testing.T) {
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	on := schedcore.DefaultFeatures
	on.GenericWorkload = true
	cfgsFor := func(f schedcore.Features) []compare.Config {
		var out []compare.Config
		for _, c := range []struct{ name, path string }{{"default", ""}, {"sched-config", "../../examples/sched-config.yaml"}} {
			cfg, err := engine.LoadConfigWithFeatures(c.path, f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, compare.Config{Name: c.name, Path: c.path, Config: cfg})
		}
		return out
	}
	cl, err := snapshot.LoadPaths([]string{"../../examples/gang-trace.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := replay.FromCluster(cl)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		features schedcore.Features
		want     *report.CompareGroupStats
	}{
		{"gate on", on, &report.CompareGroupStats{Groups: 3, Scheduled: 3}},
		{"gate off", schedcore.DefaultFeatures, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfgs := cfgsFor(tc.features)
			res, err := compare.Replays(context.Background(), tr, cfgs, compare.Options{Registry: reg, Features: tc.features})
			if err != nil {
				t.Fatal(err)
			}
			for _, run := range res.Runs {
				if d := cmp.Diff(tc.want, run.Stats.PodGroups); d != "" {
					t.Errorf("run %s groups (-want +got):\n%s", run.Name, d)
				}
			}
			var b strings.Builder
			if err := report.WriteCompare(&b, res, "table"); err != nil {
				t.Fatal(err)
			}
			if got := strings.Contains(b.String(), "pod groups scheduled              3         3"); got != (tc.want != nil) {
				t.Errorf("table shows the groups: %v, want %v:\n%s", got, tc.want != nil, b.String())
			}
		})
	}
}

// TestCompareDryRunPodGroups: a dry-run's PodGroups are counted from its
// podGroups: testdata/gang/native.yaml has a gang that fits, one held
// short of its minCount and a basic group.
func TestCompareDryRunPodGroups(t *testing.T) {
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	f := schedcore.DefaultFeatures
	f.GenericWorkload = true
	cfg, err := engine.LoadConfigWithFeatures("", f)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := snapshot.LoadPaths([]string{"../../testdata/gang/native.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.DryRuns(context.Background(), cl, []compare.Config{{Name: "default", Config: cfg}}, compare.Options{Registry: reg, Features: f})
	if err != nil {
		t.Fatal(err)
	}
	want := &report.CompareGroupStats{Groups: 3, Scheduled: 2, Pending: 1}
	if d := cmp.Diff(want, res.Runs[0].Stats.PodGroups); d != "" {
		t.Errorf("groups (-want +got):\n%s", d)
	}
}
