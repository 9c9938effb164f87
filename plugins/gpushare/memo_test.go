package gpushare

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// GpuShare keeps each node's GPU state, and FGDScore each node's
// fragmentation, for as long as the node's generation is unchanged. Over
// random cluster changes (GPU pods added and removed, nodes replaced, added
// and removed) both must decide exactly as fresh instances that keep
// nothing. Pods carry their GPU index, so a fresh instance derives the same
// accounting.
func TestRememberedStateMatchesFreshInstances(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	snap := schedcore.NewEmptySnapshot()
	node := func(i int) *v1.Node {
		return gpuNode(fmt.Sprintf("n%d", i), 1+rng.Intn(4), []string{"T4", "P100"}[rng.Intn(2)], int64(8000+rng.Intn(8)*4000))
	}
	nodeCount := 8
	for i := 0; i < nodeCount; i++ {
		cache.AddNode(node(i))
	}
	h := schedcore.NewHandle(snap, 2)
	ctx := context.Background()
	args := &FGDScoreArgs{TypicalPods: handTypical, PopularityThreshold: ptr(int32(100))}
	longShare := newGpuShare(t, nil, h)
	longFGD := newPolicy(t, NewFGD, args, h).(*FGDScore)
	var placed []*v1.Pod
	for step := 0; step < 300; step++ {
		switch r := rng.Intn(10); {
		case r < 6 || len(placed) == 0:
			cache.UpdateSnapshot(snap)
			ni := snap.List()[rng.Intn(len(snap.List()))]
			n := int(ni.Allocatable.Get(DefaultGPUResource))
			p := gpuPod(fmt.Sprintf("p%d", step), 1, int64(100*(1+rng.Intn(5))), "", int64(1000*rng.Intn(4)))
			p = placedOn(p, ni.Name(), rng.Intn(n))
			if err := cache.AddPod(p); err == nil {
				placed = append(placed, p)
			}
		case r < 8:
			i := rng.Intn(len(placed))
			cache.RemovePod(placed[i])
			placed = append(placed[:i], placed[i+1:]...)
		case r < 9:
			cache.AddNode(node(rng.Intn(nodeCount)))
		default:
			if rng.Intn(2) == 0 {
				cache.AddNode(node(nodeCount))
				nodeCount++
			} else {
				cache.RemoveNode(gpuNode(fmt.Sprintf("n%d", rng.Intn(nodeCount)), 0, "", 0))
			}
		}
		cache.UpdateSnapshot(snap)
		if len(snap.List()) == 0 {
			continue
		}
		incoming := gpuPod("incoming", 1, int64(100*(1+rng.Intn(9))), "", 1000)
		run := func(gs *GpuShare, fgd *FGDScore) []string {
			state := schedcore.NewCycleState()
			if _, st := gs.PreFilter(ctx, state, incoming, snap.List()); !st.IsSuccess() {
				t.Fatal(st)
			}
			if st := fgd.PreScore(ctx, state, incoming, snap.List()); !st.IsSuccess() {
				t.Fatal(st)
			}
			var out []string
			for _, ni := range snap.List() {
				s, _ := readState(state)
				sc, st := fgd.Score(ctx, state, incoming, ni)
				out = append(out, fmt.Sprintf("%s %v %v %d %v", ni.Name(), s.NodeGPUs(ni).Free, gs.Filter(ctx, state, incoming, ni).Message(), sc, st))
			}
			return out
		}
		want := run(newGpuShare(t, nil, h), newPolicy(t, NewFGD, args, h).(*FGDScore))
		got := run(longShare, longFGD)
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("step %d: remembered state differs from a fresh instance (-fresh +remembered):\n%s", step, d)
		}
	}
}

// A node copy with a pod added (nominated pods, preemption) is computed
// afresh, not read from the cycle's states.
func TestModifiedNodeCopiesAreComputedAfresh(t *testing.T) {
	snap := schedcore.NewSnapshot(nil, []*v1.Node{gpuNode("n", 2, "T4", 8000)})
	pl := newGpuShare(t, nil, schedcore.NewHandle(snap, 1))
	state, _ := states(t, pl, snap, gpuPod("p", 1, 600, "", 1000))
	ni, _ := snap.Get("n")
	c := ni.Clone()
	c.AddPod(placedOn(gpuPod("nominated", 1, 700, "", 1000), "n", 0))
	c.AddPod(placedOn(gpuPod("nominated2", 1, 700, "", 1000), "n", 1))
	s, _ := readState(state)
	if got := s.NodeGPUs(c).Free; !cmp.Equal(got, []int64{300, 300}) {
		t.Errorf("copy: %v, want [300 300]", got)
	}
	if st := pl.Filter(context.Background(), state, gpuPod("p", 1, 600, "", 1000), c); st.Message() != ErrReasonInsufficientGPU {
		t.Errorf("Filter on the copy: %v, want %q", st, ErrReasonInsufficientGPU)
	}
	if got := s.NodeGPUs(ni).Free; !cmp.Equal(got, []int64{1000, 1000}) {
		t.Errorf("original: %v, want [1000 1000]", got)
	}
}
