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

// preScoreState is computed in PreScore and read by Score and
// NormalizeColumn: the summed weights per domain of each topology key.
type preScoreState struct {
	scores          *schedcore.DomainCounts
	podInfo         *schedcore.PodInfo
	namespaceLabels labels.Set
}

// Clone returns the state itself: Score only reads it.
func (s *preScoreState) Clone() schedcore.StateData { return s }

// PreScore sums the affinity weights per topology domain. It scans every
// node when the pod has preferred terms, else only the existing pods'
// terms. The nodes argument is not used, as in kube.
func (pl *InterPodAffinity) PreScore(ctx context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) *schedcore.Status {
	affinity := pod.Spec.Affinity
	hasPreferredAffinity := affinity != nil && affinity.PodAffinity != nil && len(affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
	hasPreferredAntiAffinity := affinity != nil && affinity.PodAntiAffinity != nil && len(affinity.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution) > 0
	hasConstraints := hasPreferredAffinity || hasPreferredAntiAffinity
	if pl.args.ignorePreferredTermsOfExistingPods && !hasConstraints {
		return schedcore.NewStatus(schedcore.Skip)
	}
	snap := pl.handle.Snapshot()
	pi := parsedPod(cycleState, pod)
	if pi.ParseError != nil {
		return schedcore.AsStatus(fmt.Errorf("failed to parse pod: %w", pi.ParseError))
	}
	for i := range pi.PreferredAffinityTerms {
		mergeNamespaces(&pi.PreferredAffinityTerms[i].AffinityTerm, snap)
	}
	for i := range pi.PreferredAntiAffinityTerms {
		mergeNamespaces(&pi.PreferredAntiAffinityTerms[i].AffinityTerm, snap)
	}
	s := &preScoreState{scores: schedcore.NewDomainCounts(snap), podInfo: pi, namespaceLabels: snap.NamespaceLabels(pod.Namespace)}

	// (b) the existing pods' terms, one match per distinct term.
	pl.terms.mu.Lock()
	pl.terms.sync(snap)
	pl.terms.matching(pod, func(g *termGroup) {
		if len(g.counts) == 0 || !g.term.Matches(pod, s.namespaceLabels) {
			return
		}
		g.addTo(snap, s.scores, keyOf(s.scores, g.term.TopologyKey), false)
	})
	pl.terms.mu.Unlock()

	// (a) the incoming pod's preferred terms against every existing pod.
	if hasConstraints {
		incoming := func(terms []schedcore.WeightedAffinityTerm, multiplier int32) {
			for i := range terms {
				term := &terms[i].AffinityTerm
				w := int64(terms[i].Weight * multiplier)
				nodes, counts := pl.incoming.Counts(ctx, pl.handle.Parallelizer(), snap, term)
				if len(nodes) == 0 {
					continue
				}
				k := keyOf(s.scores, term.TopologyKey)
				for n, ni := range nodes {
					s.scores.AddNode(k, ni, int64(counts[n])*w)
				}
			}
		}
		incoming(pi.PreferredAffinityTerms, 1)
		incoming(pi.PreferredAntiAffinityTerms, -1)
	}
	if err := ctx.Err(); err != nil {
		return schedcore.AsStatus(err)
	}
	if !s.hasScores() {
		return schedcore.NewStatus(schedcore.Skip)
	}
	cycleState.Write(preScoreStateKey, s)
	return nil
}

// hasScores reports whether some term matched on a node with its
// topology label (kube's non-empty topologyScore).
func (s *preScoreState) hasScores() bool {
	for k := 0; k < s.scores.NumKeys(); k++ {
		if s.scores.NumCounted(k) > 0 {
			return true
		}
	}
	return false
}

// Score sums the weights of the node's domains: positive for affinity,
// negative for anti-affinity; NormalizeColumn rescales.
func (pl *InterPodAffinity) Score(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	s, err := schedcore.ReadAs[*preScoreState](cycleState, preScoreStateKey)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	var buf [4]schedcore.Domain
	doms, _ := s.scores.NodeDomains(nodeInfo, buf[:0])
	var score int64
	for k, dom := range doms {
		score += s.scores.At(k, dom)
	}
	return score, nil
}

// NormalizeColumn maps [min, max] of the raw scores onto [0, MaxNodeScore]
// with kube's float64 arithmetic, truncating; equal scores all become 0.
func (pl *InterPodAffinity) NormalizeColumn(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, scores []int64) *schedcore.Status {
	s, err := schedcore.ReadAs[*preScoreState](cycleState, preScoreStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if !s.hasScores() {
		return nil
	}
	var minCount int64 = math.MaxInt64
	var maxCount int64 = math.MinInt64
	for _, sc := range scores {
		maxCount = max(maxCount, sc)
		minCount = min(minCount, sc)
	}
	diff := maxCount - minCount
	for i := range scores {
		f := float64(0)
		if diff > 0 {
			f = float64(schedcore.MaxNodeScore) * (float64(scores[i]-minCount) / float64(diff))
		}
		scores[i] = int64(f)
	}
	return nil
}

// parsedPod returns the pod's terms as PreFilter parsed them this cycle
// (their required terms' namespaces merged, which scoring does not read),
// else parses them: the preferred terms are PreScore's alone.
// A pod without affinity has no terms to parse; a missing state is read
// without ReadAs, whose error is formatted.
func parsedPod(cycleState *schedcore.CycleState, pod *v1.Pod) *schedcore.PodInfo {
	if pod.Spec.Affinity == nil {
		return schedcore.NewPodInfo(pod)
	}
	if v, err := cycleState.Read(preFilterStateKey); err == nil {
		if s, ok := v.(*preFilterState); ok && s.podInfo != nil && s.podInfo.Pod == pod {
			return s.podInfo
		}
	}
	return schedcore.NewPodInfo(pod)
}
