package conformance

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// kubebenchExplain is hack/kubebench -explain's output: one explain case
// per pending pod, each against the snapshot as loaded (afterPlacements 0).
type kubebenchExplain struct {
	Cases []struct {
		explainCase
		FilterPlugins []string `json:"filterPlugins"`
	} `json:"cases"`
}

// explainRefs are the snapshots with kubebench -explain / -explain-run
// references: NAME.explain.json and NAME.explain-run.json in
// testdata/kubebench, with the number of pending pods.
var explainRefs = []struct {
	name, snapshot string
	pods           int
	// inRun: there is an -explain-run reference too. (Not for pods
	// nominated in the snapshot: kubebench places pods without its queue,
	// which would keep counting a placed pod's nomination.)
	inRun bool
	// config is the KubeSchedulerConfiguration kube ran with ("": the
	// defaults).
	config string
}{
	{"volumes-cluster", "../../testdata/kubebench/volumes-cluster.yaml", 53, true, ""},
	{"example-cluster", "../../examples/cluster.yaml", 40, true, ""},
	{"nominated", "../../testdata/kubebench/nominated.yaml", 6, false, ""},
	// DRA-backed extended resources scored by NodeResourcesFit and
	// BalancedAllocation.
	{"dra-extended", "../../testdata/kubebench/dra-extended.yaml", 5, false, "../../testdata/kubebench/dra-extended-config.yaml"},
	{"dra-extended-most", "../../testdata/kubebench/dra-extended.yaml", 5, false, "../../testdata/kubebench/dra-extended-most-config.yaml"},
	{"dra-extended-ratio", "../../testdata/kubebench/dra-extended.yaml", 5, false, "../../testdata/kubebench/dra-extended-ratio-config.yaml"},
}

// TestKubebenchExplain runs our explain (internal/explain, the code
// behind `kubectl sched explain pod -o json`) on every pending pod of
// testdata/kubebench/volumes-cluster.yaml (and of the shipped example) and
// compares it with the real kube-scheduler v1.37.2 framework's per-node
// verdicts recorded by hack/kubebench -explain: the PreFilter outcome,
// which filter plugins are skipped, every filter plugin that rejects each
// node (plugin, code, reasons, the first one), the feasible set, the scores
// and totals, the selected and tied nodes and the FitError message.
func TestKubebenchExplain(t *testing.T) {
	for _, ref := range explainRefs {
		t.Run(ref.name, func(t *testing.T) { testKubebenchExplain(t, ref.snapshot, ref.name, ref.pods, ref.config) })
	}
}

func testKubebenchExplain(t *testing.T, snapshotFile, name string, pods int, config string) {
	var want kubebenchExplain
	readJSONFile(t, "../../testdata/kubebench/"+name+".explain.json", &want)
	cl, err := snapshot.LoadPaths([]string{snapshotFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, reg := defaultEngine(t)
	if config != "" {
		if cfg, err = engine.LoadConfig(config); err != nil {
			t.Fatal(err)
		}
	}
	state, err := explain.NewState(context.Background(), cl, explain.Options{Config: cfg, Registry: reg, Nearest: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Cases) != pods {
		t.Fatalf("%d cases recorded, want the %d pending pods", len(want.Cases), pods)
	}
	unschedulable, nodeStatuses := 0, 0
	for _, w := range want.Cases {
		t.Run(w.Pod, func(t *testing.T) {
			ns, name := splitPodKey(w.Pod)
			pod, err := explain.FindPod(cl, ns, name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := state.Explain(context.Background(), pod)
			if err != nil {
				t.Fatal(err)
			}
			compareReport(t, &w.explainCase, w.FilterPlugins, got)
		})
		if w.NumFeasible == 0 {
			unschedulable++
		}
		nodeStatuses += len(w.Nodes)
	}
	t.Logf("compared %d pods (%d unschedulable), %d node verdicts", len(want.Cases), unschedulable, nodeStatuses)
}

func splitPodKey(k string) (string, string) {
	for i := 0; i < len(k); i++ {
		if k[i] == '/' {
			return k[:i], k[i+1:]
		}
	}
	return "default", k
}

// compareReport compares an explain report with a recorded kube cycle.
// Plugins kube's profile has and ours does not (DynamicResources,
// NodeDeclaredFeatures) are left out of the skipped-filter comparison.
func compareReport(t *testing.T, want *explainCase, wantFilters []string, got *report.Explanation) {
	t.Helper()
	if got.PreFilter.Code != want.PreFilter.Code || got.PreFilter.Plugin != want.PreFilter.Plugin || got.PreFilter.Reason != want.PreFilter.Reason {
		t.Errorf("preFilter = %+v, want %+v", got.PreFilter, want.PreFilter)
	}
	ours := sets.New(got.FilterPlugins...)
	var wantSkipped []string
	for _, p := range want.SkippedFilterPlugins {
		if ours.Has(p) {
			wantSkipped = append(wantSkipped, p)
		}
	}
	if want.PreFilter.Code == "Success" {
		if d := cmp.Diff(wantSkipped, got.SkippedFilterPlugins, cmpEmpty); d != "" {
			t.Errorf("skipped filter plugins (-want +got):\n%s", d)
		}
	}
	for _, p := range wantFilters {
		if !ours.Has(p) && p != "DynamicResources" && p != "NodeDeclaredFeatures" {
			t.Errorf("kube's profile filters with %s, ours does not", p)
		}
	}
	if got.NumNodes != want.NumNodes || got.NumFeasible != want.NumFeasible {
		t.Errorf("nodes/feasible = %d/%d, want %d/%d", got.NumNodes, got.NumFeasible, want.NumNodes, want.NumFeasible)
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
			var wf []report.Failure
			for _, f := range wn.Failures {
				wf = append(wf, report.Failure{Plugin: f.Plugin, Reason: f.Reason, Code: f.Code, First: f.First})
			}
			if d := cmp.Diff(wf, gn.Failures); d != "" {
				t.Errorf("node %s failures (-want +got):\n%s", wn.Node, d)
			}
			continue
		}
		wantScores := map[string]int64{}
		for k, v := range wn.Scores {
			if _, has := gn.Scores.Lookup(k); ignorableScore[k] && v == 0 && !has {
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
	if got.Selected != want.Selected {
		t.Errorf("selected = %q, want %q", got.Selected, want.Selected)
	}
	if d := cmp.Diff(want.TiedBest, got.TiedBest, cmpEmpty); d != "" {
		t.Errorf("tied best (-want +got):\n%s", d)
	}
	if got.BestTotal != want.BestTotal {
		t.Errorf("best total = %d, want %d", got.BestTotal, want.BestTotal)
	}
}

// cmpEmpty treats nil and empty slices alike.
var cmpEmpty = cmp.Transformer("nonNil", func(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
})

// storageBinder commits VolumeBinding's PreBind writes into the storage
// state, as the dry-run does (the PVs with their claimRef, the claims to
// provision with the selected node).
type storageBinder struct{ state *schedcore.StorageState }

func (b *storageBinder) BindPodVolumes(_ context.Context, _ *v1.Pod, pvs []*v1.PersistentVolume, pvcs []*v1.PersistentVolumeClaim) error {
	for _, pv := range pvs {
		b.state.PutPV(pv)
	}
	for _, pvc := range pvcs {
		b.state.PutPVC(pvc)
	}
	return nil
}

// TestKubebenchExplainInRun compares, for every pending pod of the
// volumes snapshot, the cycle kube-scheduler ran for it in the placement
// run (hack/kubebench -explain-run: after the earlier placements, with
// their assumed volumes) with ours on the same state: the earlier pods
// committed on kube's nodes through our Reserve and PreBind (the chosen
// PVs bound to their claims, the provisioned claims given their node), as
// the dry-run commits them.
func TestKubebenchExplainInRun(t *testing.T) {
	for _, ref := range explainRefs {
		if ref.inRun {
			t.Run(ref.name, func(t *testing.T) { testKubebenchExplainInRun(t, ref.snapshot, ref.name, ref.pods) })
		}
	}
}

func testKubebenchExplainInRun(t *testing.T, snapshotFile, name string, pods int) {
	var want kubebenchExplain
	readJSONFile(t, "../../testdata/kubebench/"+name+".explain-run.json", &want)
	if len(want.Cases) != pods {
		t.Fatalf("%d cases recorded, want the %d pending pods", len(want.Cases), pods)
	}
	var place placeFile
	readJSONFile(t, "../../testdata/kubebench/"+name+".place.json", &place)
	cl, err := snapshot.LoadPaths([]string{snapshotFile}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, reg := defaultEngine(t)
	ctx := context.Background()
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	snap := schedcore.NewEmptySnapshot()
	vb := &storageBinder{}
	ps, err := engine.BuildProfiles(ctx, engine.Options{Config: cfg, Registry: reg}, snap, engine.Driver{VolumeBinder: vb})
	if err != nil {
		t.Fatal(err)
	}
	work := *cl
	work.Pods = nil
	for _, p := range cl.Pods {
		work.Pods = append(work.Pods, p.DeepCopy())
	}
	pending := engine.FillCache(cache, &work, ps.ByName)
	cache.UpdateSnapshot(snap)
	vb.state = snap.Storage

	placedOn := map[string]string{}
	for _, p := range place.Placements {
		placedOn[p.Pod] = p.Node
	}
	cases := map[string]*explainCase{}
	for i := range want.Cases {
		cases[want.Cases[i].Pod] = &want.Cases[i].explainCase
	}
	placed, compared, unschedulable := 0, 0, 0
	for _, pod := range pending {
		key := pod.Namespace + "/" + pod.Name
		cache.UpdateSnapshot(snap)
		fw := ps.ByName[pod.Spec.SchedulerName]
		ex := schedruntime.Explain(ctx, fw, snap, pod, nil)
		w := cases[key]
		t.Run(key, func(t *testing.T) {
			if w == nil {
				t.Fatal("kube recorded no cycle for the pod")
			}
			if w.AfterPlacements != placed {
				t.Fatalf("recorded after %d placements, ours runs after %d", w.AfterPlacements, placed)
			}
			compareExplain(t, w, ex)
		})
		compared++
		if w != nil && w.NumFeasible == 0 {
			unschedulable++
		}
		node, ok := placedOn[key]
		if !ok {
			continue
		}
		assumed := pod.DeepCopy()
		assumed.Spec.NodeName = node
		if err := cache.AssumePod(assumed); err != nil {
			t.Fatalf("%s: assume on %s: %v", key, node, err)
		}
		if st := fw.RunReservePluginsReserve(ctx, ex.State, assumed, node); !st.IsSuccess() {
			t.Fatalf("%s: reserve on %s: %v", key, node, st)
		}
		if st := fw.RunPreBindPlugins(ctx, ex.State, assumed, node); !st.IsSuccess() {
			t.Fatalf("%s: prebind on %s: %v", key, node, st)
		}
		placed++
	}
	if compared != len(want.Cases) || placed != len(place.Placements) {
		t.Errorf("compared %d of %d recorded cycles, committed %d of %d placements", compared, len(want.Cases), placed, len(place.Placements))
	}
	t.Logf("compared %d cycles in the run (%d unschedulable)", compared, unschedulable)
}

func readJSONFile(t *testing.T, path string, into any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
