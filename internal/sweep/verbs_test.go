package sweep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dryrunStudy dry-runs the example cluster's pending pods with two
// configurations and two seeds: four cells.
const dryrunStudy = `verb: dryrun
axes:
  traces:
  - name: example
    files: ["{{ex}}/cluster.yaml"]
  configs:
  - name: default
  - name: binpack
    file: "{{ex}}/sched-config.yaml"
  seeds: [1, 2]
record: [summary, pending]
`

// capacityStudy counts the example Deployment and, as a second workload,
// two specs with replicas and template nodes, with two configurations.
const capacityStudy = `verb: capacity
axes:
  traces:
  - name: example
    files: ["{{ex}}/cluster.yaml"]
  workloads:
  - name: web
    files: ["{{ex}}/web.yaml"]
  - name: web-new-4-m6i
    files: ["{{ex}}/web.yaml", "{{ex}}/new-pod.yaml"]
    replicas: [200, 0]
    max: 50
    addNodes: 4
    nodeTemplate: "{{ex}}/m6i.yaml"
  configs:
  - name: default
  - name: binpack
    file: "{{ex}}/sched-config.yaml"
`

func TestGoldenVerbStudies(t *testing.T) {
	for _, tc := range []struct {
		verb, study string
		ids         []string
	}{
		{"dryrun", dryrunStudy, []string{"example_default_default_seed1", "example_default_default_seed2", "example_binpack_default_seed1", "example_binpack_default_seed2"}},
		{"capacity", capacityStudy, []string{"example_web_default_default", "example_web_binpack_default", "example_web-new-4-m6i_default_default", "example_web-new-4-m6i_binpack_default"}},
	} {
		t.Run(tc.verb, func(t *testing.T) {
			p := plan(t, writeStudy(t, t.TempDir(), tc.study))
			var ids []string
			for _, c := range p.Cells {
				ids = append(ids, c.ID)
			}
			if diff := cmp.Diff(tc.ids, ids); diff != "" {
				t.Errorf("cells (-want +got):\n%s", diff)
			}
			var merged [][]byte
			for _, workers := range []int{1, 2} {
				dir := t.TempDir()
				if _, err := p.Run(context.Background(), RunOptions{Dir: dir, Workers: workers}); err != nil {
					t.Fatal(err)
				}
				merged = append(merged, mergedJSON(t, p, dir))
				if workers == 1 {
					continue
				}
				m, err := p.Merge(dir)
				if err != nil {
					t.Fatal(err)
				}
				var out bytes.Buffer
				for _, format := range []string{"table", "csv"} {
					if err := WriteSweep(&out, m, format); err != nil {
						t.Fatal(err)
					}
				}
				golden(t, "sweep-"+tc.verb+".txt", out.Bytes())
				if err := WriteSweepHTML(&bytes.Buffer{}, m); err == nil || !strings.Contains(err.Error(), "a "+tc.verb+" study has none") {
					t.Errorf("the HTML report of a %s study: %v, want a refusal", tc.verb, err)
				}
			}
			if !bytes.Equal(merged[0], merged[1]) {
				t.Errorf("merged JSON differs between 1 and 2 workers (-1 +2):\n%s", cmp.Diff(string(merged[0]), string(merged[1])))
			}
		})
	}
}

func TestDryRunCellsRecordWhatTheStudyAsks(t *testing.T) {
	for _, tc := range []struct {
		record string
		want   []string
		absent []string
	}{
		{"[summary]", []string{`"summary"`, `"resources"`, `"nodesUsed"`}, []string{`"placements"`, `"unschedulable": [`, `"nodes": [`}},
		{"[summary, placements, pending, nodes]", []string{`"placements"`, `"unschedulable": [`, `"nodes": [`}, nil},
	} {
		t.Run(tc.record, func(t *testing.T) {
			study := strings.Replace(dryrunStudy, "record: [summary, pending]", "record: "+tc.record, 1)
			p := plan(t, writeStudy(t, t.TempDir(), study))
			dir := t.TempDir()
			if _, err := p.Run(context.Background(), RunOptions{Dir: dir, Only: []int{0}}); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(ResultPath(dir, p.Cells[0]))
			if err != nil {
				t.Fatal(err)
			}
			var pretty bytes.Buffer
			r, _ := ReadResult(dir, p.Cells[0])
			_ = jsonIndent(&pretty, r.Result)
			for _, w := range tc.want {
				if !strings.Contains(pretty.String(), w) {
					t.Errorf("result lacks %s:\n%s", w, data)
				}
			}
			for _, a := range tc.absent {
				if strings.Contains(pretty.String(), a) {
					t.Errorf("result has %s, not recorded", a)
				}
			}
			if strings.Contains(string(data), `"durationSeconds": 0.0`) || !strings.Contains(pretty.String(), `"durationSeconds": 0,`) {
				t.Errorf("the wall time is recorded: a study must give the same bytes")
			}
		})
	}
}

func TestAnInterruptedDryRunSweepResumedGivesTheUninterruptedResult(t *testing.T) {
	p := plan(t, writeStudy(t, t.TempDir(), dryrunStudy))
	whole := t.TempDir()
	if _, err := p.Run(context.Background(), RunOptions{Dir: whole, Workers: 2}); err != nil {
		t.Fatal(err)
	}
	want := mergedJSON(t, p, whole)
	for _, k := range []int{1, 3} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		done := 0
		_, err := p.Run(ctx, RunOptions{Dir: dir, Workers: 1, CellDone: func(Cell) {
			if done++; done == k {
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

func TestVerbCellHashesFollowTheirInputs(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"cluster.yaml", "web.yaml", "m6i.yaml"} {
		data, err := os.ReadFile(filepath.Join(examples, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	study := "verb: capacity\naxes:\n  traces: [{name: t, files: [cluster.yaml]}]\n  workloads:\n  - {name: a, files: [web.yaml]}\n  - {name: b, files: [web.yaml], addNodes: 2, nodeTemplate: m6i.yaml}\n"
	path := writeStudy(t, dir, study)
	before := plan(t, path)
	appendTo := func(name string) {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("# changed\n"); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		change  func()
		changed []bool
	}{
		{func() { appendTo("m6i.yaml") }, []bool{false, true}},
		{func() { appendTo("web.yaml") }, []bool{true, true}},
		{func() { writeStudy(t, dir, strings.Replace(study, "addNodes: 2", "addNodes: 3", 1)) }, []bool{false, true}},
		{func() { appendTo("cluster.yaml") }, []bool{true, true}},
	} {
		tc.change()
		after := plan(t, path)
		for i := range after.Cells {
			if got := after.Cells[i].Hash != before.Cells[i].Hash; got != tc.changed[i] {
				t.Errorf("cell %s: hash changed %v, want %v", after.Cells[i].ID, got, tc.changed[i])
			}
		}
		before = after
	}
}

func TestClusterObjectsCarryTheWorkloads(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"cluster.yaml", "web.yaml", "m6i.yaml"} {
		data, err := os.ReadFile(filepath.Join(examples, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "in"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "in", f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := writeStudy(t, dir, "verb: capacity\naxes:\n  traces: [{name: t, files: [in/cluster.yaml]}]\n  workloads: [{name: w, files: [in/web.yaml], addNodes: 1, nodeTemplate: in/m6i.yaml}]\n")
	objs, err := plan(t, path).ClusterObjects(ClusterOptions{Name: "s", Namespace: "ns", Image: "i"})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, src := range objs.Job.Spec.Template.Spec.Volumes[0].Projected.Sources {
		for _, item := range src.ConfigMap.Items {
			paths = append(paths, item.Path)
		}
	}
	if diff := cmp.Diff([]string{"study.yaml", "in/cluster.yaml", "in/m6i.yaml", "in/web.yaml"}, paths); diff != "" {
		t.Errorf("the study's files in the pods (-want +got):\n%s", diff)
	}
}

func TestBadVerbStudiesNameTheFieldBeforeAnythingRuns(t *testing.T) {
	const dump = `traces: [{name: t, files: ["{{ex}}/cluster.yaml"]}]`
	tests := []struct {
		name  string
		study string
		want  string
	}{
		{"dryrun: the openb CSVs", "verb: dryrun\naxes:\n  traces: [{name: t, openbNodes: n.csv, openbPods: p.csv}]\n", "axes.traces[0]: openbNodes and openbPods go with verb replay"},
		{"dryrun: until", "verb: dryrun\nuntil: 1h\naxes:\n  " + dump + "\n", "until: goes with verb replay, not dryrun"},
		{"dryrun: a replay's record", "verb: dryrun\nrecord: [series]\naxes:\n  " + dump + "\n", `record[0]: unknown "series" for verb dryrun (summary, placements, pending, nodes)`},
		{"dryrun: workloads", "verb: dryrun\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [x]}]\n", "axes.workloads: goes with verb capacity, not dryrun"},
		{"dryrun: a missing dump", "verb: dryrun\naxes:\n  traces: [{name: t, files: [nope.yaml]}]\n", "axes.traces[0] (t): "},
		{"dryrun: a dump without nodes", "verb: dryrun\naxes:\n  traces: [{name: t, files: [\"{{ex}}/new-pod.yaml\"]}]\n", "axes.traces[0] (t): "},
		{"dryrun: a configuration that does not load", "verb: dryrun\naxes:\n  " + dump + "\n  configs: [{name: b, file: nope.yaml}]\n", "axes.configs[0] (b): loading config nope.yaml: no such file or directory"},
		{"dryrun: fgdTune", "verb: dryrun\naxes:\n  traces: [{name: t, files: [x], fgdTune: 1.3}]\n", "axes.traces[0].fgdTune: goes with verb replay, not dryrun"},
		{"capacity: no workloads", "verb: capacity\naxes:\n  " + dump + "\n", "axes.workloads: at least one workload is required"},
		{"capacity: seeds", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [x]}]\n  seeds: [1]\n", "axes.seeds: capacity breaks ties by the lowest node name"},
		{"capacity: noPreemption", "verb: capacity\nnoPreemption: true\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [x]}]\n", "noPreemption: capacity always counts without preemption"},
		{"capacity: an unknown workload field", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [x], replica: 3}]\n", `unknown field "replica"`},
		{"capacity: a workload without files", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w}]\n", "axes.workloads[0]: files: required"},
		{"capacity: addNodes without a template", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [x], addNodes: 2}]\n", "axes.workloads[0]: addNodes and minNodes need nodeTemplate"},
		{"capacity: minNodes without replicas", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [x], minNodes: true, nodeTemplate: m.yaml}]\n", "axes.workloads[0]: minNodes needs replicas"},
		{"capacity: a missing spec", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [nope.yaml]}]\n", "axes.workloads[0] (w): "},
		{"capacity: a spec that is not one", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [\"{{ex}}/m6i.yaml\"]}]\n", "axes.workloads[0] (w): "},
		{"capacity: a template that is not a Node", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [\"{{ex}}/web.yaml\"], addNodes: 1, nodeTemplate: \"{{ex}}/web.yaml\"}]\n", "axes.workloads[0] (w).nodeTemplate: "},
		{"capacity: replicas for more specs than given", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [\"{{ex}}/web.yaml\"], replicas: [1, 2]}]\n", "axes.workloads[0] (w).replicas: 2 values for 1 specs"},
		{"capacity: a configuration that does not load", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [\"{{ex}}/web.yaml\"]}]\n  configs: [{name: b, file: nope.yaml}]\n", "axes.configs[0] (b): loading config nope.yaml"},
		{"capacity: a workload name twice", "verb: capacity\naxes:\n  " + dump + "\n  workloads: [{name: w, files: [x]}, {name: w, files: [x]}]\n", `axes.workloads[1].name: "w" is named twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
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
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Errorf("the directory holds %d entries, want only the study", len(entries))
			}
		})
	}
}

func jsonIndent(w *bytes.Buffer, raw []byte) error { return json.Indent(w, raw, "", "  ") }

// A cell's feature gates reach its configuration's default profile, as
// kube's defaulting applies them: with GenericWorkload, GangScheduling
// holds the gang short of its minCount and the pod whose PodGroup is
// missing (kube's PreEnqueue strings); with the default gates every pod
// of the dump is placed. The configuration is loaded once per gate set,
// not shared between them.
func TestFeatureGateCellsGetTheirDefaultProfile(t *testing.T) {
	native, err := filepath.Abs("../../testdata/gang/native.yaml")
	if err != nil {
		t.Fatal(err)
	}
	study := `verb: dryrun
axes:
  traces:
  - name: native
    files: ["` + native + `"]
  featureGates:
  - name: default
  - name: gw
    gates: {GenericWorkload: true}
record: [summary, pending]
`
	p := plan(t, writeStudy(t, t.TempDir(), study))
	dir := t.TempDir()
	if _, err := p.Run(context.Background(), RunOptions{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		scheduled int
		held      []string
	}{
		"default": {6, nil},
		"gw":      {3, []string{"waiting for minCount pods from a gang to appear in scheduling queue", `waiting for pods's pod group \"missing\" to appear in scheduling queue`}},
	}
	for _, c := range p.Cells {
		r, err := ReadResult(dir, c)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			Summary struct{ Scheduled int }
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		w := want[c.Axes.FeatureGates]
		if res.Summary.Scheduled != w.scheduled {
			t.Errorf("cell %s: %d scheduled, want %d", c.ID, res.Summary.Scheduled, w.scheduled)
		}
		for _, msg := range w.held {
			if !strings.Contains(string(r.Result), msg) {
				t.Errorf("cell %s: no pending pod with %q:\n%s", c.ID, msg, r.Result)
			}
		}
	}
}
