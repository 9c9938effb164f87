package nodeaffinity

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The matches of a preferred term are remembered per term, whatever its
// weight, and per node as it is: pods weighting one term differently share
// them, and a relabelled node is matched again.
func TestRememberedTermMatchesFollowWeightsAndLabels(t *testing.T) {
	ctx := context.Background()
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	snap := schedcore.NewEmptySnapshot()
	cache.AddNode(makeNode("node1", map[string]string{"rack": "r1"}))
	cache.AddNode(makeNode("node2", map[string]string{"rack": "r2"}))
	cache.UpdateSnapshot(snap)
	p, err := New(ctx, nil, schedcore.NewHandle(snap, 1))
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*NodeAffinity)
	scores := func(pod *v1.Pod) map[string]int64 {
		state := schedcore.NewCycleState()
		if s := pl.PreScore(ctx, state, pod, snap.List()); !s.IsSuccess() {
			t.Fatal(s)
		}
		if s, _ := schedcore.ReadAs[*preScoreState](state, preScoreStateKey); s.termViews == nil {
			t.Fatal("the terms' matches are not remembered")
		}
		out := map[string]int64{}
		for _, ni := range snap.List() {
			sc, s := pl.Score(ctx, state, pod, ni)
			if !s.IsSuccess() {
				t.Fatal(s)
			}
			out[ni.Node().Name] = sc
		}
		return out
	}
	r1 := func(w int32) *v1.Pod { return preferredPod(pref(w, req("rack", v1.NodeSelectorOpIn, "r1"))) }
	two := preferredPod(pref(3, req("rack", v1.NodeSelectorOpIn, "r1")), pref(4, req("rack", v1.NodeSelectorOpIn, "r2")))
	check := func(step string, pod *v1.Pod, want map[string]int64) {
		t.Helper()
		if diff := cmp.Diff(want, scores(pod)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", step, diff)
		}
	}
	check("weight 5", r1(5), map[string]int64{"node1": 5, "node2": 0})
	check("weight 7, same term", r1(7), map[string]int64{"node1": 7, "node2": 0})
	check("two terms", two, map[string]int64{"node1": 3, "node2": 4})
	cache.UpdateNode(nil, makeNode("node1", map[string]string{"rack": "r2"}))
	cache.UpdateNode(nil, makeNode("node2", map[string]string{"rack": "r1"}))
	cache.UpdateSnapshot(snap)
	check("relabelled, weight 6", r1(6), map[string]int64{"node1": 0, "node2": 6})
	check("relabelled, weight 5", r1(5), map[string]int64{"node1": 0, "node2": 5})
	check("relabelled, two terms", two, map[string]int64{"node1": 4, "node2": 3})
	if n := pl.terms.Len(); n != 2 {
		t.Errorf("remembered %d terms, want 2 (one per selector)", n)
	}
}
