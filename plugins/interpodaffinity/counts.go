package interpodaffinity

// The counts PreFilter computes: per domain of the terms' topology keys,
// from indexes and totals kept across cycles.

import (
	"context"
	"slices"
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
		// The key's first group: its counts as they are.
		k, first := counts.KeyIndex(g.term.TopologyKey), false
		if k < 0 {
			k, first = counts.AddKey(g.term.TopologyKey), true
		}
		g.addTo(snap, counts, k, first)
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
	// load fills key k of d from the totals of tag: a node's share is its
	// pods' perPod summed; only a node where one of terms matches a pod may
	// have one.
	load := func(d *schedcore.DomainCounts, tag string, k int, terms []schedcore.AffinityTerm, perPod func(*v1.Pod) int64) {
		pl.requiredTotals.LoadSparse(new(schedcore.MemoKey).String(base).String(tag).Int(int64(k)), snap, d, k, func(ni *schedcore.NodeInfo) (schedcore.Domain, int64, bool) {
			dom, ok := d.NodeDomain(k, ni)
			if !ok {
				return 0, 0, false
			}
			var n int64
			for _, existing := range ni.Pods {
				n += perPod(existing.Pod)
			}
			return dom, n, n > 0
		}, pl.termCandidates(snap, terms), func(pi *schedcore.PodInfo) bool { return perPod(pi.Pod) > 0 })
	}
	for k := 0; k < affinity.NumKeys(); k++ {
		// A pod matching all the terms counts once per term of the key.
		var perKey int64
		for i := range affinityTerms {
			if affinityTerms[i].TopologyKey == affinity.KeyName(k) {
				perKey++
			}
		}
		load(affinity, "A", k, affinityTerms[:1], func(p *v1.Pod) int64 {
			if podMatchesAllAffinityTerms(affinityTerms, p) {
				return perKey
			}
			return 0
		})
	}
	for k := 0; k < anti.NumKeys(); k++ {
		// A pod counts once per term of the key that matches it.
		var keyTerms []schedcore.AffinityTerm
		for j := range antiAffinityTerms {
			if antiAffinityTerms[j].TopologyKey == anti.KeyName(k) {
				keyTerms = append(keyTerms, antiAffinityTerms[j])
			}
		}
		load(anti, "N", k, keyTerms, func(p *v1.Pod) int64 {
			var n int64
			for j := range keyTerms {
				if keyTerms[j].Matches(p, nil) {
					n++
				}
			}
			return n
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

// anyHostScopedOnly reports whether one of nodes (those with pods with
// required anti-affinity) has no pod with a term not scoped to the
// hostname: kube's HavePodsWithRequiredAntiAffinityList is then longer
// than its HavePodsWithRequiredNonHostScopedAntiAffinityList.
func anyHostScopedOnly(nodes []*schedcore.NodeInfo) bool {
	for _, n := range nodes {
		if !slices.ContainsFunc(n.PodsWithRequiredAntiAffinity, nonHostScoped) {
			return true
		}
	}
	return false
}

// nonHostScoped reports whether a required anti-affinity term of the pod
// has a topology key other than the hostname (kube's
// podWithRequiredNonHostScopedAntiAffinity, on the spec).
func nonHostScoped(p *schedcore.PodInfo) bool {
	if a := p.Pod.Spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			if t.TopologyKey != v1.LabelHostname {
				return true
			}
		}
	}
	return false
}
