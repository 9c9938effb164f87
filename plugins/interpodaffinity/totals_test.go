package interpodaffinity

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// countsView is a DomainCounts by key name and value, with the number of
// domains counted per key.
func countsView(d *schedcore.DomainCounts) map[string]map[string]int64 {
	m := map[string]map[string]int64{}
	for k := 0; k < d.NumKeys(); k++ {
		vals := map[string]int64{"#counted": int64(d.NumCounted(k))}
		d.ForEach(k, func(dom schedcore.Domain, n int64) { vals[d.Value(k, dom)] = n })
		m[fmt.Sprint(k, d.KeyName(k))] = vals
	}
	return m
}

// PreFilter's counts of the incoming pod's required terms from totals kept
// across cycles (incomingTotals, over the snapshot's list) equal the
// counts made from every node's pods (over a copy of the list) on random
// clusters changing between cycles (pods placed and removed, nodes
// relabelled, added and removed), for incoming pods whose terms differ in
// selector, namespaces and topology keys (two terms may share a key), with
// a small cache so that totals are reused, missed and evicted.
func TestIncomingTotalsMatchScratch(t *testing.T) {
	apps := []string{"a", "b", "c"}
	nsNames := []string{"subteam1.team1", "subteam2.team1", "subteam1.team2"}
	keys := []string{"zone", v1.LabelHostname, "rack"}
	term := func(app, key string, nsSel bool) v1.PodAffinityTerm {
		t := v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: key}
		if nsSel {
			t.NamespaceSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"team": "team1"}}
		}
		return t
	}
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			// The incoming pods: a few, reused across cycles.
			var incoming []*v1.Pod
			for i := range 8 {
				p := makePod().Name(fmt.Sprint("in", i)).Namespace(nsNames[rng.Intn(len(nsNames))]).Label("app", "a")
				for range rng.Intn(3) {
					p.addTerm(false, term(apps[rng.Intn(len(apps))], keys[rng.Intn(len(keys))], rng.Intn(3) == 0))
				}
				for range rng.Intn(3) {
					p.addTerm(true, term(apps[rng.Intn(len(apps))], keys[rng.Intn(len(keys))], rng.Intn(3) == 0))
				}
				incoming = append(incoming, p.Obj())
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
			for i := range 8 {
				setNode(fmt.Sprint("node-", i))
			}
			snap := schedcore.NewEmptySnapshot()
			cache.UpdateSnapshot(snap)
			pl := newPlugin(t, nil, snap, false)
			pl.requiredTotals.SetMaxKeys(6)
			var pods []*v1.Pod
			for step := range 200 {
				switch op := rng.Intn(10); {
				case op < 5:
					ns := names()
					p := makePod().Name(fmt.Sprint("p", step)).UID(fmt.Sprint("uid-", step)).Namespace(nsNames[rng.Intn(len(nsNames))]).
						Node(ns[rng.Intn(len(ns))]).Label("app", apps[rng.Intn(len(apps))]).Obj()
					if err := cache.AddPod(p); err != nil {
						t.Fatal(err)
					}
					pods = append(pods, p)
				case op < 7 && len(pods) > 0:
					i := rng.Intn(len(pods))
					cache.RemovePod(pods[i])
					pods = slices.Delete(pods, i, i+1)
				case op < 9:
					ns := names()
					setNode(ns[rng.Intn(len(ns))])
				case rng.Intn(2) == 0:
					setNode(fmt.Sprint("new-", step))
				case len(nodes) > 4:
					ns := names()
					name := ns[rng.Intn(len(ns))]
					cache.RemoveNode(node(name, nil))
					delete(nodes, name)
					pods = slices.DeleteFunc(pods, func(p *v1.Pod) bool { return p.Spec.NodeName == name })
				}
				cache.UpdateSnapshot(snap)
				for range 2 {
					pod := incoming[rng.Intn(len(incoming))]
					pi := schedcore.NewPodInfo(pod)
					for i := range pi.RequiredAffinityTerms {
						mergeNamespaces(&pi.RequiredAffinityTerms[i], snap)
					}
					for i := range pi.RequiredAntiAffinityTerms {
						mergeNamespaces(&pi.RequiredAntiAffinityTerms[i], snap)
					}
					// A fresh plugin fills its totals from scratch.
					fresh := newPlugin(t, nil, snap, false)
					gotAff, gotAnti := pl.incomingCounts(pi.RequiredAffinityTerms, pi.RequiredAntiAffinityTerms)
					wantAff, wantAnti := fresh.incomingCounts(pi.RequiredAffinityTerms, pi.RequiredAntiAffinityTerms)
					if diff := cmp.Diff(countsView(wantAff), countsView(gotAff)); diff != "" {
						t.Fatalf("step %d, pod %s: affinity counts from totals differ (-scratch +totals):\n%s", step, pod.Name, diff)
					}
					if diff := cmp.Diff(countsView(wantAnti), countsView(gotAnti)); diff != "" {
						t.Fatalf("step %d, pod %s: anti-affinity counts from totals differ (-scratch +totals):\n%s", step, pod.Name, diff)
					}
				}
			}
		})
	}
}
