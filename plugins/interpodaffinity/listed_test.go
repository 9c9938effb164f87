package interpodaffinity

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestFilterListedIsFilter: FilterListed reads a node's domains at the
// list position the filter loop gives; it must answer as Filter does at
// the node's own position, at any other (the domain counts check that the
// snapshot lists the node there) and for a copy of the node (a node with
// nominated pods added), for affinity, anti-affinity and existing pods'
// anti-affinity on zones, racks some nodes lack and hostnames, with the
// hostname fast path on and off.
func TestFilterListedIsFilter(t *testing.T) {
	ctx := context.Background()
	keys := []string{"zone", "rack", v1.LabelHostname}
	for _, fp := range fastPathOpt {
		t.Run(fastPathName("", fp), func(t *testing.T) {
			rng := rand.New(rand.NewSource(31))
			differ := 0
			for round := range 30 {
				var nodes []*v1.Node
				for i := range 10 {
					name := fmt.Sprint("node-", i)
					l := map[string]string{v1.LabelHostname: name}
					if i%5 > 0 {
						l["zone"] = fmt.Sprint("z", i%3)
					}
					if i%3 > 0 {
						l["rack"] = fmt.Sprint("r", i%2)
					}
					nodes = append(nodes, node(name, l))
				}
				var pods []*v1.Pod
				for i := range 12 {
					p := makePod().Name(fmt.Sprint("e", i)).UID(fmt.Sprint("e", i)).Node(fmt.Sprint("node-", rng.Intn(10))).
						Label("app", fmt.Sprint("a", rng.Intn(3)))
					if rng.Intn(4) == 0 {
						p.PodAntiAffinityIn("app", keys[rng.Intn(3)], []string{fmt.Sprint("a", rng.Intn(3))})
					}
					pods = append(pods, p.Obj())
				}
				snap := newSnapshot(pods, nodes, nil)
				pl := newPlugin(t, nil, snap, fp)
				in := makePod().Name(fmt.Sprint("in", round)).Label("app", fmt.Sprint("a", rng.Intn(3)))
				for range rng.Intn(3) {
					in.PodAffinityIn("app", keys[rng.Intn(3)], []string{fmt.Sprint("a", rng.Intn(3))})
				}
				for range rng.Intn(3) {
					in.PodAntiAffinityIn("app", keys[rng.Intn(3)], []string{fmt.Sprint("a", rng.Intn(3))})
				}
				pod := in.Obj()
				list := snap.List()
				state := schedcore.NewCycleState()
				if _, s := pl.PreFilter(ctx, state, pod, list); !s.IsSuccess() {
					continue
				}
				all := append([]*schedcore.NodeInfo(nil), list...)
				for _, ni := range list {
					all = append(all, ni.Clone())
				}
				for _, ni := range all {
					want := res(pl.Filter(ctx, state, pod, ni))
					for pos := -1; pos <= len(list); pos++ {
						if got := res(pl.FilterListed(ctx, state, pod, ni, pos)); fmt.Sprint(got) != fmt.Sprint(want) {
							t.Fatalf("round %d, %s at position %d: FilterListed %v, Filter %v", round, ni.Node().Name, pos, got, want)
						}
						if pos >= 0 && pos < len(list) && fmt.Sprint(res(pl.Filter(ctx, state, pod, list[pos]))) != fmt.Sprint(want) {
							differ++
						}
					}
				}
			}
			if differ == 0 {
				t.Error("no node's verdict differs from another's: the case cannot tell positions apart")
			}
		})
	}
}
