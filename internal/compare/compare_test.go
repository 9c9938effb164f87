package compare_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kubectl-sched/kubectl-sched/internal/compare"
	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

func configs(t *testing.T) []compare.Config {
	t.Helper()
	var out []compare.Config
	for _, c := range []struct{ name, path string }{{"default", ""}, {"sched-config", "../../examples/sched-config.yaml"}} {
		cfg, err := engine.LoadConfig(c.path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, compare.Config{Name: c.name, Path: c.path, Config: cfg})
	}
	return out
}

func load(t *testing.T) *snapshot.Cluster {
	t.Helper()
	cl, err := snapshot.LoadPaths([]string{"../../examples/cluster.yaml"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// timing drops what differs between two runs of the same thing.
var timing = cmpopts.IgnoreFields(report.Summary{}, "DurationSeconds", "PodsPerSecond")

func TestCompareRunsEqualTheirDryRuns(t *testing.T) {
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	cl := load(t)
	cfgs := configs(t)
	for _, seed := range []bool{false, true} {
		o := compare.Options{Registry: reg, Seed: 3, UseSeed: seed, Workers: 2}
		res, err := compare.DryRuns(context.Background(), cl, cfgs, o)
		if err != nil {
			t.Fatal(err)
		}
		for i, run := range res.Runs {
			want, err := dryrun.Run(context.Background(), load(t), dryrun.Options{Config: cfgs[i].Config, Registry: reg, Seed: 3, UseSeed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, run.Result, timing); diff != "" {
				t.Errorf("seed %v: run %s differs from its dry-run (-dryrun +compare):\n%s", seed, run.Name, diff)
			}
		}
		if len(res.Diff.Runs) != 1 || len(res.Diff.Runs[0].Moved) == 0 {
			t.Errorf("seed %v: MostAllocated must move some pods: %+v", seed, res.Diff)
		}
	}
}

func TestCompareReplaysEqualTheirReplays(t *testing.T) {
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := replay.FromCluster(load(t))
	if err != nil {
		t.Fatal(err)
	}
	cfgs := configs(t)
	res, err := compare.Replays(context.Background(), tr, cfgs, compare.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	for i, run := range res.Runs {
		want, err := replay.Run(context.Background(), tr, replay.Options{Options: engine.Options{Config: cfgs[i].Config, Registry: reg}})
		if err != nil {
			t.Fatal(err)
		}
		got := run.Result.(*replay.Result)
		if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(replay.Summary{}, "DurationSeconds")); diff != "" {
			t.Errorf("run %s differs from its replay (-replay +compare):\n%s", run.Name, diff)
		}
		if run.Stats.WaitP50Seconds == nil || run.Stats.Placed != got.Summary.Placed {
			t.Errorf("run %s stats %+v do not sum up its replay", run.Name, run.Stats)
		}
	}
}

func TestCompareJSONHasTheDocumentedShape(t *testing.T) {
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compare.DryRuns(context.Background(), load(t), configs(t), compare.Options{Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Name   string          `json:"name"`
			Config string          `json:"config"`
			Result json.RawMessage `json:"result"`
		} `json:"runs"`
		Diff struct {
			Baseline string `json:"baseline"`
			Runs     []struct {
				Run   string `json:"run"`
				Moved []struct {
					Pod, From, To string
				} `json:"moved"`
			} `json:"runs"`
		} `json:"diff"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Runs) != 2 || doc.Runs[1].Config != "../../examples/sched-config.yaml" || doc.Diff.Baseline != "default" || doc.Diff.Runs[0].Run != "sched-config" {
		t.Errorf("unexpected document: %s", b)
	}
	var dr report.DryRun
	if err := json.Unmarshal(doc.Runs[0].Result, &dr); err != nil || len(dr.Placements) == 0 {
		t.Errorf("runs[0].result is not a dry-run document: %v", err)
	}
}
