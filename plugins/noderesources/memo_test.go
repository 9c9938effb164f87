package noderesources

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The framework remembers Fit's and BalancedAllocation's scores per
// ScoreKey (plugins/memo_test.go compares it with a fresh framework): the
// key must tell apart pods whose scoring requests differ, even by a
// resource the default requests hide, and be the same for pods that
// request the same.
func TestScoreKeyIsTheScoringRequests(t *testing.T) {
	ctx := context.Background()
	pods := requestPods()
	pods["nothing, ext 2"] = podReq("", rl(extendedRes, "2"))
	pods["memory only 1Gi"] = podReq("", rl("memory", "1Gi"))
	pods["memory only 200M"] = podReq("", rl("memory", "200Mi"))
	// same maps a pod to another with the same scoring requests: Fit counts
	// 100m cpu and 200Mi memory for a container that requests neither.
	balancedSame := map[string]string{"1cpu 1Gi again": "1cpu 1Gi", "1cpu 1Gi in two": "1cpu 1Gi"}
	fitSame := map[string]string{"1cpu 1Gi again": "1cpu 1Gi", "1cpu 1Gi in two": "1cpu 1Gi", "memory only 200M": "nothing", "cpu only, 100m": "nothing"}
	scorers := []struct {
		name string
		same map[string]string
		pl   interface {
			schedcore.PreScorePlugin
			schedcore.NodeLocalScorer
		}
	}{
		{"Fit", fitSame, newFit(t, fitArgsFor(configv1.LeastAllocated, extendedResourceSet))},
		{"BalancedAllocation", balancedSame, newBalanced(t, &configv1.NodeResourcesBalancedAllocationArgs{Resources: extendedResourceSet})},
	}
	for _, sc := range scorers {
		t.Run(sc.name, func(t *testing.T) {
			if sc.pl.ScoreKey(schedcore.NewCycleState(), pods["nothing"], new(schedcore.MemoKey)) {
				t.Error("ScoreKey without PreScore state: true, want false (nothing to key on)")
			}
			keys := map[string]string{}
			for name, pod := range pods {
				state := schedcore.NewCycleState()
				if s := sc.pl.PreScore(ctx, state, pod, nil); s.IsSkip() {
					continue // BalancedAllocation skips best-effort pods
				}
				var k schedcore.MemoKey
				if !sc.pl.ScoreKey(state, pod, &k) {
					t.Fatalf("%s: ScoreKey after PreScore: false", name)
				}
				keys[name] = k.Key()
			}
			for a, ka := range keys {
				for b, kb := range keys {
					same := sc.same
					wantSame := a == b || same[a] == b || same[b] == a || (same[a] != "" && same[a] == same[b])
					if (ka == kb) != wantSame {
						t.Errorf("keys of %q and %q: equal %v, want %v", a, b, ka == kb, wantSame)
					}
				}
			}
		})
	}
}

// The framework remembers the nodes where Fit's Filter passed per FilterKey
// (plugins/memo_test.go compares it with a fresh framework): the key must
// tell apart pods whose requests differ in any resource Filter checks, and
// be the same for pods that request the same in total.
func TestFilterKeyIsTheFilteredRequests(t *testing.T) {
	ctx := context.Background()
	pods := requestPods()
	pods["2cpu 1Gi"] = podReq("", rl("cpu", "2", "memory", "1Gi"))
	pods["1cpu 1Gi 2 ext"] = podReq("", rl("cpu", "1", "memory", "1Gi", extendedRes, "2"))
	pods["1cpu 1Gi 1 eph"] = podReq("", rl("cpu", "1", "memory", "1Gi", "ephemeral-storage", "1"))
	same := map[string]string{"1cpu 1Gi again": "1cpu 1Gi", "1cpu 1Gi in two": "1cpu 1Gi"}
	pl := newFit(t, fitArgsFor(configv1.LeastAllocated, extendedResourceSet))
	if pl.FilterKey(schedcore.NewCycleState(), pods["nothing"], new(schedcore.MemoKey)) {
		t.Error("FilterKey without PreFilter state: true, want false (nothing to key on)")
	}
	keys := map[string]string{}
	for name, pod := range pods {
		state := schedcore.NewCycleState()
		if _, s := pl.PreFilter(ctx, state, pod, nil); !s.IsSuccess() {
			t.Fatalf("%s: PreFilter: %v", name, s)
		}
		var k schedcore.MemoKey
		if !pl.FilterKey(state, pod, &k) {
			t.Fatalf("%s: FilterKey after PreFilter: false", name)
		}
		keys[name] = k.Key()
	}
	for a, ka := range keys {
		for b, kb := range keys {
			wantSame := a == b || same[a] == b || same[b] == a || (same[a] != "" && same[a] == same[b])
			if (ka == kb) != wantSame {
				t.Errorf("keys of %q and %q: equal %v, want %v", a, b, ka == kb, wantSame)
			}
		}
	}
}

// requestPods are pods whose requests the memo keys must tell apart, or
// not: the same total in one container or two.
func requestPods() map[string]*v1.Pod {
	return map[string]*v1.Pod{
		"1cpu 1Gi":        podReq("", rl("cpu", "1", "memory", "1Gi")),
		"1cpu 1Gi again":  podReq("", rl("cpu", "1", "memory", "1Gi")),
		"1cpu 1Gi in two": podReq("", rl("cpu", "500m", "memory", "512Mi"), rl("cpu", "500m", "memory", "512Mi")),
		"1cpu 2Gi":        podReq("", rl("cpu", "1", "memory", "2Gi")),
		"1cpu 1Gi 1 ext":  podReq("", rl("cpu", "1", "memory", "1Gi", extendedRes, "1")),
		"cpu only":        podReq("", rl("cpu", "1")),
		"cpu only, 100m":  podReq("", rl("cpu", "100m")),
		"nothing":         podReq("", v1.ResourceList{}),
	}
}
