package schedcore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// MatchCounter and TermCounter count what a scan of every pod of every
// node counts, cycle after cycle, as pods come, go and change labels:
// for selectors whose candidates are on a few nodes (counted each time)
// and on most nodes (remembered per node while it is unchanged), and for
// selectors the label index cannot serve.
func TestCountersMatchScan(t *testing.T) {
	const numNodes = 32
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 19))
			c := schedcore.NewCache(schedcore.DefaultFeatures)
			for i := range numNodes {
				c.AddNode(schedtest.MakeNode(fmt.Sprint("n", i)).Capacity("cpu", "64", "memory", "64Gi", "pods", "110").Obj())
			}
			s := schedcore.NewEmptySnapshot()
			var pods []*v1.Pod
			next := 0
			// Every pod carries common=yes; app and rare vary, rare=r only on
			// the first nodes.
			newPod := func(node int) *v1.Pod {
				next++
				lbl := map[string]string{"common": "yes", "app": fmt.Sprint("a", rng.IntN(3))}
				if node < 2 {
					lbl["rare"] = "r"
				}
				ns := "default"
				if rng.IntN(5) == 0 {
					ns = "other"
				}
				return schedtest.MakePod(fmt.Sprint("p", next)).UID(fmt.Sprint("p", next)).Namespace(ns).LabelMap(lbl).Node(fmt.Sprint("n", node)).Obj()
			}
			sels := []labels.Selector{
				labels.SelectorFromSet(labels.Set{"rare": "r", "app": "a1"}),
				labels.SelectorFromSet(labels.Set{"common": "yes", "app": "a0"}),
				labels.SelectorFromSet(labels.Set{"common": "yes"}),
				mustSelector(t, "app in (a0,a2)"),
			}
			mc := schedcore.NewMatchCounter(8)
			tc := schedcore.NewTermCounter(8)
			ctx := context.Background()
			par := schedcore.NewParallelizer(2)
			for round := range 80 {
				for range 1 + rng.IntN(3) {
					switch op := rng.IntN(10); {
					case op < 5 || len(pods) == 0:
						node := rng.IntN(numNodes)
						if rng.IntN(3) == 0 {
							node = rng.IntN(2)
						}
						p := newPod(node)
						if err := c.AddPod(p); err != nil {
							t.Fatal(err)
						}
						pods = append(pods, p)
					case op < 8:
						// Relabelled in place of the old copy.
						i := rng.IntN(len(pods))
						upd := pods[i].DeepCopy()
						upd.Labels["app"] = fmt.Sprint("a", rng.IntN(3))
						if err := c.UpdatePod(pods[i], upd); err != nil {
							t.Fatal(err)
						}
						pods[i] = upd
					default:
						i := rng.IntN(len(pods))
						c.RemovePod(pods[i])
						pods = append(pods[:i], pods[i+1:]...)
					}
				}
				c.UpdateSnapshot(s)
				for _, ns := range []string{"default", "other"} {
					cs, release := mc.Counts(s, ns, sels)
					for si, sel := range sels {
						for _, ni := range s.List() {
							if got, want := cs[si].Count(ni), schedcore.CountMatchingPods(ni.Pods, sel, ns); got != want {
								t.Fatalf("round %d, namespace %s, selector %q, node %s: MatchCounter counts %d, want %d", round, ns, sel, ni.Name(), got, want)
							}
						}
					}
					// The nodes NodesWithMatches gives hold every match.
					with := map[string]bool{}
					for _, ni := range schedcore.NodesWithMatches(s.List(), cs, func(int) bool { return true }) {
						with[ni.Name()] = true
					}
					release()
					for _, ni := range s.List() {
						for _, sel := range sels {
							if !with[ni.Name()] && schedcore.CountMatchingPods(ni.Pods, sel, ns) > 0 {
								t.Fatalf("round %d, namespace %s: NodesWithMatches leaves out node %s, where %q matches", round, ns, ni.Name(), sel)
							}
						}
					}
					// A LazyCount counts the same before and after it sets up
					// the counter, and its candidates hold every match.
					for _, after := range []int{0, 3, 1000} {
						for _, sel := range sels {
							lc := mc.Lazy(s, ns, sel)
							lc.After = after
							for _, ni := range s.List() {
								if got, want := lc.Count(ni), int64(schedcore.CountMatchingPods(ni.Pods, sel, ns)); got != want {
									t.Fatalf("round %d, namespace %s, selector %q, after %d, node %s: LazyCount counts %d, want %d", round, ns, sel, after, ni.Name(), got, want)
								}
							}
							if nodes, ok := lc.Candidates(); ok {
								cand := map[string]bool{}
								for _, ni := range nodes {
									cand[ni.Name()] = true
								}
								for _, ni := range s.List() {
									if !cand[ni.Name()] && schedcore.CountMatchingPods(ni.Pods, sel, ns) > 0 {
										t.Fatalf("round %d, selector %q: LazyCount's candidates leave out node %s", round, sel, ni.Name())
									}
								}
							}
							lc.Done()
						}
					}
				}
				for si, sel := range sels {
					ls, err := metav1.ParseToLabelSelector(sel.String())
					if err != nil {
						t.Fatal(err)
					}
					owner := schedtest.MakePod("incoming").Namespace("default").Obj()
					terms, err := schedcore.AffinityTerms(owner, []v1.PodAffinityTerm{{LabelSelector: ls, Namespaces: []string{"default", "other"}, TopologyKey: "k"}})
					if err != nil {
						t.Fatal(err)
					}
					nodes, counts := tc.Counts(ctx, par, s, &terms[0])
					got := map[string]int32{}
					for i, ni := range nodes {
						got[ni.Name()] += counts[i]
					}
					for _, ni := range s.List() {
						var want int32
						for _, pi := range ni.Pods {
							if terms[0].Matches(pi.Pod, nil) {
								want++
							}
						}
						if got[ni.Name()] != want {
							t.Fatalf("round %d, term %d (%q), node %s: TermCounter counts %d, want %d", round, si, sel, ni.Name(), got[ni.Name()], want)
						}
					}
				}
			}
		})
	}
}

func mustSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}
