package interpodaffinity

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestExistingAntiAffinityMatchesAllPodMatching compares Filter's
// verdicts on the existing pods' required anti-affinity with kube's rule
// written out plainly (every term of every pod matched against the
// incoming pod, per topology value), with the hostname fast path on and
// off, on random clusters that one long-lived plugin instance sees change
// (pods placed and removed, nodes moved between zones, so its term index
// is brought up to date node by node). The terms are grouped across cycles (termIndex, newAntiIndex);
// this fails if host-scoped groups are counted under the fast path, or if
// a node holding both host-scoped and other terms does not make PreFilter
// evaluate host-scoped ones (termIndex.mixed).
func TestExistingAntiAffinityMatchesAllPodMatching(t *testing.T) {
	for _, fast := range fastPathOpt {
		t.Run(fastPathName("", fast), func(t *testing.T) {
			rng := rand.New(rand.NewSource(29))
			apps := []string{"a", "b", "c"}
			nsNames := []string{"subteam1.team1", "subteam2.team1", "subteam1.team2"}
			keys := []string{"zone", v1.LabelHostname}
			var nodes []*v1.Node
			for i := range 8 {
				l := map[string]string{v1.LabelHostname: fmt.Sprintf("h%d", i%7)} // two nodes share h0
				if rng.Intn(4) > 0 {
					l["zone"] = fmt.Sprintf("z%d", rng.Intn(3))
				}
				nodes = append(nodes, node(fmt.Sprintf("node-%d", i), l))
			}
			var pods []*v1.Pod
			cache := schedcore.NewCache(schedcore.DefaultFeatures)
			for _, ns := range testNamespaces {
				cache.AddNamespace(ns)
			}
			for _, n := range nodes {
				cache.AddNode(n)
			}
			snap := schedcore.NewEmptySnapshot()
			cache.UpdateSnapshot(snap)
			pl := newPlugin(t, nil, snap, fast)
			for step := 0; step < 300; step++ {
				if rng.Intn(10) == 0 {
					// A node moved to another zone, maybe a new one: the
					// label columns change (the groups' shared counts are
					// made again).
					i := rng.Intn(len(nodes))
					n := nodes[i].DeepCopy()
					n.Labels["zone"] = fmt.Sprintf("z%d", rng.Intn(3+step/30))
					nodes[i] = n
					cache.UpdateNode(nil, n)
				}
				if len(pods) > 0 && rng.Intn(3) == 0 {
					i := rng.Intn(len(pods))
					cache.RemovePod(pods[i])
					pods = append(pods[:i], pods[i+1:]...)
				} else {
					p := makePod().Name(fmt.Sprintf("p%d", step)).UID(fmt.Sprintf("uid-%d", step)).Namespace(nsNames[rng.Intn(len(nsNames))]).
						Node(nodes[rng.Intn(len(nodes))].Name).Label("app", apps[rng.Intn(len(apps))])
					for range rng.Intn(3) {
						term := v1.PodAffinityTerm{
							LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": apps[rng.Intn(len(apps))]}},
							TopologyKey:   keys[rng.Intn(len(keys))],
						}
						if rng.Intn(3) == 0 {
							term.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "team1"}}
						}
						p.addTerm(true, term)
					}
					if err := cache.AddPod(p.Obj()); err != nil {
						t.Fatal(err)
					}
					pods = append(pods, p.Obj())
				}
				cache.UpdateSnapshot(snap)
				incoming := makePod().Name("incoming").Namespace(nsNames[rng.Intn(len(nsNames))]).Label("app", apps[rng.Intn(len(apps))]).Obj()
				want := referenceExistingAnti(snap, incoming, fast)
				got := existingAntiVerdicts(t, pl, snap, incoming)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("step %d: verdicts differ from matching every term (-reference +plugin):\n%s", step, diff)
				}
			}
		})
	}
}

// existingAntiVerdicts lists the nodes Filter rejects.
func existingAntiVerdicts(t *testing.T, pl *InterPodAffinity, snap *schedcore.Snapshot, pod *v1.Pod) []string {
	t.Helper()
	ctx := context.Background()
	state := schedcore.NewCycleState()
	_, s := pl.PreFilter(ctx, state, pod, snap.List())
	if s.Code() == schedcore.Skip {
		return nil
	}
	if !s.IsSuccess() {
		t.Fatalf("PreFilter: %v", s)
	}
	var out []string
	for _, ni := range snap.List() {
		if st := pl.Filter(ctx, state, pod, ni); !st.IsSuccess() {
			out = append(out, ni.Name()+": "+fmt.Sprint(st.Reasons()))
		}
	}
	return out
}

// referenceExistingAnti is kube's check of the existing pods' required
// anti-affinity: a node is rejected when a pod carrying a term the
// incoming pod matches is in its domain of the term's key; with the fast
// path, a hostname-scoped term only on the node itself.
func referenceExistingAnti(snap *schedcore.Snapshot, pod *v1.Pod, fast bool) []string {
	nsLabels := labels.Set(snap.NamespaceLabels(pod.Namespace))
	var out []string
	for _, ni := range snap.List() {
		rejected := false
		for _, other := range snap.List() {
			for _, pi := range other.PodsWithRequiredAntiAffinity {
				for i := range pi.RequiredAntiAffinityTerms {
					term := &pi.RequiredAntiAffinityTerms[i]
					if !term.Matches(pod, nsLabels) {
						continue
					}
					if fast && term.TopologyKey == v1.LabelHostname {
						_, ok := ni.Node().Labels[v1.LabelHostname]
						rejected = rejected || ok && other == ni
						continue
					}
					v, ok := other.Node().Labels[term.TopologyKey]
					mine, mineOK := ni.Node().Labels[term.TopologyKey]
					rejected = rejected || ok && mineOK && v == mine
				}
			}
		}
		if rejected {
			out = append(out, ni.Name()+": "+fmt.Sprint([]string{ErrReasonExistingAntiAffinityRulesNotMatch}))
		}
	}
	return out
}
