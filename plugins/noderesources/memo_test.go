package noderesources

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The scores NodeResourcesFit and NodeResourcesBalancedAllocation remember
// per request vector must be those of a fresh instance after every change
// of a node: pods added and removed, allocatable changed. Two pods with
// different requests, scored in turn, must not get each other's scores.
func TestRememberedScoresMatchFreshInstances(t *testing.T) {
	ctx := context.Background()
	plugins := []struct {
		name string
		new  func(h *schedcore.Handle) (schedcore.Plugin, error)
		memo func(schedcore.Plugin) *schedcore.VerdictMemo
	}{
		{"Fit/LeastAllocated", func(h *schedcore.Handle) (schedcore.Plugin, error) {
			return NewFit(ctx, fitArgsFor(configv1.LeastAllocated, defaultResources), h)
		}, func(p schedcore.Plugin) *schedcore.VerdictMemo { return p.(*Fit).scorer.memo }},
		{"Fit/MostAllocated", func(h *schedcore.Handle) (schedcore.Plugin, error) {
			return NewFit(ctx, fitArgsFor(configv1.MostAllocated, extendedResourceSet), h)
		}, func(p schedcore.Plugin) *schedcore.VerdictMemo { return p.(*Fit).scorer.memo }},
		{"BalancedAllocation", func(h *schedcore.Handle) (schedcore.Plugin, error) {
			return NewBalancedAllocation(ctx, nil, h)
		}, func(p schedcore.Plugin) *schedcore.VerdictMemo { return p.(*BalancedAllocation).scorer.memo }},
	}
	incoming := []*v1.Pod{
		podReq("", rl("cpu", "1", "memory", "1Gi")),
		podReq("", rl("cpu", "2", "memory", "512Mi", extendedRes, "1")),
		podReq("", rl("cpu", "250m", "memory", "3Gi")),
	}
	for _, tc := range plugins {
		t.Run(tc.name, func(t *testing.T) {
			cache := schedcore.NewCache(schedcore.DefaultFeatures)
			snap := schedcore.NewEmptySnapshot()
			nodes := []*v1.Node{
				nodeWith("n0", "cpu", "4", "memory", "8Gi", extendedRes, "4"),
				nodeWith("n1", "cpu", "8", "memory", "8Gi"),
				nodeWith("n2", "cpu", "4", "memory", "16Gi", extendedRes, "2"),
			}
			for _, n := range nodes {
				cache.AddNode(n)
			}
			h := schedcore.NewHandle(snap, 1)
			long, err := tc.new(h)
			if err != nil {
				t.Fatal(err)
			}
			var placed []*v1.Pod
			for step := 0; step < 12; step++ {
				switch step % 4 {
				case 0, 1: // a pod placed
					p := podReq(fmt.Sprintf("n%d", step%3), rl("cpu", fmt.Sprintf("%dm", 300+100*step), "memory", fmt.Sprintf("%dMi", 256*(step+1))))
					p.Name, p.UID = fmt.Sprintf("p%d", step), types.UID(fmt.Sprint("uid", step))
					if err := cache.AddPod(p); err != nil {
						t.Fatal(err)
					}
					placed = append(placed, p)
				case 2: // a pod gone
					cache.RemovePod(placed[0])
					placed = placed[1:]
				case 3: // a node's allocatable changed
					n := nodes[step%3].DeepCopy()
					n.Status.Allocatable = rl("pods", "32", "cpu", fmt.Sprint(2+step), "memory", "12Gi")
					cache.AddNode(n)
				}
				cache.UpdateSnapshot(snap)
				for i, pod := range incoming {
					fresh, err := tc.new(h)
					if err != nil {
						t.Fatal(err)
					}
					want := scoreAll(t, fresh, pod, snap)
					if got := scoreAll(t, long, pod, snap); !cmp.Equal(want, got) {
						t.Fatalf("step %d, pod %d: remembering instance differs from a fresh one (-fresh +remembering):\n%s", step, i, cmp.Diff(want, got))
					}
				}
			}
			if n := tc.memo(long).Len(); n != len(incoming) {
				t.Errorf("the memo holds %d request vectors, want %d (one per incoming pod)", n, len(incoming))
			}
		})
	}
}

// scoreAll runs PreScore and Score on every node of the snapshot, twice (the
// second time from what the first remembered).
func scoreAll(t *testing.T, p schedcore.Plugin, pod *v1.Pod, snap *schedcore.Snapshot) []string {
	t.Helper()
	var out []string
	for range 2 {
		state := schedcore.NewCycleState()
		if s := p.(schedcore.PreScorePlugin).PreScore(context.Background(), state, pod, snap.List()); !s.IsSuccess() {
			t.Fatalf("PreScore: %v", s)
		}
		for _, ni := range snap.List() {
			sc, s := p.(schedcore.ScorePlugin).Score(context.Background(), state, pod, ni)
			if !s.IsSuccess() {
				t.Fatalf("Score(%s): %v", ni.Name(), s)
			}
			out = append(out, fmt.Sprintf("%s %d", ni.Name(), sc))
		}
	}
	return out
}
