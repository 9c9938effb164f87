package podtopologyspread

import (
	"context"
	"fmt"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const preScoreStateKey schedcore.StateKey = "PreScore" + Name

// preScoreState is computed in PreScore and read by Score and
// NormalizeColumn.
type preScoreState struct {
	Constraints []topologySpreadConstraint
	// requireAll is set when a node must have every topology key: the
	// feasible nodes missing one are ignored (they score 0). ignored marks
	// them by feasible index (nil: none), numIgnored counts them.
	requireAll bool
	ignored    []bool
	numIgnored int
	// counts holds the matching pods per domain of the feasible nodes;
	// hostname constraints are counted per node, by hostCounts[i].
	counts     *schedcore.DomainCounts
	hostCounts []*schedcore.SelectorCount
	// TopologyNormalizingWeight is log(domains+2) per constraint, so that
	// the counts of small topologies are not watered down by large ones.
	TopologyNormalizingWeight []float64
}

// Clone returns the state itself: nothing changes it after PreScore.
func (s *preScoreState) Clone() schedcore.StateData { return s }

// initPreScoreState fills in the soft constraints, the ignored nodes, the
// domains of the feasible nodes and the normalizing weights.
func (pl *PodTopologySpread) initPreScoreState(state *schedcore.CycleState, s *preScoreState, pod *v1.Pod, filteredNodes []*schedcore.NodeInfo, requireAllTopologies bool) error {
	var err error
	if s.Constraints, err = pl.getConstraints(pod, v1.ScheduleAnyway); err != nil {
		return err
	}
	if len(s.Constraints) == 0 {
		return nil
	}
	snap := pl.handle.Snapshot()
	s.counts = schedcore.NewDomainCounts(snap, topologyKeys(s.Constraints)...)
	doms := make([]schedcore.Domain, 0, len(s.Constraints))
	// The pass may stop once each zone-like key has counted all the
	// list's domains, when no node can be ignored.
	canStop := state.FeasibleListed(snap, filteredNodes)
	for i := range s.Constraints {
		canStop = canStop && (!requireAllTopologies || s.counts.Labelled(i))
	}
	for k, ni := range filteredNodes {
		if canStop && k%64 == 0 && zoneKeysComplete(s) {
			break
		}
		var all bool
		doms, all = s.counts.NodeDomains(ni, doms[:0])
		if requireAllTopologies && !all {
			s.numIgnored++
			if s.ignored == nil {
				s.ignored = make([]bool, len(filteredNodes))
			}
			s.ignored[k] = true
			continue
		}
		// The domains of the feasible nodes are the ones counted; a node
		// without the label is in the domain "", as a missing label reads.
		for i := range s.Constraints {
			if s.Constraints[i].TopologyKey != v1.LabelHostname {
				s.counts.AddAt(i, ni, doms[i], 0)
			}
		}
	}
	s.TopologyNormalizingWeight = make([]float64, len(s.Constraints))
	for i := range s.Constraints {
		sz := s.counts.NumCounted(i)
		if s.Constraints[i].TopologyKey == v1.LabelHostname {
			sz = len(filteredNodes) - s.numIgnored
		}
		s.TopologyNormalizingWeight[i] = topologyNormalizingWeight(sz)
	}
	return nil
}

// zoneKeysComplete reports whether every constraint but the hostname ones
// has counted every domain of the snapshot's nodes (DomainCounts.Complete).
func zoneKeysComplete(s *preScoreState) bool {
	for i := range s.Constraints {
		if s.Constraints[i].TopologyKey != v1.LabelHostname && !s.counts.Complete(i) {
			return false
		}
	}
	return true
}

// PreScore counts, over all nodes, the pods matching each soft constraint
// in the domains of the feasible nodes (on each one, for hostname). Skip
// without nodes or soft constraints.
func (pl *PodTopologySpread) PreScore(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, filteredNodes []*schedcore.NodeInfo) *schedcore.Status {
	allNodes := pl.handle.Snapshot().List()
	if len(allNodes) == 0 {
		return schedcore.NewStatus(schedcore.Skip)
	}
	// Only non-system-default spreading requires every topology key, so that
	// nodes without a zone label still get hostname spreading.
	requireAllTopologies := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	s := &preScoreState{requireAll: requireAllTopologies}
	if err := pl.initPreScoreState(state, s, pod, filteredNodes, requireAllTopologies); err != nil {
		return schedcore.AsStatus(fmt.Errorf("calculating preScoreState: %w", err))
	}
	if len(s.Constraints) == 0 {
		return schedcore.NewStatus(schedcore.Skip)
	}
	requiredNodeAffinity := helper.GetRequiredNodeAffinity(pod)
	incl := pl.newInclusion(pod, &requiredNodeAffinity, s.Constraints)
	// Zone-like constraints from totals kept across cycles (softCounts), or
	// node by node below; hostname ones node by node in Score, from
	// counters settled here (with totals, only theirs: an empty selector
	// counts nothing).
	totals := requireAllTopologies && !pl.noSoftTotals
	if totals {
		pl.softCounts(pod, s, &incl)
	}
	sels := make([]labels.Selector, len(s.Constraints))
	for i := range s.Constraints {
		if sels[i] = labels.Everything(); !totals || s.Constraints[i].TopologyKey == v1.LabelHostname {
			sels[i] = s.Constraints[i].Selector
		}
	}
	counters, release := pl.counts.Counts(pl.handle.Snapshot(), pod.Namespace, sels)
	defer release()
	s.hostCounts = make([]*schedcore.SelectorCount, len(s.Constraints))
	for i := range s.Constraints {
		if s.Constraints[i].TopologyKey == v1.LabelHostname {
			c := counters[i].Settle(ctx, pl.handle.Parallelizer(), pl.handle.Snapshot(), filteredNodes)
			s.hostCounts[i] = &c
		}
	}
	err := ctx.Err()
	if !totals {
		// Domains without a feasible node, and hostname constraints, are
		// skipped; a node without a matching pod adds nothing, so only the
		// nodes with some are visited when the counts say which.
		nodes := schedcore.NodesWithMatches(allNodes, counters, func(i int) bool { return s.hostCounts[i] == nil })
		err = s.counts.CountNodes(ctx, pl.handle.Parallelizer(), nodes, func(ni *schedcore.NodeInfo, doms []schedcore.Domain, all bool, row []int32) {
			if requireAllTopologies && !all {
				return
			}
			var v uint16
			for i, dom := range doms {
				if dom == schedcore.NoLabel {
					dom = s.counts.ValueDomain(i, "")
				}
				if s.hostCounts[i] != nil || !s.counts.Counted(i, dom) {
					continue
				}
				if v == 0 {
					v = incl.verdict(ni)
				}
				if s.Constraints[i].includes(v) {
					row[i] = int32(counters[i].Count(ni))
				}
			}
		})
	}
	if err != nil {
		return schedcore.AsStatus(err)
	}
	state.Write(preScoreStateKey, s)
	return nil
}

// Score sums, over the constraints whose topology key the node has,
// count × weight + (maxSkew − 1), where count is the matching pods in the
// node's domain (on the node itself for hostname), rounded. Lower is better;
// NormalizeColumn reverses it.
func (pl *PodTopologySpread) Score(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	s, err := schedcore.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	var buf [4]schedcore.Domain
	doms, all := s.counts.NodeDomains(nodeInfo, buf[:0])
	if s.requireAll && !all {
		// An ignored node.
		return 0, nil
	}
	var score float64
	for i, dom := range doms {
		if dom == schedcore.NoLabel {
			continue
		}
		cnt := s.counts.At(i, dom)
		if hc := s.hostCounts[i]; hc != nil {
			cnt = int64(hc.Count(nodeInfo))
		}
		score += scoreForCount(cnt, s.Constraints[i].MaxSkew, s.TopologyNormalizingWeight[i])
	}
	return int64(math.Round(score)), nil
}

// NormalizeColumn maps scores onto [0, 100] with the fewest matching pods
// best: 100 × (max + min − score) / max, 100 everywhere when max is 0, and 0
// for ignored nodes.
func (pl *PodTopologySpread) NormalizeColumn(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, scores []int64) *schedcore.Status {
	s, err := schedcore.ReadAs[*preScoreState](state, preScoreStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if s == nil {
		return nil
	}
	ignored := func(i int) bool { return s.ignored != nil && s.ignored[i] }
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for i, sc := range scores {
		if !ignored(i) {
			minScore, maxScore = min(minScore, sc), max(maxScore, sc)
		}
	}
	for i, sc := range scores {
		switch {
		case ignored(i):
			scores[i] = 0
		case maxScore == 0:
			scores[i] = schedcore.MaxNodeScore
		default:
			scores[i] = schedcore.MaxNodeScore * (maxScore + minScore - sc) / maxScore
		}
	}
	return nil
}

// topologyNormalizingWeight is log(size+2) for a topology of size domains:
// in <1.09, 8.52> for 1 to 5000 domains.
func topologyNormalizingWeight(size int) float64 {
	return math.Log(float64(size + 2))
}

// scoreForCount weighs a domain's matching pods; maxSkew−1 is added to
// water down differences between domains, making the score tolerate skew.
func scoreForCount(cnt int64, maxSkew int32, tpWeight float64) float64 {
	return float64(cnt)*tpWeight + float64(maxSkew-1)
}
