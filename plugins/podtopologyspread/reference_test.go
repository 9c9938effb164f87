package podtopologyspread

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/plugintest"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestScoresMatchAllNodeCounting compares PreScore, Score and
// NormalizeScore with kube's scoring written out plainly (every node's pods
// counted for every constraint) on random clusters: explicit soft
// constraints with selectors the pod label index can answer (one label
// pair) and ones it cannot (In with two values, Exists), and the system
// default constraints with Services. PreScore visits only the nodes the
// counters name as holding matching pods (SelectorCount.NonZero); this
// fails if it does so for a counter that cannot name them.
func TestScoresMatchAllNodeCounting(t *testing.T) {
	rng := rand.New(rand.NewSource(19))
	zonesOf := []string{"z1", "z2", "z3"}
	apps := []string{"a", "b", "c"}
	selectors := []*metav1.LabelSelector{
		matchLabels("app", "a"),
		matchLabels("app", "b", "tier", "x"),
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}},
	}
	keys := []string{v1.LabelTopologyZone, v1.LabelHostname, "rack"}
	for step := 0; step < 300; step++ {
		var nodes []*v1.Node
		for i := range 4 + rng.Intn(12) {
			name := fmt.Sprintf("node-%d", i)
			var kv []string
			if rng.Intn(6) > 0 {
				kv = append(kv, v1.LabelTopologyZone, zonesOf[rng.Intn(len(zonesOf))])
			}
			if rng.Intn(8) > 0 {
				kv = append(kv, v1.LabelHostname, name)
			}
			if rng.Intn(3) > 0 {
				kv = append(kv, "rack", fmt.Sprintf("r%d", rng.Intn(3)))
			}
			nodes = append(nodes, schedtest.MakeNode(name).OnlyLabels(kv...).Obj())
		}
		var pods []*v1.Pod
		for i := range rng.Intn(40) {
			p := schedtest.MakePod(fmt.Sprintf("p%d", i)).Namespace([]string{"default", "team"}[rng.Intn(2)]).
				Node(nodes[rng.Intn(len(nodes))].Name).Label("app", apps[rng.Intn(len(apps))])
			if rng.Intn(2) == 0 {
				p.Label("tier", []string{"x", "y"}[rng.Intn(2)])
			}
			pod := p.Obj()
			if rng.Intn(10) == 0 {
				pod = terminating(pod)
			}
			pods = append(pods, pod)
		}
		incoming := mkPod("incoming", "app", apps[rng.Intn(len(apps))], "tier", "x")
		if rng.Intn(2) == 0 {
			incoming.namespace("team")
		}
		if rng.Intn(4) == 0 {
			incoming.nodeSelector("rack", fmt.Sprintf("r%d", rng.Intn(3)))
		}
		args := &configv1.PodTopologySpreadArgs{DefaultingType: configv1.SystemDefaulting}
		var sel *schedcore.SelectorSources
		if rng.Intn(3) == 0 {
			sel = &schedcore.SelectorSources{Services: []*v1.Service{service("default", "app", "a"), service("team", "app", "b"), service("team", "app", "c")}}
		} else {
			for range 1 + rng.Intn(2) {
				incoming.spread(int32(1+rng.Intn(3)), keys[rng.Intn(len(keys))], sa, selectors[rng.Intn(len(selectors))])
			}
		}
		pod := incoming.obj()
		pl, snap := newPlugin(t, args, pods, nodes, sel)
		var feasible []*schedcore.NodeInfo
		for _, ni := range snap.List() {
			if rng.Intn(4) > 0 {
				feasible = append(feasible, ni)
			}
		}
		want := referenceScores(t, pl, pod, snap.List(), feasible)
		got := plugintest.Scores(t, pl, pod, feasible)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("step %d: scores differ from counting every node (-reference +plugin):\n%s", step, diff)
		}
	}
}

// referenceScores is kube-scheduler's PreScore, Score and NormalizeScore,
// counting every node's pods for every constraint through label maps.
func referenceScores(t *testing.T, pl *PodTopologySpread, pod *v1.Pod, all, feasible []*schedcore.NodeInfo) []string {
	t.Helper()
	var constraints []topologySpreadConstraint
	var err error
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		constraints, err = pl.filterTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, v1.ScheduleAnyway)
	} else {
		constraints, err = pl.buildDefaultConstraints(pod, v1.ScheduleAnyway)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(constraints) == 0 || len(feasible) == 0 {
		return nil
	}
	requireAll := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	ignored := map[string]bool{}
	counts := make([]map[string]int64, len(constraints))
	for i := range counts {
		counts[i] = map[string]int64{}
	}
	for _, ni := range feasible {
		node := ni.Node()
		if requireAll && !nodeLabelsMatchSpreadConstraints(node.Labels, constraints) {
			ignored[node.Name] = true
			continue
		}
		for i, c := range constraints {
			if c.TopologyKey != v1.LabelHostname {
				counts[i][node.Labels[c.TopologyKey]] = 0
			}
		}
	}
	weights := make([]float64, len(constraints))
	for i, c := range constraints {
		sz := len(counts[i])
		if c.TopologyKey == v1.LabelHostname {
			sz = len(feasible) - len(ignored)
		}
		weights[i] = math.Log(float64(sz + 2))
	}
	affinity := helper.GetRequiredNodeAffinity(pod)
	matching := func(ni *schedcore.NodeInfo, sel labels.Selector) int64 {
		var n int64
		for _, pi := range ni.Pods {
			p := pi.Pod
			if p.DeletionTimestamp == nil && p.Namespace == pod.Namespace && !sel.Empty() && sel.Matches(labels.Set(p.Labels)) {
				n++
			}
		}
		return n
	}
	for _, ni := range all {
		node := ni.Node()
		if requireAll && !nodeLabelsMatchSpreadConstraints(node.Labels, constraints) {
			continue
		}
		for i, c := range constraints {
			if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor {
				if ok, _ := affinity.Match(node); !ok {
					continue
				}
			}
			if _, counted := counts[i][node.Labels[c.TopologyKey]]; counted && c.TopologyKey != v1.LabelHostname {
				counts[i][node.Labels[c.TopologyKey]] += matching(ni, c.Selector)
			}
		}
	}
	var out []string
	raw := make([]int64, len(feasible))
	for n, ni := range feasible {
		node := ni.Node()
		if !ignored[node.Name] {
			var score float64
			for i, c := range constraints {
				v, ok := node.Labels[c.TopologyKey]
				if !ok {
					continue
				}
				cnt := counts[i][v]
				if c.TopologyKey == v1.LabelHostname {
					cnt = matching(ni, c.Selector)
				}
				score += float64(cnt)*weights[i] + float64(c.MaxSkew-1)
			}
			raw[n] = int64(math.Round(score))
		}
		out = append(out, fmt.Sprintf("%s raw %d", node.Name, raw[n]))
	}
	var lo int64 = math.MaxInt64
	var hi int64
	for n, ni := range feasible {
		if !ignored[ni.Name()] {
			lo, hi = min(lo, raw[n]), max(hi, raw[n])
		}
	}
	for n, ni := range feasible {
		var s int64
		switch {
		case ignored[ni.Name()]:
		case hi == 0:
			s = schedcore.MaxNodeScore
		default:
			s = schedcore.MaxNodeScore * (hi + lo - raw[n]) / hi
		}
		out = append(out, fmt.Sprintf("%s %d", ni.Name(), s))
	}
	return out
}
