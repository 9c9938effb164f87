package interpodaffinity

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestExplainFilterIsEveryNodeRead compares ExplainFilter's gaps with the
// plain reading (referenceGaps: every node's labels and pods read, as
// ExplainFilter did before it read the snapshot's label columns) on random
// clusters: affinity, anti-affinity and existing pods' anti-affinity over
// zones (some nodes without one, some with the value ""), racks and
// hostnames, more matching pods than an explanation names, for the listed
// nodes and copies of them (nodes with nominated pods added), and after
// the snapshot moved on since PreFilter (existing pods with anti-affinity
// over a key no pod had: this fails if the anti index's topology keys are
// not brought up to date first).
func TestExplainFilterIsEveryNodeRead(t *testing.T) {
	ctx := context.Background()
	keys := []string{"zone", "rack", v1.LabelHostname}
	for _, fp := range fastPathOpt {
		t.Run(fastPathName("", fp), func(t *testing.T) {
			rng := rand.New(rand.NewSource(47))
			explained, late := 0, 0
			for round := range 40 {
				var nodes []*v1.Node
				for i := range 12 {
					name := fmt.Sprint("node-", i)
					l := map[string]string{v1.LabelHostname: name, "row": fmt.Sprint("w", i%2)}
					switch rng.Intn(6) {
					case 0:
					case 1:
						l["zone"] = ""
					default:
						l["zone"] = fmt.Sprint("z", rng.Intn(3))
					}
					if rng.Intn(3) > 0 {
						l["rack"] = fmt.Sprint("r", rng.Intn(2))
					}
					nodes = append(nodes, node(name, l))
				}
				existing := func(name string, keys []string) *v1.Pod {
					p := makePod().Name(name).UID(name).Node(fmt.Sprint("node-", rng.Intn(12))).Label("app", fmt.Sprint("a", rng.Intn(3)))
					for range rng.Intn(3) {
						p.PodAntiAffinityIn("app", keys[rng.Intn(len(keys))], []string{fmt.Sprint("a", rng.Intn(3))})
					}
					return p.Obj()
				}
				var pods []*v1.Pod
				for i := range 30 {
					pods = append(pods, existing(fmt.Sprint("e", i), keys))
				}
				cache := schedcore.NewCache(schedcore.DefaultFeatures)
				for _, n := range nodes {
					cache.AddNode(n)
				}
				for _, p := range pods {
					if err := cache.AddPod(p); err != nil {
						t.Fatal(err)
					}
				}
				snap := schedcore.NewEmptySnapshot()
				cache.UpdateSnapshot(snap)
				pl := newPlugin(t, nil, snap, fp)
				in := makePod().Name(fmt.Sprint("in", round)).Label("app", fmt.Sprint("a", rng.Intn(3)))
				for range rng.Intn(3) {
					in.PodAffinityIn("app", keys[rng.Intn(3)], []string{fmt.Sprint("a", rng.Intn(3))})
				}
				for range rng.Intn(3) {
					in.PodAntiAffinityIn("app", keys[rng.Intn(3)], []string{fmt.Sprint("a", rng.Intn(3))})
				}
				pod := in.Obj()
				state := schedcore.NewCycleState()
				if _, s := pl.PreFilter(ctx, state, pod, snap.List()); !s.IsSuccess() {
					continue
				}
				if round%2 == 1 {
					// The snapshot moves on after PreFilter: pods with
					// anti-affinity over a key no pod had before. The gaps
					// read the snapshot as it is (the anti index is
					// brought up to date with it).
					for i := range 4 {
						if err := cache.AddPod(existing(fmt.Sprint("late", i), []string{"row"})); err != nil {
							t.Fatal(err)
						}
					}
					cache.UpdateSnapshot(snap)
				}
				list := snap.List()
				all := append([]*schedcore.NodeInfo(nil), list...)
				for _, ni := range list {
					all = append(all, ni.Clone())
				}
				for _, ni := range all {
					s := pl.Filter(ctx, state, pod, ni)
					if s.IsSuccess() {
						continue
					}
					var got []string
					if e := pl.ExplainFilter(ctx, state, pod, ni, s); e != nil {
						for _, g := range e.Gaps {
							got = append(got, g.Text)
						}
					}
					want := referenceGaps(pl, state, ni)
					if !slices.Equal(got, want) {
						t.Fatalf("round %d, node %s: gaps\n%q\nwant\n%q", round, ni.Node().Name, got, want)
					}
					if len(want) > 1 {
						explained++
					}
					for _, g := range want {
						if strings.Contains(g, " in row ") {
							late++
						}
					}
				}
			}
			if explained < 20 || late < 5 {
				t.Errorf("%d nodes with more than one gap, %d gaps of pods placed after PreFilter: the case tells little", explained, late)
			}
		})
	}
}

// referenceGaps is ExplainFilter reading every node's labels and pods.
func referenceGaps(pl *InterPodAffinity, cycleState *schedcore.CycleState, nodeInfo *schedcore.NodeInfo) []string {
	s, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return nil
	}
	snap := pl.handle.Snapshot()
	node := nodeInfo.Node()
	inDomain := func(key, value string, match func(*v1.Pod) bool, limit int) []domainPod {
		var out []domainPod
		add := func(ni *schedcore.NodeInfo) bool {
			for _, pi := range ni.Pods {
				if match(pi.Pod) {
					out = append(out, domainPod{pod: schedcore.PodName(pi.Pod), node: ni.Name()})
					if len(out) >= limit {
						return true
					}
				}
			}
			return false
		}
		if ni, err := snap.Get(node.Name); err == nil && add(ni) {
			return out
		}
		for _, ni := range snap.List() {
			if ni.Name() == node.Name {
				continue
			}
			if v, ok := ni.Node().Labels[key]; !ok || v != value {
				continue
			}
			if add(ni) {
				return out
			}
		}
		return out
	}
	var out []string
	if affinityFails(s, nodeInfo) {
		terms := s.podInfo.RequiredAffinityTerms
		for i := range terms {
			t := &terms[i]
			tv, ok := node.Labels[t.TopologyKey]
			if !ok {
				out = append(out, fmt.Sprintf("pod affinity term %d: node has no %s label", i+1, t.TopologyKey))
				continue
			}
			if len(inDomain(t.TopologyKey, tv, func(p *v1.Pod) bool { return podMatchesAllAffinityTerms(terms, p) }, 1)) == 0 {
				out = append(out, fmt.Sprintf("pod affinity term %d: no pod matching %s %s", i+1, selectorString(t.Selector), helper.InDomain(t.TopologyKey, tv)))
			}
		}
	}
	if antiAffinityFails(s, nodeInfo) {
		for i := range s.podInfo.RequiredAntiAffinityTerms {
			t := &s.podInfo.RequiredAntiAffinityTerms[i]
			tv, ok := node.Labels[t.TopologyKey]
			if !ok {
				continue
			}
			matches := func(p *v1.Pod) bool { return t.Matches(p, snap.NamespaceLabels(p.Namespace)) }
			for _, m := range inDomain(t.TopologyKey, tv, matches, maxNamedPods) {
				out = append(out, fmt.Sprintf("anti-affinity with pod %s %s", m.pod, m.where(node.Name, t.TopologyKey, tv)))
			}
		}
	}
	if !satisfyExistingPodsAntiAffinity(s, nodeInfo) {
		var named []string
		for _, ni := range snap.HavePodsWithRequiredAntiAffinityList() {
			for _, pi := range ni.PodsWithRequiredAntiAffinity {
				for i := range pi.RequiredAntiAffinityTerms {
					t := &pi.RequiredAntiAffinityTerms[i]
					tv, ok := ni.Node().Labels[t.TopologyKey]
					if !ok || node.Labels[t.TopologyKey] != tv || !t.Matches(s.podInfo.Pod, s.namespaceLabels) {
						continue
					}
					if len(named) < maxNamedPods {
						m := domainPod{pod: schedcore.PodName(pi.Pod), node: ni.Name()}
						named = append(named, fmt.Sprintf("pod %s %s has anti-affinity to this pod", m.pod, m.where(node.Name, t.TopologyKey, tv)))
					}
				}
			}
		}
		out = append(out, named...)
	}
	return out
}
