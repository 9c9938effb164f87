// Package conformance checks the engine against the real kube-scheduler
// v1.37.2's answers recorded in testdata/conformance (copied from the
// project's shared fixtures): per-node, per-plugin filter verdicts and
// scores for single cycles, and whole placement runs.
package conformance

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

const root = "../../testdata/conformance"

type explainCase struct {
	Pod                  string                                 `json:"pod"`
	Profile              string                                 `json:"profile"`
	AfterPlacements      int                                    `json:"afterPlacements"`
	PreEnqueue           *struct{ Code, Plugin, Reason string } `json:"preEnqueue"`
	PreFilter            struct{ Code, Plugin, Reason string }  `json:"preFilter"`
	SkippedFilterPlugins []string                               `json:"skippedFilterPlugins"`
	SkippedScorePlugins  []string                               `json:"skippedScorePlugins"`
	ScorePluginWeights   map[string]int64                       `json:"scorePluginWeights"`
	NumNodes             int                                    `json:"numNodes"`
	NumFeasible          int                                    `json:"numFeasible"`
	Nodes                []explainNode                          `json:"nodes"`
	BestTotal            int64                                  `json:"bestTotal"`
	TiedBest             []string                               `json:"tiedBest"`
	Selected             string                                 `json:"selected"`
	Message              string                                 `json:"message"`
}

type explainNode struct {
	Node     string           `json:"node"`
	Feasible bool             `json:"feasible"`
	Failures []failure        `json:"failures"`
	Scores   map[string]int64 `json:"scores"`
	Total    int64            `json:"total"`
}

type failure struct {
	Plugin string `json:"plugin"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
	First  bool   `json:"first"`
}

type placeFile struct {
	Placements    []struct{ Pod, Node string } `json:"placements"`
	Unschedulable []struct {
		Pod, Message string
		After        int
	} `json:"unschedulable"`
}

type fixture struct {
	dir     string
	cluster *snapshot.Cluster
	place   placeFile
	config  string
}

func loadFixture(t *testing.T, dir string) *fixture {
	t.Helper()
	f := &fixture{dir: dir}
	cl, err := snapshot.LoadPaths([]string{filepath.Join(dir, "snapshot.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.cluster = cl
	b, err := os.ReadFile(filepath.Join(dir, "place.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f.place); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
		f.config = filepath.Join(dir, "config.yaml")
	}
	return f
}

func cases(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(root, "*", "snapshot.json"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no conformance fixtures under %s: %v", root, err)
	}
	var out []string
	for _, d := range dirs {
		out = append(out, filepath.Dir(d))
	}
	sort.Strings(out)
	return out
}

// state builds the engine state after the first n placements of
// place.json, committed as the scheduler commits them (DRA claims
// allocated and reserved).
func (f *fixture) state(t *testing.T, n int) (*schedcore.Snapshot, *engine.Profiles, map[string]*v1.Pod) {
	t.Helper()
	cfg, err := engine.LoadConfig(f.config)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	var placed []engine.Placement
	for _, p := range f.place.Placements[:n] {
		placed = append(placed, engine.Placement{Pod: p.Pod, Node: p.Node})
	}
	o := engine.Options{Config: cfg, Registry: reg}
	cl, err := engine.CommitPlacements(context.Background(), f.cluster, o, placed)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(context.Background(), o, engine.Driver{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Load(cl); err != nil {
		t.Fatal(err)
	}
	pods := map[string]*v1.Pod{}
	for _, p := range cl.Pods {
		pods[p.Namespace+"/"+p.Name] = p
	}
	return eng.Snapshot, eng.Profiles, pods
}

func TestExplainCases(t *testing.T) {
	for _, dir := range cases(t) {
		f := loadFixture(t, dir)
		quirk := conformanceQuirks(t, dir)
		files, _ := filepath.Glob(filepath.Join(dir, "explain", "*.json"))
		for _, file := range files {
			file := file
			t.Run(filepath.Base(dir)+"/"+filepath.Base(file), func(t *testing.T) {
				var want explainCase
				b, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &want); err != nil {
					t.Fatal(err)
				}
				after := want.AfterPlacements
				if q, ok := quirk[filepath.Base(file)]; ok {
					after = q
				}
				snap, ps, pods := f.state(t, after)
				pod := pods[want.Pod]
				if pod == nil {
					t.Fatalf("pod %s not in snapshot", want.Pod)
				}
				fw := ps.ByName[want.Profile]
				ex := schedruntime.Explain(context.Background(), fw, snap, pod, nil)
				compareExplain(t, &want, ex)
			})
		}
	}
}

// ignorableScore are plugins kube runs that have nothing to say here.
var ignorableScore = map[string]bool{"DynamicResources": true, "VolumeBinding": true}

func compareExplain(t *testing.T, want *explainCase, ex *schedruntime.Explanation) {
	t.Helper()
	if ex.Err != nil {
		t.Fatalf("explain failed: %v", ex.Err)
	}
	if want.PreEnqueue != nil || ex.PreEnqueue != nil {
		comparePreEnqueue(t, want, ex)
		return
	}
	wantPF := want.PreFilter.Code
	gotPF := ex.PreFilter.Code().String()
	if wantPF != gotPF || (wantPF != "Success" && (want.PreFilter.Plugin != ex.PreFilter.Plugin() || want.PreFilter.Reason != ex.PreFilter.Message())) {
		t.Errorf("preFilter = %s/%s/%q, want %s/%s/%q", gotPF, ex.PreFilter.Plugin(), ex.PreFilter.Message(), wantPF, want.PreFilter.Plugin, want.PreFilter.Reason)
	}
	got := map[string]schedruntime.NodeExplanation{}
	for _, n := range ex.Nodes {
		got[n.Name] = n
	}
	scores := map[string]schedcore.NodePluginScores{}
	for _, s := range ex.Scores {
		scores[s.Name] = s
	}
	for _, wn := range want.Nodes {
		gn, ok := got[wn.Node]
		if !ok {
			t.Errorf("node %s missing", wn.Node)
			continue
		}
		if gn.Feasible != wn.Feasible {
			t.Errorf("node %s: feasible = %v, want %v (status %v)", wn.Node, gn.Feasible, wn.Feasible, gn.Status)
			continue
		}
		if !wn.Feasible {
			var gf []failure
			for i, v := range gn.Failures {
				gf = append(gf, failure{Plugin: v.Plugin, Code: v.Status.Code().String(), Reason: strings.Join(v.Status.Reasons(), "; "), First: i == 0})
			}
			if wantPF != "Success" {
				continue
			}
			if d := cmp.Diff(wn.Failures, gf); d != "" {
				t.Errorf("node %s failures (-want +got):\n%s", wn.Node, d)
			}
			continue
		}
		if want.NumFeasible == 1 {
			continue
		}
		gs, ok := scores[wn.Node]
		if !ok {
			t.Errorf("node %s: no scores", wn.Node)
			continue
		}
		gotScores := map[string]int64{}
		for _, s := range gs.Scores {
			gotScores[s.Name] = s.Score
		}
		wantScores := map[string]int64{}
		for k, v := range wn.Scores {
			if ignorableScore[k] && v == 0 {
				if _, ours := gotScores[k]; !ours {
					continue
				}
			}
			wantScores[k] = v
		}
		if d := cmp.Diff(wantScores, gotScores); d != "" {
			t.Errorf("node %s scores (-want +got):\n%s", wn.Node, d)
		}
		if gs.TotalScore != wn.Total {
			t.Errorf("node %s total = %d, want %d", wn.Node, gs.TotalScore, wn.Total)
		}
	}
	if want.NumFeasible == 0 {
		msg := ""
		if ex.FitError != nil {
			msg = ex.FitError.Error()
		}
		if msg != want.Message {
			t.Errorf("message:\n got %q\nwant %q", msg, want.Message)
		}
		return
	}
	if want.NumFeasible > 1 {
		if d := cmp.Diff(want.TiedBest, ex.Tied); d != "" {
			t.Errorf("tied best (-want +got):\n%s", d)
		}
	}
	if ex.Selected != want.Selected {
		t.Errorf("selected = %s, want %s", ex.Selected, want.Selected)
	}
}

// comparePreEnqueue compares a pod held by a PreEnqueue plugin: kube runs
// no cycle (PreFilter "NotRun"), every node carries the plugin's status,
// and the message is the status's.
func comparePreEnqueue(t *testing.T, want *explainCase, ex *schedruntime.Explanation) {
	t.Helper()
	if want.PreEnqueue == nil || ex.PreEnqueue == nil {
		t.Fatalf("preEnqueue = %v, want %+v", ex.PreEnqueue, want.PreEnqueue)
	}
	w := *want.PreEnqueue
	if got := ex.PreEnqueue; got.Code().String() != w.Code || got.Plugin() != w.Plugin || got.Message() != w.Reason {
		t.Errorf("preEnqueue = %s/%s/%q, want %s/%s/%q", got.Code(), got.Plugin(), got.Message(), w.Code, w.Plugin, w.Reason)
	}
	if want.PreFilter.Code != "NotRun" {
		t.Errorf("preFilter = %s, want NotRun for a gated pod", want.PreFilter.Code)
	}
	if ex.PreEnqueue.Message() != want.Message {
		t.Errorf("message:\n got %q\nwant %q", ex.PreEnqueue.Message(), want.Message)
	}
	got := map[string]schedruntime.NodeExplanation{}
	for _, n := range ex.Nodes {
		got[n.Name] = n
	}
	for _, wn := range want.Nodes {
		gn := got[wn.Node]
		var gf []failure
		for i, v := range gn.Failures {
			gf = append(gf, failure{Plugin: v.Plugin, Code: v.Status.Code().String(), Reason: strings.Join(v.Status.Reasons(), "; "), First: i == 0})
		}
		if d := cmp.Diff(wn.Failures, gf); d != "" || gn.Feasible {
			t.Errorf("node %s failures (-want +got):\n%s", wn.Node, d)
		}
	}
}

// TestKubebenchPlaceRuns compares the dry-run with the real kube-scheduler's
// placements recorded by hack/kubebench on the shipped example, on the
// volume cases of testdata/kubebench/volumes-cluster.yaml and on the
// generated 500-node mixed cluster (the 5000-node one runs with
// KUBECTL_SCHED_LONG=1: it takes minutes).
func TestKubebenchPlaceRuns(t *testing.T) {
	cases := []struct {
		name, place string
		load        func() (*snapshot.Cluster, error)
		long        bool
		// config is the configuration kube ran with ("": the defaults).
		config string
	}{
		{"example-cluster", "example-cluster.place.json", func() (*snapshot.Cluster, error) {
			return snapshot.LoadPaths([]string{"../../examples/cluster.yaml"}, nil)
		}, false, ""},
		{"volumes-cluster", "volumes-cluster.place.json", func() (*snapshot.Cluster, error) {
			return snapshot.LoadPaths([]string{"../../testdata/kubebench/volumes-cluster.yaml"}, nil)
		}, false, ""},
		{"mixed-500nodes", "mixed-500nodes.place.json", func() (*snapshot.Cluster, error) { return generated("Mixed/500Nodes") }, false, ""},
		{"mixed-5000nodes", "mixed-5000nodes.place.json", func() (*snapshot.Cluster, error) { return generated("Mixed/5000Nodes") }, true, ""},
	}
	// DRA-backed extended resources scored by each strategy, the devices
	// allocated by one placement counted for the next.
	for _, v := range []string{"", "-most", "-ratio"} {
		cases = append(cases, struct {
			name, place string
			load        func() (*snapshot.Cluster, error)
			long        bool
			config      string
		}{"dra-extended" + v, "dra-extended" + v + ".place.json", func() (*snapshot.Cluster, error) {
			return snapshot.LoadPaths([]string{"../../testdata/kubebench/dra-extended.yaml"}, nil)
		}, false, "../../testdata/kubebench/dra-extended" + v + "-config.yaml"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.long && os.Getenv("KUBECTL_SCHED_LONG") != "1" {
				t.Skip("set KUBECTL_SCHED_LONG=1 to run")
			}
			cl, err := c.load()
			if err != nil {
				t.Fatal(err)
			}
			var want placeFile
			b, err := os.ReadFile(filepath.Join("../../testdata/kubebench", c.place))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			comparePlaceRun(t, &fixture{cluster: cl, place: want}, c.config)
		})
	}
}

func generated(name string) (*snapshot.Cluster, error) { return generatedDRA(name, 1) }

// TestPlaceRuns runs the dry-run (no preemption, lowest-name tie-break) on
// every fixture and compares the whole placement sequence and the
// unschedulable pods with kube-scheduler's.
func TestPlaceRuns(t *testing.T) {
	for _, dir := range cases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			f := loadFixture(t, dir)
			comparePlaceRun(t, f, f.config)
		})
	}
}

func comparePlaceRun(t *testing.T, f *fixture, config string) {
	t.Helper()
	{
		{
			cfg, err := engine.LoadConfig(config)
			if err != nil {
				t.Fatal(err)
			}
			reg, err := engine.Registry(nil)
			if err != nil {
				t.Fatal(err)
			}
			// The fixtures evaluate every node (percentageOfNodesToScore: 100).
			all := int32(100)
			cfg.PercentageOfNodesToScore = &all
			rep, err := dryrun.Run(context.Background(), f.cluster, dryrun.Options{Config: cfg, Registry: reg, NoPreemption: true})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < len(f.place.Placements) && i < len(rep.Placements); i++ {
				w, g := f.place.Placements[i], rep.Placements[i]
				if w.Pod != g.Pod || w.Node != g.Node {
					t.Fatalf("placement %d: got %s -> %s, want %s -> %s", i, g.Pod, g.Node, w.Pod, w.Node)
				}
			}
			if len(rep.Placements) != len(f.place.Placements) {
				t.Errorf("placements: got %d, want %d", len(rep.Placements), len(f.place.Placements))
			}
			type unsched struct {
				Pod, Message string
				After        int
			}
			var want, got []unsched
			for _, u := range f.place.Unschedulable {
				want = append(want, unsched{u.Pod, u.Message, u.After})
			}
			wantAfter := map[string]int{}
			for _, u := range f.place.Unschedulable {
				wantAfter[u.Pod] = u.After
			}
			for _, u := range rep.Unschedulable {
				after := u.After
				if u.Attempts == 0 {
					// Held by a PreEnqueue plugin (a claim not created
					// yet) from the moment it was queued: the fixture
					// records it at its turn in queue order.
					after = wantAfter[u.Pod]
				}
				if u.Attempts > 1 {
					// The fixture tries each pod once; our queue retries a
					// pod when a placement's event may help it (queueing
					// hints), so its last failure comes later.
					if after < wantAfter[u.Pod] {
						t.Errorf("%s: last failure after %d placements, before its first (%d)", u.Pod, after, wantAfter[u.Pod])
					}
					after = wantAfter[u.Pod]
				}
				got = append(got, unsched{u.Pod, u.Message, after})
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("unschedulable (-want +got):\n%s", d)
			}
		}
	}
}

// conformanceQuirks returns the case's explain files recorded at another
// placement count (schedtest.ConformanceQuirks).
func conformanceQuirks(t *testing.T, dir string) map[string]int {
	t.Helper()
	q, err := schedtest.ConformanceQuirks(dir)
	if err != nil {
		t.Fatal(err)
	}
	return q
}
