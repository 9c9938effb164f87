package interpodaffinity

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/plugintest"
)

// TestPreferredTermScoresMatchAllPodMatching compares the scores of an
// incoming pod's preferred (anti-)affinity terms with kube's scoring
// written out plainly (every pod of every node matched against every
// term) on random clusters: selectors the pod label index can answer (one
// label pair) and ones it cannot, terms over the pod's namespace, a list,
// a namespace selector and every namespace ({}), terminating pods (which
// count). The counts come from the index for most terms
// (schedcore.TermCounter); this fails if the index is used for a term
// whose namespaces are not a list, or if it leaves terminating pods out.
func TestPreferredTermScoresMatchAllPodMatching(t *testing.T) {
	rng := rand.New(rand.NewSource(23))
	apps := []string{"a", "b", "c"}
	nsNames := []string{"subteam1.team1", "subteam2.team1", "subteam1.team2", "subteam2.team2"}
	selectors := []*metav1.LabelSelector{
		{MatchLabels: map[string]string{"app": "a"}},
		{MatchLabels: map[string]string{"app": "b", "tier": "x"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "c"}}}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}},
	}
	keys := []string{"zone", "host", "rack"}
	for step := 0; step < 300; step++ {
		var nodes []*v1.Node
		for i := range 3 + rng.Intn(10) {
			l := map[string]string{"host": fmt.Sprintf("n%d", i)}
			if rng.Intn(5) > 0 {
				l["zone"] = fmt.Sprintf("z%d", rng.Intn(3))
			}
			if rng.Intn(3) > 0 {
				l["rack"] = fmt.Sprintf("r%d", rng.Intn(3))
			}
			nodes = append(nodes, node(fmt.Sprintf("node-%d", i), l))
		}
		var pods []*v1.Pod
		for i := range rng.Intn(30) {
			p := makePod().Name(fmt.Sprintf("p%d", i)).UID(fmt.Sprintf("uid-%d", i)).Namespace(nsNames[rng.Intn(len(nsNames))]).
				Node(nodes[rng.Intn(len(nodes))].Name).Label("app", apps[rng.Intn(len(apps))])
			if rng.Intn(2) == 0 {
				p.Label("tier", []string{"x", "y"}[rng.Intn(2)])
			}
			pod := p.Obj()
			if rng.Intn(8) == 0 {
				now := metav1.Now()
				pod.DeletionTimestamp = &now
			}
			pods = append(pods, pod)
		}
		incoming := makePod().Name("incoming").Namespace(nsNames[rng.Intn(len(nsNames))]).Obj()
		incoming.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{}, PodAntiAffinity: &v1.PodAntiAffinity{}}
		for range 1 + rng.Intn(3) {
			term := v1.PodAffinityTerm{LabelSelector: selectors[rng.Intn(len(selectors))], TopologyKey: keys[rng.Intn(len(keys))]}
			switch rng.Intn(5) {
			case 1:
				term.Namespaces = []string{nsNames[rng.Intn(len(nsNames))], nsNames[rng.Intn(len(nsNames))]}
			case 2:
				term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "team1"}}
			case 3:
				term.NamespaceSelector = &metav1.LabelSelector{}
			}
			w := v1.WeightedPodAffinityTerm{Weight: int32(1 + rng.Intn(100)), PodAffinityTerm: term}
			if rng.Intn(2) == 0 {
				incoming.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(incoming.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, w)
			} else {
				incoming.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(incoming.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, w)
			}
		}
		snap := newSnapshot(pods, nodes, testNamespaces)
		pl := newPlugin(t, nil, snap, false)
		want := referencePreferredScores(t, snap, incoming)
		got := plugintest.Scores(t, pl, incoming, snap.List())
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("step %d: scores differ from matching every pod (-reference +plugin):\n%s", step, diff)
		}
	}
}

// referencePreferredScores is kube's scoring of the incoming pod's
// preferred terms (the existing pods have none): each pod of each node
// matching a term adds the term's weight (negated for anti-affinity) to
// the node's domain of the term's key.
func referencePreferredScores(t *testing.T, snap *schedcore.Snapshot, pod *v1.Pod) []string {
	t.Helper()
	type weighted struct {
		v1.PodAffinityTerm
		weight int64
	}
	var terms []weighted
	for _, w := range pod.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		terms = append(terms, weighted{w.PodAffinityTerm, int64(w.Weight)})
	}
	for _, w := range pod.Spec.Affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution {
		terms = append(terms, weighted{w.PodAffinityTerm, -int64(w.Weight)})
	}
	inNamespaces := func(term v1.PodAffinityTerm, ns string) bool {
		if len(term.Namespaces) == 0 && term.NamespaceSelector == nil {
			return ns == pod.Namespace
		}
		for _, n := range term.Namespaces {
			if n == ns {
				return true
			}
		}
		if term.NamespaceSelector == nil {
			return false
		}
		sel, err := metav1.LabelSelectorAsSelector(term.NamespaceSelector)
		if err != nil {
			t.Fatal(err)
		}
		return sel.Matches(labels.Set(snap.NamespaceLabels(ns)))
	}
	topo := map[string]map[string]int64{}
	for _, ni := range snap.List() {
		for _, term := range terms {
			v, ok := ni.Node().Labels[term.TopologyKey]
			if !ok {
				continue
			}
			sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector)
			if err != nil {
				t.Fatal(err)
			}
			for _, pi := range ni.Pods {
				if inNamespaces(term.PodAffinityTerm, pi.Pod.Namespace) && sel.Matches(labels.Set(pi.Pod.Labels)) {
					if topo[term.TopologyKey] == nil {
						topo[term.TopologyKey] = map[string]int64{}
					}
					topo[term.TopologyKey][v] += term.weight
				}
			}
		}
	}
	if len(topo) == 0 {
		return nil
	}
	var out []string
	raw := make([]int64, 0, len(snap.List()))
	for _, ni := range snap.List() {
		var score int64
		for key, values := range topo {
			if v, ok := ni.Node().Labels[key]; ok {
				score += values[v]
			}
		}
		raw = append(raw, score)
		out = append(out, fmt.Sprintf("%s raw %d", ni.Name(), score))
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, s := range raw {
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, ni := range snap.List() {
		f := float64(0)
		if hi > lo {
			f = float64(schedcore.MaxNodeScore) * (float64(raw[i]-lo) / float64(hi-lo))
		}
		out = append(out, fmt.Sprintf("%s %d", ni.Name(), int64(f)))
	}
	return out
}
