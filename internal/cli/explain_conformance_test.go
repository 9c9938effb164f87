package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

const conformanceRoot = "../../testdata/conformance"

// conformanceCase is the part of a testdata/conformance explain file that
// `explain -o json` must reproduce.
type conformanceCase struct {
	Pod             string `json:"pod"`
	Profile         string `json:"profile"`
	AfterPlacements int    `json:"afterPlacements"`
	PreFilter       struct {
		Code, Plugin, Reason string
	} `json:"preFilter"`
	NumFeasible int `json:"numFeasible"`
	Nodes       []struct {
		Node     string           `json:"node"`
		Feasible bool             `json:"feasible"`
		Failures []report.Failure `json:"failures"`
		Scores   map[string]int64 `json:"scores"`
		Total    int64            `json:"total"`
	} `json:"nodes"`
	BestTotal int64    `json:"bestTotal"`
	TiedBest  []string `json:"tiedBest"`
	Selected  string   `json:"selected"`
	Message   string   `json:"message"`
}

// stateFile writes the fixture's snapshot with the first n placements of
// place.json bound (spec.nodeName set), the state the explain case was
// recorded in, and returns its path. Files are cached per (fixture, n).
func stateFile(t *testing.T, tmp, dir string, n int, cache map[string]string) string {
	t.Helper()
	key := fmt.Sprintf("%s#%d", dir, n)
	if p, ok := cache[key]; ok {
		return p
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	readJSON(t, filepath.Join(dir, "snapshot.json"), &list)
	var place struct {
		Placements []struct{ Pod, Node string } `json:"placements"`
	}
	readJSON(t, filepath.Join(dir, "place.json"), &place)
	p := filepath.Join(tmp, fmt.Sprintf("%s-%d.json", filepath.Base(dir), n))
	if hasDRA(list.Items) {
		// Claims must carry the placements' allocations: commit them
		// through the plugins and write the resulting state.
		writeCommittedState(t, filepath.Join(dir, "snapshot.json"), dir, place.Placements[:n], p)
		cache[key] = p
		return p
	}
	bind := map[string]string{}
	for i := 0; i < n; i++ {
		bind[place.Placements[i].Pod] = place.Placements[i].Node
	}
	for _, it := range list.Items {
		if it["kind"] != "Pod" {
			continue
		}
		meta, _ := it["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		name, _ := meta["name"].(string)
		if node, ok := bind[ns+"/"+name]; ok {
			spec, _ := it["spec"].(map[string]any)
			spec["nodeName"] = node
		}
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cache[key] = p
	return p
}

func hasDRA(items []map[string]any) bool {
	for _, it := range items {
		if v, _ := it["apiVersion"].(string); strings.HasPrefix(v, "resource.k8s.io/") {
			return true
		}
	}
	return false
}

// writeCommittedState writes the snapshot with the placements committed
// as the scheduler commits them (engine.CommitPlacements) to out.
func writeCommittedState(t *testing.T, snapshotFile, dir string, placements []struct{ Pod, Node string }, out string) {
	t.Helper()
	cl, err := snapshot.LoadPaths([]string{snapshotFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := ""
	if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
		cfgPath = filepath.Join(dir, "config.yaml")
	}
	cfg, err := engine.LoadConfig(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := engine.Registry(nil)
	if err != nil {
		t.Fatal(err)
	}
	var placed []engine.Placement
	for _, p := range placements {
		placed = append(placed, engine.Placement{Pod: p.Pod, Node: p.Node})
	}
	committed, err := engine.CommitPlacements(context.Background(), cl, engine.Options{Config: cfg, Registry: reg}, placed)
	if err != nil {
		t.Fatal(err)
	}
	b, err := committed.Marshal("json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readJSON(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// ignorableScore are plugins kube runs that have nothing to say here (the
// fixtures' README allows them to be absent on our side).
var ignorableScore = map[string]bool{"DynamicResources": true, "VolumeBinding": true}

// TestExplainJSONMatchesConformance runs `explain pod -o json` through the
// CLI for every recorded kube-scheduler v1.37.2 cycle and compares the
// feasible set, every failure per node, scores and totals, the selected and
// tied nodes and the FitError message.
func TestExplainJSONMatchesConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("conformance cases take a while")
	}
	dirs, _ := filepath.Glob(filepath.Join(conformanceRoot, "*", "snapshot.json"))
	if len(dirs) == 0 {
		t.Fatalf("no conformance fixtures under %s", conformanceRoot)
	}
	sort.Strings(dirs)
	cache := map[string]string{}
	tmp := t.TempDir()
	for _, d := range dirs {
		dir := filepath.Dir(d)
		files, _ := filepath.Glob(filepath.Join(dir, "explain", "*.json"))
		quirks := conformanceQuirks(t, dir)
		var cfg []string
		if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err == nil {
			cfg = []string{"--config", filepath.Join(dir, "config.yaml")}
		}
		for _, file := range files {
			t.Run(filepath.Base(dir)+"/"+filepath.Base(file), func(t *testing.T) {
				var want conformanceCase
				readJSON(t, file, &want)
				after := want.AfterPlacements
				if q, ok := quirks[filepath.Base(file)]; ok {
					after = q
				}
				state := stateFile(t, tmp, dir, after, cache)
				ns, name := splitKey(want.Pod)
				args := append([]string{"explain", "pod", name, "-n", ns, "--snapshot", state, "-o", "json"}, cfg...)
				code, out, stderr := run(t, "", args...)
				if code != 0 {
					t.Fatalf("exit code %d: %s", code, stderr)
				}
				var got report.Explanation
				if err := json.Unmarshal([]byte(out), &got); err != nil {
					t.Fatalf("output is not JSON: %v", err)
				}
				compareConformance(t, &want, &got)
			})
		}
	}
}

func splitKey(k string) (string, string) {
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			return k[:i], k[i+1:]
		}
	}
	return "default", k
}

func compareConformance(t *testing.T, want *conformanceCase, got *report.Explanation) {
	t.Helper()
	if got.Profile != want.Profile {
		t.Errorf("profile = %q, want %q", got.Profile, want.Profile)
	}
	if got.PreFilter.Code != want.PreFilter.Code || want.PreFilter.Code != "Success" && (got.PreFilter.Plugin != want.PreFilter.Plugin || got.PreFilter.Reason != want.PreFilter.Reason) {
		t.Errorf("preFilter = %+v, want %+v", got.PreFilter, want.PreFilter)
	}
	if got.NumNodes != len(want.Nodes) || got.NumFeasible != want.NumFeasible {
		t.Errorf("nodes/feasible = %d/%d, want %d/%d", got.NumNodes, got.NumFeasible, len(want.Nodes), want.NumFeasible)
	}
	byName := map[string]report.ExplainNode{}
	for _, n := range got.Nodes {
		byName[n.Node] = n
	}
	for _, wn := range want.Nodes {
		gn, ok := byName[wn.Node]
		if !ok {
			t.Errorf("node %s missing", wn.Node)
			continue
		}
		if gn.Feasible != wn.Feasible {
			t.Errorf("node %s: feasible = %v, want %v (failures %+v)", wn.Node, gn.Feasible, wn.Feasible, gn.Failures)
			continue
		}
		if !wn.Feasible {
			if want.PreFilter.Code == "Success" {
				if d := cmp.Diff(wn.Failures, gn.Failures); d != "" {
					t.Errorf("node %s failures (-want +got):\n%s", wn.Node, d)
				}
			}
			continue
		}
		if want.NumFeasible == 1 {
			continue // kube does not score a single feasible node
		}
		wantScores := map[string]int64{}
		for k, v := range wn.Scores {
			if _, ours := gn.Scores.Lookup(k); ignorableScore[k] && v == 0 && !ours {
				continue
			}
			wantScores[k] = v
		}
		if d := cmp.Diff(wantScores, gn.Scores.Map()); d != "" {
			t.Errorf("node %s scores (-want +got):\n%s", wn.Node, d)
		}
		if gn.Total == nil || *gn.Total != wn.Total {
			t.Errorf("node %s total = %v, want %d", wn.Node, gn.Total, wn.Total)
		}
	}
	if got.Message != want.Message {
		t.Errorf("message:\n got %q\nwant %q", got.Message, want.Message)
	}
	if want.NumFeasible == 0 {
		return
	}
	if got.Selected != want.Selected {
		t.Errorf("selected = %s, want %s", got.Selected, want.Selected)
	}
	if want.NumFeasible > 1 {
		if d := cmp.Diff(want.TiedBest, got.TiedBest); d != "" {
			t.Errorf("tied best (-want +got):\n%s", d)
		}
		if got.BestTotal != want.BestTotal {
			t.Errorf("best total = %d, want %d", got.BestTotal, want.BestTotal)
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
