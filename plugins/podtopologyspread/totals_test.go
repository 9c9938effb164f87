package podtopologyspread

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
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// comparePreScore runs PreScore on the same feasible nodes (a random part
// of the list) with soft counts from totals (p) and node by node
// (scratch), and compares the states and the scores.
func comparePreScore(t *testing.T, p, scratch *PodTopologySpread, pod *v1.Pod, snap *schedcore.Snapshot, rng *rand.Rand, step int) {
	t.Helper()
	var feasible []*schedcore.NodeInfo
	for _, ni := range snap.List() {
		if rng.Intn(3) > 0 {
			feasible = append(feasible, ni)
		}
	}
	ctx := context.Background()
	gotState, wantState := schedcore.NewCycleState(), schedcore.NewCycleState()
	gs := p.PreScore(ctx, gotState, pod, feasible)
	ws := scratch.PreScore(ctx, wantState, pod, feasible)
	if gs.Code() != ws.Code() {
		t.Fatalf("step %d, pod %s: PreScore %v, want %v", step, pod.Name, gs, ws)
	}
	if !ws.IsSuccess() {
		return
	}
	if diff := cmp.Diff(preScoreView(t, wantState, feasible), preScoreView(t, gotState, feasible), stateCmpOpts...); diff != "" {
		t.Fatalf("step %d, pod %s: PreScore state from totals differs (-scratch +totals):\n%s", step, pod.Name, diff)
	}
	for _, ni := range feasible {
		g, _ := p.Score(ctx, gotState, pod, ni)
		w, _ := scratch.Score(ctx, wantState, pod, ni)
		if g != w {
			t.Fatalf("step %d, pod %s, node %s: score %d, want %d", step, pod.Name, ni.Name(), g, w)
		}
	}
}

// PreFilter's counts from totals kept across cycles (hardCounts, over the
// snapshot's list) equal the counts made node by node (countHard, over a
// copy of the list) on random clusters changing between cycles: pods added
// and removed (terminating ones too, in two namespaces), nodes relabelled,
// tainted, added, removed and replaced, and pods whose constraints differ
// in selector, keys, inclusion policies, node affinity and tolerations,
// so that totals are reused, missed and evicted (a small cache). Pods with
// soft constraints compare PreScore's state and scores the same way. Half
// the seeds count refreshed nodes through the MatchCounter.
func TestHardCountsFromTotalsMatchScratch(t *testing.T) {
	selectors := []*metav1.LabelSelector{
		matchLabels("app", "a"),
		matchLabels("app", "b", "tier", "x"),
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"a", "b"}}}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}},
	}
	keySets := [][]string{{v1.LabelTopologyZone}, {"rack"}, {v1.LabelHostname}, {v1.LabelTopologyZone, "rack"}, {"rack", v1.LabelHostname}}
	// A spec picks a pod's namespace, selector, keys, policies, node
	// selector and toleration; pods differ from a few base specs in one of
	// them, so that totals keyed without it would be shared and wrong.
	type spec [7]int
	sizes := spec{2, len(selectors), len(keySets), 4, 2, 2, 2}
	podOf := func(sp spec) *v1.Pod {
		b := mkPod(fmt.Sprint("in", sp), "app", "a", "tier", "x").namespace([]string{"default", "team"}[sp[0]])
		for _, key := range keySets[sp[2]] {
			var opts []func(*v1.TopologySpreadConstraint)
			switch sp[3] {
			case 1:
				opts = append(opts, affinityPolicy(ignore))
			case 2:
				opts = append(opts, taintsPolicy(honor))
			case 3:
				opts = append(opts, affinityPolicy(ignore), taintsPolicy(honor))
			}
			b.spread(1, key, []v1.UnsatisfiableConstraintAction{dns, sa}[sp[6]], selectors[sp[1]], opts...)
		}
		if sp[4] == 1 {
			b.nodeSelector("rack", "r1")
		}
		if sp[5] == 1 {
			b.tolerate("dedicated")
		}
		return b.obj()
	}
	for seed := int64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			if seed%2 == 0 {
				// Refreshed nodes counted by the MatchCounter.
				defer func(n int) { lazyCountAfter = n }(lazyCountAfter)
				lazyCountAfter = 2
			}
			var bases []spec
			for range 4 {
				var sp spec
				for d := range sp {
					sp[d] = rng.Intn(sizes[d])
				}
				bases = append(bases, sp)
			}
			c := schedcore.NewCache(schedcore.DefaultFeatures)
			nodes := map[string]bool{}
			setNode := func(name string) {
				var kv []string
				if rng.Intn(6) > 0 {
					kv = append(kv, v1.LabelTopologyZone, fmt.Sprint("z", rng.Intn(3)))
				}
				if rng.Intn(8) > 0 {
					kv = append(kv, v1.LabelHostname, name)
				}
				if rng.Intn(3) > 0 {
					kv = append(kv, "rack", fmt.Sprint("r", rng.Intn(3)))
				}
				n := schedtest.MakeNode(name).OnlyLabels(kv...).Obj()
				if rng.Intn(4) == 0 {
					n = tainted(n, v1.Taint{Key: "dedicated", Effect: v1.TaintEffectNoSchedule})
				}
				c.AddNode(n)
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
			for i := range 10 {
				setNode(fmt.Sprint("node-", i))
			}
			var pods []*v1.Pod
			snap := schedcore.NewEmptySnapshot()
			pl, err := New(context.Background(), nil, schedcore.NewHandle(snap, 4))
			if err != nil {
				t.Fatal(err)
			}
			p := pl.(*PodTopologySpread)
			p.totals.SetMaxKeys(12)
			p.members.SetMaxKeys(4)
			sp, err := New(context.Background(), nil, schedcore.NewHandle(snap, 4))
			if err != nil {
				t.Fatal(err)
			}
			scratch := sp.(*PodTopologySpread)
			scratch.noSoftTotals = true
			next := 0
			for step := range 150 {
				for range 1 + rng.Intn(3) {
					switch op := rng.Intn(14); {
					case op < 8:
						ns := names()
						w := schedtest.MakePod(fmt.Sprint("p", next)).UID(fmt.Sprint("p", next)).
							Namespace([]string{"default", "team"}[rng.Intn(2)]).Node(ns[rng.Intn(len(ns))]).
							Label("app", []string{"a", "b", "c"}[rng.Intn(3)])
						if rng.Intn(2) == 0 {
							w.Label("tier", []string{"x", "y"}[rng.Intn(2)])
						}
						pod := w.Obj()
						if rng.Intn(10) == 0 {
							pod = terminating(pod)
						}
						next++
						if err := c.AddPod(pod); err != nil {
							t.Fatal(err)
						}
						pods = append(pods, pod)
					case op < 10 && len(pods) > 0:
						i := rng.Intn(len(pods))
						c.RemovePod(pods[i])
						pods = slices.Delete(pods, i, i+1)
					case op < 12:
						ns := names()
						setNode(ns[rng.Intn(len(ns))])
					case op == 12:
						setNode(fmt.Sprint("node-", 10+step))
					case len(nodes) > 4:
						ns := names()
						name := ns[rng.Intn(len(ns))]
						c.RemoveNode(schedtest.MakeNode(name).Obj())
						delete(nodes, name)
						pods = slices.DeleteFunc(pods, func(p *v1.Pod) bool { return p.Spec.NodeName == name })
						if rng.Intn(2) == 0 {
							setNode(fmt.Sprint("new-", step))
						}
					}
				}
				c.UpdateSnapshot(snap)
				for range 3 {
					sp := bases[rng.Intn(len(bases))]
					if d := rng.Intn(2 * len(sp)); d < len(sp) {
						sp[d] = rng.Intn(sizes[d])
					}
					pod := podOf(sp)
					if sp[6] == 1 {
						comparePreScore(t, p, scratch, pod, snap, rng, step)
						continue
					}
					got, err := p.calPreFilterState(pod)
					if err != nil {
						t.Fatal(err)
					}
					fresh, err := New(context.Background(), nil, schedcore.NewHandle(snap, 4))
					if err != nil {
						t.Fatal(err)
					}
					want, err := fresh.(*PodTopologySpread).calPreFilterState(pod)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(filterViewOf(want), filterViewOf(got), stateCmpOpts...); diff != "" {
						t.Fatalf("step %d, pod %s: counts from totals differ from scratch (-scratch +totals):\n%s", step, pod.Name, diff)
					}
					for i := range want.Constraints {
						if w, g := want.counts.NumCounted(i), got.counts.NumCounted(i); w != g {
							t.Fatalf("step %d, pod %s, constraint %d: %d domains counted, want %d", step, pod.Name, i, g, w)
						}
					}
				}
			}
		})
	}
}
