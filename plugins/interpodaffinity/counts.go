package interpodaffinity

// The counts PreFilter computes: per domain of the terms' topology keys,
// from indexes and totals kept across cycles.

import (
	"context"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// termCounts returns counts with one key per distinct topology key of
// terms.
func termCounts(snap *schedcore.Snapshot, terms []schedcore.AffinityTerm) *schedcore.DomainCounts {
	d := schedcore.NewDomainCounts(snap)
	for i := range terms {
		keyOf(d, terms[i].TopologyKey)
	}
	return d
}

// keyOf returns the index of key in d, adding it if it is new.
func keyOf(d *schedcore.DomainCounts, key string) int {
	if k := d.KeyIndex(key); k >= 0 {
		return k
	}
	return d.AddKey(key)
}

// existingCounts counts, over the existing pods with required
// anti-affinity, the terms the incoming pod matches, per topology value:
// each distinct term is matched once (termIndex groups them across
// cycles). Under the gate, host-scoped terms are left to Filter, and host
// reports whether a node holding a pod with another term also holds a
// host-scoped one.
func (pl *InterPodAffinity) existingCounts(pod *v1.Pod, nsLabels labels.Set) (counts *schedcore.DomainCounts, host bool) {
	snap := pl.handle.Snapshot()
	counts = schedcore.NewDomainCounts(snap)
	x := pl.anti
	x.mu.Lock()
	defer x.mu.Unlock()
	x.sync(snap)
	x.matching(pod, func(g *termGroup) {
		if len(g.counts) == 0 || pl.fastPath && g.term.TopologyKey == v1.LabelHostname || !g.term.Matches(pod, nsLabels) {
			return
		}
		if counts.KeyIndex(g.term.TopologyKey) < 0 {
			// The key's first group: its counts as they are.
			g.shareCounts(snap, counts, counts.AddKey(g.term.TopologyKey))
			return
		}
		k := counts.KeyIndex(g.term.TopologyKey)
		for v, c := range g.counts {
			counts.AddValue(k, v, int64(c))
		}
	})
	return counts, pl.fastPath && x.mixed > 0
}

// incomingCounts counts, over the pods of the snapshot's nodes, those
// matching all the affinity terms (once per term) and each anti-affinity
// term, per domain, from totals kept across cycles, per key of each: only
// the nodes replaced since a key's totals were last used are read.
func (pl *InterPodAffinity) incomingCounts(affinityTerms, antiAffinityTerms []schedcore.AffinityTerm) (affinity, anti *schedcore.DomainCounts) {
	snap := pl.handle.Snapshot()
	affinity, anti = termCounts(snap, affinityTerms), termCounts(snap, antiAffinityTerms)
	key := new(schedcore.MemoKey)
	for i := range affinityTerms {
		key.String("A").AffinityTerm(&affinityTerms[i])
	}
	for i := range antiAffinityTerms {
		key.String("N").AffinityTerm(&antiAffinityTerms[i])
	}
	base := key.Key()
	for k := 0; k < affinity.NumKeys(); k++ {
		// A pod matching all the terms counts once per term of the key.
		var perPod int64
		for i := range affinityTerms {
			if affinityTerms[i].TopologyKey == affinity.KeyName(k) {
				perPod++
			}
		}
		// Only a node where the first term matches a pod may have a share.
		candidates := pl.termCandidates(snap, affinityTerms[:1])
		pl.requiredTotals.LoadSparse(new(schedcore.MemoKey).String(base).String("A").Int(int64(k)), snap, affinity, k, func(ni *schedcore.NodeInfo) (schedcore.Domain, int64, bool) {
			dom, ok := affinity.NodeDomain(k, ni)
			if !ok {
				return 0, 0, false
			}
			var n int64
			for _, existing := range ni.Pods {
				if podMatchesAllAffinityTerms(affinityTerms, existing.Pod) {
					n += perPod
				}
			}
			return dom, n, n > 0
		}, candidates, func(pi *schedcore.PodInfo) bool { return podMatchesAllAffinityTerms(affinityTerms, pi.Pod) })
	}
	for k := 0; k < anti.NumKeys(); k++ {
		name := anti.KeyName(k)
		// Only a node where one of the key's terms matches a pod may have
		// a share.
		var keyTerms []schedcore.AffinityTerm
		for j := range antiAffinityTerms {
			if antiAffinityTerms[j].TopologyKey == name {
				keyTerms = append(keyTerms, antiAffinityTerms[j])
			}
		}
		pl.requiredTotals.LoadSparse(new(schedcore.MemoKey).String(base).String("N").Int(int64(k)), snap, anti, k, func(ni *schedcore.NodeInfo) (schedcore.Domain, int64, bool) {
			dom, ok := anti.NodeDomain(k, ni)
			if !ok {
				return 0, 0, false
			}
			var n int64
			for _, existing := range ni.Pods {
				for j := range antiAffinityTerms {
					if antiAffinityTerms[j].TopologyKey == name && antiAffinityTerms[j].Matches(existing.Pod, nil) {
						n++
					}
				}
			}
			return dom, n, n > 0
		}, pl.termCandidates(snap, keyTerms), func(pi *schedcore.PodInfo) bool {
			// The pods the share counts: those a term of the key matches.
			for j := range keyTerms {
				if keyTerms[j].Matches(pi.Pod, nil) {
					return true
				}
			}
			return false
		})
	}
	return affinity, anti
}

// termCandidates returns, for a totals' first fill, the nodes of snap
// where one of terms matches a pod (TermCounter: from the pod label index
// when it can, else node by node, remembered across cycles), each once or
// more.
func (pl *InterPodAffinity) termCandidates(snap *schedcore.Snapshot, terms []schedcore.AffinityTerm) func() ([]*schedcore.NodeInfo, bool) {
	return func() ([]*schedcore.NodeInfo, bool) {
		var out []*schedcore.NodeInfo
		for i := range terms {
			// Not the cycle's context: a list cut short by a cancelled
			// one would miss nodes that have a share.
			nodes, _ := pl.incoming.Counts(context.Background(), pl.handle.Parallelizer(), snap, &terms[i])
			out = append(out, nodes...)
		}
		return out, true
	}
}

// countMatchingHostScopedAffinityPods counts the pods anywhere that match all
// host-scoped affinity terms (used for the first-pod-of-a-group exception).
func (pl *InterPodAffinity) countMatchingHostScopedAffinityPods(ctx context.Context, nodes []*schedcore.NodeInfo, terms []schedcore.AffinityTerm) int64 {
	var count atomic.Int64
	pl.handle.Parallelizer().Until(ctx, len(nodes), func(i int) {
		for _, existing := range nodes[i].Pods {
			if podMatchesAllAffinityTerms(terms, existing.Pod) {
				count.Add(1)
			}
		}
	})
	return count.Load()
}

// nodesWithNonHostScopedAntiAffinityPods is kube's snapshot list
// HavePodsWithRequiredNonHostScopedAntiAffinityList, derived from the nodes
// with required anti-affinity pods.
func nodesWithNonHostScopedAntiAffinityPods(nodes []*schedcore.NodeInfo) []*schedcore.NodeInfo {
	out := make([]*schedcore.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		for _, p := range n.PodsWithRequiredAntiAffinity {
			if a := p.Pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil && hasNonHostScopedTerm(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) {
				out = append(out, n)
				break
			}
		}
	}
	return out
}

// hasNonHostScopedTerm reports whether a term's topology key is not the
// hostname (kube's podWithRequiredNonHostScopedAntiAffinity, on the spec).
func hasNonHostScopedTerm(terms []v1.PodAffinityTerm) bool {
	for _, t := range terms {
		if t.TopologyKey != v1.LabelHostname {
			return true
		}
	}
	return false
}
