package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// examples is the repository's examples directory.
var examples, _ = filepath.Abs("../../examples")

// writeStudy writes a study file in dir, its paths made absolute against
// the examples directory with {{ex}}.
func writeStudy(t *testing.T, dir, text string) string {
	t.Helper()
	p := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, "{{ex}}", examples)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// smallStudy is two configurations by three seeds on the first hour of the
// example trace: six cells.
const smallStudy = `verb: replay
until: 1h
axes:
  traces:
  - name: example
    files: ["{{ex}}/cluster.yaml", "{{ex}}/trace.yaml"]
  configs:
  - name: default
  - name: binpack
    file: sched-config.yaml
  seeds: [1, 2, 3]
record: [summary, series]
`

// studyDir is a directory with the small study and a copy of the
// bin-packing configuration beside it (a test may change it).
func studyDir(t *testing.T) (dir, study string) {
	t.Helper()
	dir = t.TempDir()
	cfg, err := os.ReadFile(filepath.Join(examples, "sched-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sched-config.yaml"), cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, writeStudy(t, dir, smallStudy)
}

func plan(t *testing.T, path string) *Plan {
	t.Helper()
	s, err := ReadStudy(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(path, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mergedJSON(t *testing.T, p *Plan, dir string) []byte {
	t.Helper()
	m, err := p.Merge(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCellsComeInTheStudysOrderWithStableIDs(t *testing.T) {
	_, path := studyDir(t)
	p := plan(t, path)
	var got []string
	for i, c := range p.Cells {
		if c.Index != i {
			t.Errorf("cell %s: index %d, want %d", c.ID, c.Index, i)
		}
		got = append(got, c.ID)
	}
	want := []string{
		"example_default_default_seed1", "example_default_default_seed2", "example_default_default_seed3",
		"example_binpack_default_seed1", "example_binpack_default_seed2", "example_binpack_default_seed3",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cells (-want +got):\n%s", diff)
	}
	again := plan(t, path)
	for i := range p.Cells {
		if p.Cells[i].Hash != again.Cells[i].Hash {
			t.Errorf("cell %s: the hash changed between two reads of the same study", p.Cells[i].ID)
		}
	}
}

func TestMergedResultDoesNotDependOnWorkers(t *testing.T) {
	_, path := studyDir(t)
	p := plan(t, path)
	var got [][]byte
	for _, workers := range []int{1, 2} {
		dir := t.TempDir()
		st, err := p.Run(context.Background(), RunOptions{Dir: dir, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if st.Ran != len(p.Cells) {
			t.Errorf("workers %d: ran %d cells, want %d", workers, st.Ran, len(p.Cells))
		}
		got = append(got, mergedJSON(t, p, dir))
	}
	if !bytes.Equal(got[0], got[1]) {
		t.Errorf("merged JSON differs between 1 and 2 workers (-1 +2):\n%s", cmp.Diff(string(got[0]), string(got[1])))
	}
}

func TestAnInterruptedSweepResumedGivesTheUninterruptedResult(t *testing.T) {
	_, path := studyDir(t)
	p := plan(t, path)
	whole := t.TempDir()
	if _, err := p.Run(context.Background(), RunOptions{Dir: whole, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	want := mergedJSON(t, p, whole)

	for _, k := range []int{1, 3, 5} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		done := 0
		_, err := p.Run(ctx, RunOptions{Dir: dir, Workers: 1, CellDone: func(Cell) {
			done++
			if done == k {
				cancel()
			}
		}})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("k=%d: the interrupted run returned %v, want context.Canceled", k, err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		if len(files) < k || len(files) == len(p.Cells) {
			t.Fatalf("k=%d: %d results after the interruption, want at least %d and fewer than %d", k, len(files), k, len(p.Cells))
		}
		if _, err := p.Merge(dir); err == nil {
			t.Errorf("k=%d: merging an unfinished sweep succeeded", k)
		}
		st, err := p.Run(context.Background(), RunOptions{Dir: dir, Workers: 2, Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		if st.Kept != len(files) || st.Ran != len(p.Cells)-len(files) {
			t.Errorf("k=%d: resumed run kept %d and ran %d, want %d and %d", k, st.Kept, st.Ran, len(files), len(p.Cells)-len(files))
		}
		if got := mergedJSON(t, p, dir); !bytes.Equal(want, got) {
			t.Errorf("k=%d: resumed result differs from the uninterrupted one (-want +got):\n%s", k, cmp.Diff(string(want), string(got)))
		}
	}
}

func TestFinishedResultsAreNeverOverwrittenNorReusedWhenStale(t *testing.T) {
	dir, path := studyDir(t)
	results := filepath.Join(dir, "results")
	p := plan(t, path)
	if _, err := p.Run(context.Background(), RunOptions{Dir: results, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	first := filepath.Join(results, p.Cells[0].ID+".json")
	before, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}

	// Without --resume, nothing runs.
	if _, err := p.Run(context.Background(), RunOptions{Dir: results}); !IsInput(err) || !strings.Contains(err.Error(), "exists: --resume keeps finished cells") {
		t.Errorf("a second run without resume: %v, want a bad-input error naming the existing result", err)
	}
	// With it, nothing runs either: every cell is done.
	if st, err := p.Run(context.Background(), RunOptions{Dir: results, Resume: true}); err != nil || st.Ran != 0 || st.Kept != len(p.Cells) {
		t.Errorf("resuming a finished sweep: %+v, %v; want nothing run", st, err)
	}

	tests := []struct {
		name   string
		change func(t *testing.T)
		cell   string
	}{
		{"the study's until changes every cell", func(t *testing.T) {
			writeStudy(t, dir, strings.Replace(smallStudy, "until: 1h", "until: 2h", 1))
		}, "example_default_default_seed1"},
		{"a configuration file's contents change its cells", func(t *testing.T) {
			writeStudy(t, dir, smallStudy)
			f, err := os.OpenFile(filepath.Join(dir, "sched-config.yaml"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString("# changed\n"); err != nil {
				t.Fatal(err)
			}
		}, "example_binpack_default_seed1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change(t)
			changed := plan(t, path)
			_, err := changed.Run(context.Background(), RunOptions{Dir: results, Resume: true})
			if !IsInput(err) || !strings.Contains(err.Error(), "cell "+tt.cell+": ") || !strings.Contains(err.Error(), "another definition of this cell") {
				t.Errorf("resuming with stale results: %v, want a bad-input error naming cell %s", err, tt.cell)
			}
			if _, err := changed.Merge(results); !IsInput(err) {
				t.Errorf("merging stale results: %v, want a bad-input error", err)
			}
		})
	}
	after, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("a finished result was rewritten")
	}
}

func TestBadStudiesNameTheFieldBeforeAnythingRuns(t *testing.T) {
	tests := []struct {
		name  string
		study string
		want  string
	}{
		{"an unknown axis", "verb: replay\naxes:\n  traces: [{name: t, files: [\"{{ex}}/cluster.yaml\"]}]\n  schedulers: [a]\n", `parsing study: unknown field "schedulers"`},
		{"an unknown verb", "verb: explain\naxes:\n  traces: [{name: t, files: [x]}]\n", `verb: "explain" is not supported (replay, dryrun or capacity)`},
		{"no verb", "axes:\n  traces: [{name: t, files: [x]}]\n", "verb: required"},
		{"no traces", "verb: replay\naxes: {}\n", "axes.traces: at least one trace is required"},
		{"a name that cannot name a file", "verb: replay\naxes:\n  traces: [{name: My_Trace, files: [x]}]\n", `axes.traces[0].name: "My_Trace" must be`},
		{"a name given twice", "verb: replay\naxes:\n  traces: [{name: t, files: [\"{{ex}}/cluster.yaml\"]}]\n  configs: [{name: a}, {name: a}]\n", `axes.configs[1].name: "a" is named twice`},
		{"a seed given twice", "verb: replay\naxes:\n  traces: [{name: t, files: [x]}]\n  seeds: [1, 1]\n", "axes.seeds[1]: 1 is given twice"},
		{"a bad until", "verb: replay\nuntil: soon\naxes:\n  traces: [{name: t, files: [x]}]\n", `until: "soon" is not a duration`},
		{"an unknown record", "verb: replay\nrecord: [everything]\naxes:\n  traces: [{name: t, files: [x]}]\n", `record[0]: unknown "everything"`},
		{"a missing trace file", "verb: replay\naxes:\n  traces: [{name: t, files: [nope.yaml]}]\n", "axes.traces[0] (t): "},
		{"a trace without nodes at its start", "verb: replay\naxes:\n  traces: [{name: t, files: [\"{{ex}}/trace.yaml\"]}]\n", "axes.traces[0] (t): the trace has no node at its start"},
		{"a missing configuration", "verb: replay\naxes:\n  traces: [{name: t, files: [\"{{ex}}/cluster.yaml\", \"{{ex}}/trace.yaml\"]}]\n  configs: [{name: a}, {name: b, file: nope.yaml}]\n", "axes.configs[1] (b): loading config nope.yaml: no such file or directory"},
		{"a configuration naming an unknown plugin", "verb: replay\naxes:\n  traces: [{name: t, files: [\"{{ex}}/cluster.yaml\", \"{{ex}}/trace.yaml\"]}]\n  configs: [{name: b, file: bad.yaml}]\n", "axes.configs[0] (b): bad.yaml: "},
		{"an unknown feature gate", "verb: replay\naxes:\n  traces: [{name: t, files: [\"{{ex}}/cluster.yaml\", \"{{ex}}/trace.yaml\"]}]\n  featureGates: [{name: g, gates: {NoSuchGate: true}}]\n", `axes.featureGates[0] (g): unrecognized feature gate: NoSuchGate`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bad := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins:\n    score:\n      enabled: [{name: NoSuchPlugin}]\n"
			if err := os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
			path := writeStudy(t, dir, tt.study)
			s, err := ReadStudy(path)
			if err == nil {
				_, err = Prepare(path, s, nil)
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !IsInput(err) {
				t.Errorf("%v: not marked as bad input", err)
			}
			if !strings.HasPrefix(err.Error(), path+": ") || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q: want one line naming %s and containing %q", err, path, tt.want)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 2 {
				t.Errorf("the directory holds %d entries, want only the study and bad.yaml", len(entries))
			}
		})
	}
}

func TestRunOnlyRunsTheCellsAsked(t *testing.T) {
	_, path := studyDir(t)
	p := plan(t, path)
	dir := t.TempDir()
	st, err := p.Run(context.Background(), RunOptions{Dir: dir, Only: []int{4}})
	if err != nil || st.Ran != 1 {
		t.Fatalf("run of cell 4: %+v, %v", st, err)
	}
	if _, err := os.Stat(ResultPath(dir, p.Cells[4])); err != nil {
		t.Error(err)
	}
	if _, err := p.Run(context.Background(), RunOptions{Dir: dir, Only: []int{6}}); !IsInput(err) {
		t.Errorf("cell 6 of 6: %v, want a bad-input error", err)
	}
}

func TestProgressCountsCellsAndTicksWhileTheyRun(t *testing.T) {
	_, path := studyDir(t)
	p := plan(t, path)
	var calls [][2]int
	var ticks atomic.Int64
	_, err := p.Run(context.Background(), RunOptions{Dir: t.TempDir(), Workers: 2, Only: []int{0, 1, 2},
		Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) },
		Tick:     func() { ticks.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][2]int{{0, 3}, {1, 3}, {2, 3}, {3, 3}}, calls); diff != "" {
		t.Errorf("progress calls (-want +got):\n%s", diff)
	}
	if ticks.Load() == 0 {
		t.Error("no tick while the cells ran")
	}
}
