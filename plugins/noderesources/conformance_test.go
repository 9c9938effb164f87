package noderesources

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// conformanceRoot holds the real kube-scheduler v1.37.2's answers, copied
// into the repository's testdata so a fresh clone tests the same way.
const conformanceRoot = "../../testdata/conformance"

type explainCase struct {
	Pod             string `json:"pod"`
	AfterPlacements int    `json:"afterPlacements"`
	PreFilter       struct {
		Code string `json:"code"`
	} `json:"preFilter"`
	SkippedScorePlugins []string         `json:"skippedScorePlugins"`
	ScorePluginWeights  map[string]int64 `json:"scorePluginWeights"`
	Nodes               []struct {
		Node     string           `json:"node"`
		Feasible bool             `json:"feasible"`
		Scores   map[string]int64 `json:"scores"`
		Failures []struct {
			Plugin string `json:"plugin"`
			Code   string `json:"code"`
			Reason string `json:"reason"`
		} `json:"failures"`
	} `json:"nodes"`
}

type conformanceCluster struct {
	nodes []*v1.Node
	pods  map[string]*v1.Pod // by namespace/name, live pods only
	order []string           // pod keys in snapshot order
}

func loadCluster(t *testing.T, path string) *conformanceCluster {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c := &conformanceCluster{pods: map[string]*v1.Pod{}}
	for _, item := range list.Items {
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(item, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "Node":
			n := &v1.Node{}
			if err := json.Unmarshal(item, n); err != nil {
				t.Fatal(err)
			}
			c.nodes = append(c.nodes, n)
		case "Pod":
			p := &v1.Pod{}
			if err := json.Unmarshal(item, p); err != nil {
				t.Fatal(err)
			}
			if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
				continue
			}
			k := p.Namespace + "/" + p.Name
			c.pods[k] = p
			c.order = append(c.order, k)
		}
	}
	return c
}

// pluginArgs reads the NodeResourcesFit and BalancedAllocation args of a
// case's config.yaml (nil when absent: the defaults).
func pluginArgs(t *testing.T, dir string) (fit, ba runtime.Object) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Profiles []struct {
			PluginConfig []struct {
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"pluginConfig"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, pc := range cfg.Profiles[0].PluginConfig {
		switch pc.Name {
		case names.NodeResourcesFit:
			a := &configv1.NodeResourcesFitArgs{}
			if err := json.Unmarshal(pc.Args, a); err != nil {
				t.Fatal(err)
			}
			fit = a
		case names.NodeResourcesBalancedAllocation:
			a := &configv1.NodeResourcesBalancedAllocationArgs{}
			if err := json.Unmarshal(pc.Args, a); err != nil {
				t.Fatal(err)
			}
			ba = a
		}
	}
	return fit, ba
}

// TestConformance replays every recorded explain case of the real
// kube-scheduler v1.37.2 and checks this package's two plugins against it:
// NodeResourcesFit's verdict (code and reasons) on every node, and both
// plugins' weighted scores on every feasible node.
func TestConformance(t *testing.T) {
	cases, err := os.ReadDir(conformanceRoot)
	if err != nil {
		t.Skipf("no conformance fixtures at %s: %v", conformanceRoot, err)
	}
	ctx := context.Background()
	for _, ce := range cases {
		if !ce.IsDir() {
			continue
		}
		dir := filepath.Join(conformanceRoot, ce.Name())
		t.Run(ce.Name(), func(t *testing.T) {
			cluster := loadCluster(t, filepath.Join(dir, "snapshot.json"))
			var place struct {
				Placements []struct{ Pod, Node string } `json:"placements"`
			}
			raw, err := os.ReadFile(filepath.Join(dir, "place.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &place); err != nil {
				t.Fatal(err)
			}
			fitObj, baObj := pluginArgs(t, dir)
			h := schedcore.NewHandle(nil, 1)
			fp, err := NewFit(ctx, fitObj, h)
			if err != nil {
				t.Fatal(err)
			}
			bp, err := NewBalancedAllocation(ctx, baObj, h)
			if err != nil {
				t.Fatal(err)
			}
			fit, ba := fp.(*Fit), bp.(*BalancedAllocation)

			files, _ := filepath.Glob(filepath.Join(dir, "explain", "*.json"))
			sort.Strings(files)
			quirks := conformanceQuirks(t, dir)
			for _, f := range files {
				raw, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				var ec explainCase
				if err := json.Unmarshal(raw, &ec); err != nil {
					t.Fatal(err)
				}
				if ec.PreFilter.Code != "Success" {
					// PreFilter (or PreEnqueue) rejected the pod: kube
					// ran no filter.
					continue
				}
				if q, ok := quirks[filepath.Base(f)]; ok {
					ec.AfterPlacements = q
				}
				checkExplainCase(t, filepath.Base(f), cluster, place.Placements, ec, fit, ba)
			}
		})
	}
}

func checkExplainCase(t *testing.T, file string, cluster *conformanceCluster, placements []struct{ Pod, Node string }, ec explainCase, fit *Fit, ba *BalancedAllocation) {
	t.Helper()
	ctx := context.Background()
	placed := map[string]string{}
	for _, p := range placements[:ec.AfterPlacements] {
		placed[p.Pod] = p.Node
	}
	var assigned []*v1.Pod
	for _, k := range cluster.order {
		p := cluster.pods[k]
		if node, ok := placed[k]; ok {
			p = p.DeepCopy()
			p.Spec.NodeName = node
		}
		if p.Spec.NodeName != "" {
			assigned = append(assigned, p)
		}
	}
	pod := cluster.pods[ec.Pod]
	if pod == nil {
		t.Fatalf("%s: pod %s not in the snapshot", file, ec.Pod)
	}
	snap := schedcore.NewSnapshot(assigned, cluster.nodes)

	state := schedcore.NewCycleState()
	if _, st := fit.PreFilter(ctx, state, pod, snap.List()); !st.IsSuccess() {
		t.Fatalf("%s: PreFilter: %v", file, st)
	}
	var feasible []*schedcore.NodeInfo
	for _, n := range ec.Nodes {
		ni, err := snap.Get(n.Node)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		got := fit.Filter(ctx, state, pod, ni)
		wantCode, wantReason := "Success", ""
		for _, fl := range n.Failures {
			if fl.Plugin == names.NodeResourcesFit {
				wantCode, wantReason = fl.Code, fl.Reason
			}
		}
		if gotReason := strings.Join(got.Reasons(), "; "); got.Code().String() != wantCode || gotReason != wantReason {
			t.Errorf("%s: pod %s node %s: Filter = %s %q, kube-scheduler says %s %q", file, ec.Pod, n.Node, got.Code(), gotReason, wantCode, wantReason)
		}
		if n.Feasible {
			feasible = append(feasible, ni)
		}
	}

	skipped := map[string]bool{}
	for _, p := range ec.SkippedScorePlugins {
		skipped[p] = true
	}
	baSkip := ba.PreScore(ctx, state, pod, feasible).IsSkip()
	if want := skipped[names.NodeResourcesBalancedAllocation]; baSkip != want && ec.ScorePluginWeights[names.NodeResourcesBalancedAllocation] != 0 {
		t.Errorf("%s: pod %s: BalancedAllocation PreScore skip = %v, kube-scheduler %v", file, ec.Pod, baSkip, want)
	}
	if st := fit.PreScore(ctx, state, pod, feasible); !st.IsSuccess() {
		t.Fatalf("%s: PreScore: %v", file, st)
	}
	for _, n := range ec.Nodes {
		if !n.Feasible {
			continue
		}
		ni, _ := snap.Get(n.Node)
		for _, pl := range []schedcore.ScorePlugin{fit, ba} {
			want, ok := n.Scores[pl.Name()]
			if !ok {
				continue
			}
			got, st := pl.Score(ctx, state, pod, ni)
			if !st.IsSuccess() {
				t.Fatalf("%s: %s Score: %v", file, pl.Name(), st)
			}
			if got*ec.ScorePluginWeights[pl.Name()] != want {
				t.Errorf("%s: pod %s node %s: %s weighted score = %d, kube-scheduler says %d", file, ec.Pod, n.Node, pl.Name(), got*ec.ScorePluginWeights[pl.Name()], want)
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
