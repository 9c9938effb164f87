package interpodaffinity

import (
	"context"
	"fmt"
	"math"
	"strings"

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

	// The dense form of topologyScore for the snapshot list: per topology
	// key, its label column and the scores by value id (list nil: none).
	list   []*schedcore.NodeInfo
	cols   []*schedcore.LabelColumn
	scores [][]int64
}

// initDense spreads topologyScore over the snapshot's label columns.
func (s *preScoreState) initDense(snap *schedcore.Snapshot) {
	list := snap.List()
	if len(list) == 0 {
		return
	}
	for key, values := range s.topologyScore {
		col := snap.LabelColumn(key)
		scores := make([]int64, col.NumValues())
		for v, n := range values {
			if id, ok := col.ID(v); ok {
				scores[id] = n
			}
		}
		s.cols, s.scores = append(s.cols, col), append(s.scores, scores)
	}
	s.list = list
}

// Clone returns the state itself: Score only reads it.
func (s *preScoreState) Clone() schedcore.StateData { return s }

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
	allNodes := snap.List()
	topo := make(scoreMap)

	// (b) the existing pods' terms, one match per distinct term.
	pl.terms.mu.Lock()
	pl.terms.sync(allNodes)
	for _, g := range pl.terms.groups {
		if len(g.counts) == 0 || !g.term.Matches(pod, s.namespaceLabels) {
			continue
		}
		m := topo[g.term.TopologyKey]
		if m == nil {
			m = make(map[string]int64, len(g.counts))
			topo[g.term.TopologyKey] = m
		}
		for v, c := range g.counts {
			m[v] += int64(c) * g.weight
		}
	}
	pl.terms.mu.Unlock()

	// (a) the incoming pod's preferred terms against every existing pod.
	if hasConstraints {
		counts := make([]int32, len(allNodes))
		var b strings.Builder
		incoming := func(terms []schedcore.WeightedAffinityTerm, multiplier int32) {
			for i := range terms {
				term := &terms[i].AffinityTerm
				w := int64(terms[i].Weight * multiplier)
				t := pl.incoming.Acquire(termKey(&b, term, 0), len(allNodes))
				pl.handle.Parallelizer().Until(ctx, len(allNodes), func(n int) {
					ni := allNodes[n]
					c, ok := t.Get(ni)
					if !ok {
						for _, existing := range ni.Pods {
							if term.Matches(existing.Pod, nil) {
								c++
							}
						}
						t.Put(ni, c)
					}
					counts[n] = c
				})
				t.Release()
				var m map[string]int64
				for n, c := range counts {
					if c == 0 {
						continue
					}
					v, ok := allNodes[n].Node().Labels[term.TopologyKey]
					if !ok {
						continue
					}
					if m == nil {
						if m = topo[term.TopologyKey]; m == nil {
							m = make(map[string]int64)
							topo[term.TopologyKey] = m
						}
					}
					m[v] += int64(c) * w
				}
			}
		}
		incoming(pi.PreferredAffinityTerms, 1)
		incoming(pi.PreferredAntiAffinityTerms, -1)
	}
	if err := ctx.Err(); err != nil {
		return schedcore.AsStatus(err)
	}
	if len(topo) == 0 {
		return schedcore.NewStatus(schedcore.Skip)
	}
	s.topologyScore = topo
	s.initDense(snap)
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
	if idx := schedcore.IndexIn(s.list, nodeInfo); idx >= 0 {
		for k, col := range s.cols {
			if id := col.At(idx); id >= 0 {
				score += s.scores[k][id]
			}
		}
		return score, nil
	}
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
