package interpodaffinity

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const preScoreStateKey schedcore.StateKey = "PreScore" + Name

// scoreMap holds summed weights per topology key and value.
type scoreMap map[string]map[string]int64

// preScoreState is computed in PreScore and read by Score and NormalizeScore.
type preScoreState struct {
	topologyScore   scoreMap
	podInfo         *schedcore.PodInfo
	namespaceLabels labels.Set
}

// Clone returns the state itself: Score only reads it.
func (s *preScoreState) Clone() schedcore.StateData { return s }

func (cs *contribs) processTerm(term *schedcore.AffinityTerm, weight int32, pod *v1.Pod, nsLabels labels.Set, node *v1.Node, multiplier int32) {
	if term.Matches(pod, nsLabels) {
		if tv, ok := node.Labels[term.TopologyKey]; ok {
			// int32 product, as kube computes it.
			cs.add(term.TopologyKey, tv, int64(weight*multiplier))
		}
	}
}

func (cs *contribs) processTerms(terms []schedcore.WeightedAffinityTerm, pod *v1.Pod, nsLabels labels.Set, node *v1.Node, multiplier int32) {
	for i := range terms {
		cs.processTerm(&terms[i].AffinityTerm, terms[i].Weight, pod, nsLabels, node, multiplier)
	}
}

// processExistingPod adds what one existing pod contributes to its node's
// topology domains.
func (pl *InterPodAffinity) processExistingPod(s *preScoreState, existing *schedcore.PodInfo, existingNode *v1.Node, incoming *v1.Pod, topoScore *contribs) {
	if len(existingNode.Labels) == 0 {
		return
	}
	// The incoming pod's preferred terms (namespace selectors merged).
	topoScore.processTerms(s.podInfo.PreferredAffinityTerms, existing.Pod, nil, existingNode, 1)
	topoScore.processTerms(s.podInfo.PreferredAntiAffinityTerms, existing.Pod, nil, existingNode, -1)
	// The existing pod's required affinity, weighted by hardPodAffinityWeight.
	if pl.args.hardPodAffinityWeight > 0 {
		for i := range existing.RequiredAffinityTerms {
			topoScore.processTerm(&existing.RequiredAffinityTerms[i], pl.args.hardPodAffinityWeight, incoming, s.namespaceLabels, existingNode, 1)
		}
	}
	// The existing pod's preferred terms.
	topoScore.processTerms(existing.PreferredAffinityTerms, incoming, s.namespaceLabels, existingNode, 1)
	topoScore.processTerms(existing.PreferredAntiAffinityTerms, incoming, s.namespaceLabels, existingNode, -1)
}

// PreScore sums the affinity weights per topology pair. It scans every node
// when the pod has preferred terms, else only nodes with pods that have
// affinity. The nodes argument is not used, as in kube.
func (pl *InterPodAffinity) PreScore(ctx context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) *schedcore.Status {
	affinity := pod.Spec.Affinity
	hasPreferredAffinity := affinity != nil && affinity.PodAffinity != nil && len(affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
	hasPreferredAntiAffinity := affinity != nil && affinity.PodAntiAffinity != nil && len(affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
	hasConstraints := hasPreferredAffinity || hasPreferredAntiAffinity

	if pl.args.ignorePreferredTermsOfExistingPods && !hasConstraints {
		return schedcore.NewStatus(schedcore.Skip)
	}

	snap := pl.handle.Snapshot()

	pi, err := newIncomingPodInfo(pod)
	if err != nil {
		return schedcore.AsStatus(fmt.Errorf("failed to parse pod: %w", err))
	}
	for i := range pi.PreferredAffinityTerms {
		mergeNamespaces(&pi.PreferredAffinityTerms[i].AffinityTerm, snap)
	}
	for i := range pi.PreferredAntiAffinityTerms {
		mergeNamespaces(&pi.PreferredAntiAffinityTerms[i].AffinityTerm, snap)
	}
	s := &preScoreState{podInfo: pi, namespaceLabels: snap.NamespaceLabels(pod.Namespace)}

	key, err := preScoreSignature(pod, hasConstraints, snap.NamespaceGeneration())
	if err != nil {
		return schedcore.AsStatus(fmt.Errorf("failed to encode pod: %w", err))
	}
	sig := pl.scores.acquire(key)
	defer sig.release()
	// All nodes are walked (a node without pods with affinity contributes
	// nothing when only those are scanned), so that a node keeps its place.
	allNodes := snap.List()
	sig.update(allNodes, func(n int, f func(int)) { pl.handle.Parallelizer().Until(ctx, n, f) }, func(n *schedcore.NodeInfo) []contrib {
		pods := n.PodsWithAffinity
		if hasConstraints {
			pods = n.Pods
		}
		var cs contribs
		for _, existing := range pods {
			pl.processExistingPod(s, existing, n.Node(), pod, &cs)
		}
		return cs
	})
	if err := ctx.Err(); err != nil {
		return schedcore.AsStatus(err)
	}
	if sig.pairs == 0 {
		return schedcore.NewStatus(schedcore.Skip)
	}
	s.topologyScore = sig.scores()
	cycleState.Write(preScoreStateKey, s)
	return nil
}

func getPreScoreState(cycleState *schedcore.CycleState) (*preScoreState, error) {
	c, err := cycleState.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("failed to read %q from cycleState: %w", preScoreStateKey, err)
	}
	s, ok := c.(*preScoreState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to interpodaffinity.preScoreState error", c)
	}
	return s, nil
}

// Score sums the weights of the node's topology pairs: positive for
// affinity, negative for anti-affinity; NormalizeScore rescales.
func (pl *InterPodAffinity) Score(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	s, err := getPreScoreState(cycleState)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	node := nodeInfo.Node()
	var score int64
	for key, values := range s.topologyScore {
		if v, ok := node.Labels[key]; ok {
			score += values[v]
		}
	}
	return score, nil
}

// NormalizeScore maps [min, max] of the raw scores onto [0, MaxNodeScore]
// with kube's float64 arithmetic, truncating; equal scores all become 0.
func (pl *InterPodAffinity) NormalizeScore(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, scores schedcore.NodeScoreList) *schedcore.Status {
	s, err := getPreScoreState(cycleState)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if len(s.topologyScore) == 0 {
		return nil
	}
	var minCount int64 = math.MaxInt64
	var maxCount int64 = math.MinInt64
	for i := range scores {
		if scores[i].Score > maxCount {
			maxCount = scores[i].Score
		}
		if scores[i].Score < minCount {
			minCount = scores[i].Score
		}
	}
	diff := maxCount - minCount
	for i := range scores {
		f := float64(0)
		if diff > 0 {
			f = float64(schedcore.MaxNodeScore) * (float64(scores[i].Score-minCount) / float64(diff))
		}
		scores[i].Score = int64(f)
	}
	return nil
}
