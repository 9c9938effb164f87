package interpodaffinity

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// scoresView is PreScore's summed weights by key name and value, with the
// number of domains counted per key (key order follows the term groups').
func scoresView(t *testing.T, pl *InterPodAffinity, pod *v1.Pod) map[string]map[string]int64 {
	t.Helper()
	state := schedcore.NewCycleState()
	st := pl.PreScore(context.Background(), state, pod, nil)
	if !st.IsSuccess() {
		return map[string]map[string]int64{"status": {st.Code().String(): 1}}
	}
	s, err := schedcore.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]int64{}
	for k := 0; k < s.scores.NumKeys(); k++ {
		vals := map[string]int64{"#counted": int64(s.scores.NumCounted(k))}
		s.scores.ForEach(k, func(dom schedcore.Domain, n int64) { vals[s.scores.Value(k, dom)] = n })
		m[s.scores.KeyName(k)] = vals
	}
	return m
}

// PreScore's sums of the existing pods' terms from the term index kept
// across cycles (updated by what a changed node's entries change, added by
// domain from each group's own counts) equal a fresh plugin's over the
// same snapshot, on random clusters changing between cycles: pods with
// required and preferred (anti-)affinity terms placed and removed (several
// pods of one term on a node), nodes relabelled (new label columns: the
// groups' counts by domain are stale), added and removed. This fails if a
// group's counts by domain are added over another label column, if a
// node's entries are replaced other than by their difference, or if a node
// that gained a pod with terms keeps its entries (keepsScoreEntries).
func TestExistingTermScoresMatchFreshIndex(t *testing.T) {
	apps := []string{"a", "b", "c"}
	keys := []string{"zone", v1.LabelHostname, "rack"}
	term := func(app, key string) v1.PodAffinityTerm {
		return v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: key}
	}
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			// Few distinct terms, so that pods share groups.
			affinity := func() *v1.Affinity {
				a := &v1.Affinity{PodAffinity: &v1.PodAffinity{}, PodAntiAffinity: &v1.PodAntiAffinity{}}
				for range rng.Intn(2) {
					a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term(apps[rng.Intn(len(apps))], keys[rng.Intn(len(keys))]))
				}
				// Required anti-affinity adds nothing to the scores: a pod
				// with it alone leaves its node's entries as they were.
				for range rng.Intn(2) {
					a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term(apps[rng.Intn(len(apps))], keys[rng.Intn(len(keys))]))
				}
				for range rng.Intn(3) {
					w := v1.WeightedPodAffinityTerm{Weight: int32(1 + rng.Intn(3)), PodAffinityTerm: term(apps[rng.Intn(len(apps))], keys[rng.Intn(len(keys))])}
					if rng.Intn(2) == 0 {
						a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, w)
					} else {
						a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution, w)
					}
				}
				return a
			}
			cache := schedcore.NewCache(schedcore.DefaultFeatures)
			for _, ns := range testNamespaces {
				cache.AddNamespace(ns)
			}
			nodes := map[string]bool{}
			setNode := func(name string) {
				l := map[string]string{v1.LabelHostname: name}
				if rng.Intn(4) > 0 {
					l["zone"] = fmt.Sprint("z", rng.Intn(3))
				}
				if rng.Intn(3) > 0 {
					l["rack"] = fmt.Sprint("r", rng.Intn(3))
				}
				cache.AddNode(node(name, l))
				nodes[name] = true
			}
			names := func() []string {
				var ns []string
				for n := range nodes {
					ns = append(ns, n)
				}
				slices.Sort(ns)
				return ns
			}
			for i := range 6 {
				setNode(fmt.Sprint("node-", i))
			}
			snap := schedcore.NewEmptySnapshot()
			cache.UpdateSnapshot(snap)
			pl := newPlugin(t, nil, snap, false)
			var pods []*v1.Pod
			for step := range 300 {
				switch op := rng.Intn(10); {
				case op < 6:
					ns := names()
					// A pod without affinity leaves its node's entries as
					// they were (the index keeps them, keepsScoreEntries).
					aff := affinity()
					if rng.Intn(3) == 0 {
						aff = nil
					}
					p := makePod().Name(fmt.Sprint("p", step)).UID(fmt.Sprint("uid-", step)).Namespace("subteam1.team1").
						Node(ns[rng.Intn(len(ns))]).Label("app", apps[rng.Intn(len(apps))]).Affinity(aff).Obj()
					if err := cache.AddPod(p); err != nil {
						t.Fatal(err)
					}
					pods = append(pods, p)
				case op < 8 && len(pods) > 0:
					i := rng.Intn(len(pods))
					cache.RemovePod(pods[i])
					pods = slices.Delete(pods, i, i+1)
				case op < 9:
					ns := names()
					setNode(ns[rng.Intn(len(ns))])
				case rng.Intn(2) == 0:
					setNode(fmt.Sprint("new-", step))
				case len(nodes) > 3:
					ns := names()
					name := ns[rng.Intn(len(ns))]
					cache.RemoveNode(node(name, nil))
					delete(nodes, name)
					pods = slices.DeleteFunc(pods, func(p *v1.Pod) bool { return p.Spec.NodeName == name })
				}
				cache.UpdateSnapshot(snap)
				for _, app := range apps {
					pod := makePod().Name("incoming").Namespace("subteam1.team1").Label("app", app).Obj()
					want := scoresView(t, newPlugin(t, nil, snap, false), pod)
					got := scoresView(t, pl, pod)
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("step %d, app %s: scores from the kept index differ (-fresh +kept):\n%s", step, app, diff)
					}
				}
			}
		})
	}
}
