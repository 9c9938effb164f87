package podtopologyspread

import (
	"context"
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestScoreListedIsScore: ScoreListed reads a node's domains and host
// counts by its list position and generation; it must answer as Score does,
// on a plugin kept across snapshot updates, whose remembered host counts
// are then partly of earlier generations of the nodes (pods are added
// between the cycles), and for constraints on the hostname, a zone and a
// label some nodes lack.
func TestScoreListedIsScore(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(23))
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for i := range 16 {
		name := fmt.Sprintf("node-%02d", i)
		kv := []string{v1.LabelHostname, name, v1.LabelTopologyZone, fmt.Sprintf("z%d", i%3)}
		if i%4 > 0 {
			kv = append(kv, "rack", fmt.Sprintf("r%d", i%2))
		}
		cache.AddNode(schedtest.MakeNode(name).OnlyLabels(kv...).Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	pl, err := New(ctx, &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting}, schedcore.NewHandle(snap, 2))
	if err != nil {
		t.Fatal(err)
	}
	apps := []string{"a", "b"}
	n := 0
	for step := range 200 {
		for range rng.Intn(4) {
			n++
			pod := schedtest.MakePod(fmt.Sprintf("p%d", n)).UID(fmt.Sprintf("p%d", n)).Label("app", apps[rng.Intn(2)]).
				Node(fmt.Sprintf("node-%02d", rng.Intn(16))).Obj()
			if err := cache.AddPod(pod); err != nil {
				t.Fatal(err)
			}
		}
		cache.UpdateSnapshot(snap)
		incoming := mkPod(fmt.Sprintf("in%d", step), "app", apps[rng.Intn(2)])
		for _, key := range []string{v1.LabelHostname, v1.LabelTopologyZone, "rack"} {
			if rng.Intn(3) > 0 {
				incoming.spread(int32(1+rng.Intn(2)), key, sa, matchLabels("app", apps[rng.Intn(2)]))
			}
		}
		pod := incoming.obj()
		list := snap.List()
		var feasible []*schedcore.NodeInfo
		for _, ni := range list {
			if rng.Intn(4) > 0 {
				feasible = append(feasible, ni)
			}
		}
		state := schedcore.NewCycleState()
		if s := pl.(*PodTopologySpread).PreScore(ctx, state, pod, feasible); !s.IsSuccess() {
			continue
		}
		for pos, ni := range list {
			if !containsNode(feasible, ni) {
				continue
			}
			got, s1 := pl.(*PodTopologySpread).ScoreListed(ctx, state, pod, ni, pos, ni.Generation)
			want, s2 := pl.(*PodTopologySpread).Score(ctx, state, pod, ni)
			if got != want || s1.Code() != s2.Code() {
				t.Fatalf("step %d, %s: ScoreListed %d (%v), Score %d (%v)", step, ni.Name(), got, s1, want, s2)
			}
		}
	}
}

func containsNode(list []*schedcore.NodeInfo, ni *schedcore.NodeInfo) bool {
	for _, x := range list {
		if x == ni {
			return true
		}
	}
	return false
}

// TestFilterListedIsFilter: FilterListed reads a node's domains at the
// list position the filter loop gives; it must answer as Filter does at
// the node's own position, at any other (the plugin checks that the
// snapshot lists the node there) and for a copy of the node (a node with
// nominated pods added), for constraints on the hostname, a zone and a
// label some nodes lack.
func TestFilterListedIsFilter(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(29))
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for i := range 12 {
		name := fmt.Sprintf("node-%02d", i)
		kv := []string{v1.LabelHostname, name, v1.LabelTopologyZone, fmt.Sprintf("z%d", i%3)}
		if i%4 > 0 {
			kv = append(kv, "rack", fmt.Sprintf("r%d", i%2))
		}
		cache.AddNode(schedtest.MakeNode(name).OnlyLabels(kv...).Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	pl, err := New(ctx, &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting}, schedcore.NewHandle(snap, 2))
	if err != nil {
		t.Fatal(err)
	}
	p := pl.(*PodTopologySpread)
	apps := []string{"a", "b"}
	n, differ := 0, 0
	for step := range 100 {
		for range rng.Intn(4) {
			n++
			pod := schedtest.MakePod(fmt.Sprintf("p%d", n)).UID(fmt.Sprintf("p%d", n)).Label("app", apps[rng.Intn(2)]).
				Node(fmt.Sprintf("node-%02d", rng.Intn(12))).Obj()
			if err := cache.AddPod(pod); err != nil {
				t.Fatal(err)
			}
		}
		cache.UpdateSnapshot(snap)
		incoming := mkPod(fmt.Sprintf("in%d", step), "app", apps[rng.Intn(2)])
		for _, key := range []string{v1.LabelHostname, v1.LabelTopologyZone, "rack"} {
			if rng.Intn(3) > 0 {
				incoming.spread(int32(1+rng.Intn(2)), key, dns, matchLabels("app", apps[rng.Intn(2)]))
			}
		}
		pod := incoming.obj()
		list := snap.List()
		state := schedcore.NewCycleState()
		if _, s := p.PreFilter(ctx, state, pod, list); !s.IsSuccess() {
			continue
		}
		nodes := append([]*schedcore.NodeInfo(nil), list...)
		for _, ni := range list {
			nodes = append(nodes, ni.Clone())
		}
		for _, ni := range nodes {
			want := p.Filter(ctx, state, pod, ni)
			for pos := -1; pos <= len(list); pos++ {
				got := p.FilterListed(ctx, state, pod, ni, pos)
				if got.Code() != want.Code() || fmt.Sprint(got.Reasons()) != fmt.Sprint(want.Reasons()) {
					t.Fatalf("step %d, %s at position %d: FilterListed %v, Filter %v", step, ni.Node().Name, pos, got, want)
				}
				if pos >= 0 && pos < len(list) && list[pos] != ni && p.Filter(ctx, state, pod, list[pos]).Code() != want.Code() {
					differ++
				}
			}
		}
	}
	if differ == 0 {
		t.Error("no node's verdict differs from another's: the case cannot tell positions apart")
	}
}

// TestPreScoreCountsTheDomainOfEveryFeasibleNode: PreScore's pass over the
// feasible nodes stops early once every zone-like key has all the domains
// of the snapshot's labelled nodes, but only for nodes the filter loop
// found in the list: a feasible node from outside the snapshot, after many
// listed ones, may be in a zone no listed node is in, and that zone counts.
func TestPreScoreCountsTheDomainOfEveryFeasibleNode(t *testing.T) {
	ctx := context.Background()
	cache := schedcore.NewCache(schedcore.DefaultFeatures)
	for i := range 130 {
		name := fmt.Sprintf("node-%03d", i)
		cache.AddNode(schedtest.MakeNode(name).OnlyLabels(v1.LabelHostname, name, v1.LabelTopologyZone, fmt.Sprintf("z%d", i%3)).Obj())
	}
	snap := schedcore.NewEmptySnapshot()
	cache.UpdateSnapshot(snap)
	pl, err := New(ctx, &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting}, schedcore.NewHandle(snap, 2))
	if err != nil {
		t.Fatal(err)
	}
	outside := schedcore.NewNodeInfo()
	outside.SetNode(schedtest.MakeNode("outside").OnlyLabels(v1.LabelHostname, "outside", v1.LabelTopologyZone, "z9").Obj())
	feasible := append(append([]*schedcore.NodeInfo(nil), snap.List()...), outside)
	pod := mkPod("in", "app", "a").spread(1, v1.LabelTopologyZone, sa, matchLabels("app", "a")).obj()
	state := schedcore.NewCycleState()
	if s := pl.(*PodTopologySpread).PreScore(ctx, state, pod, feasible); !s.IsSuccess() {
		t.Fatal(s)
	}
	got := preScoreView(t, state).TopologyValueToPodCounts[0]
	if _, ok := got["z9"]; !ok || len(got) != 4 {
		t.Errorf("zones counted: %v, want z0, z1, z2 and z9", got)
	}
}
