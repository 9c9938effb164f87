package podtopologyspread

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const preScoreStateKey schedcore.StateKey = "PreScore" + Name

// invalidScore marks ignored nodes during NormalizeScore.
const invalidScore = -1

// preScoreState is computed in PreScore and read by Score and
// NormalizeScore.
type preScoreState struct {
	Constraints []topologySpreadConstraint
	// IgnoredNodes are the feasible nodes missing some topology key (only
	// when all keys are required); they score 0.
	IgnoredNodes sets.Set[string]
	// TopologyValueToPodCounts is indexed by constraint: matching pods per
	// topology value of the feasible nodes. Hostname constraints are
	// counted per node in Score instead and have no entries.
	TopologyValueToPodCounts []map[string]*int64
	// TopologyNormalizingWeight is log(domains+2) per constraint, so that
	// the counts of small topologies are not watered down by large ones.
	TopologyNormalizingWeight []float64
	// hostCounts is indexed by constraint, then by the node's snapshot list
	// index: the matching pods on each feasible node, for the hostname
	// constraints (nil for the others); -1 where not counted.
	hostCounts [][]int32
}

// Clone returns the state itself: nothing changes it after PreScore.
func (s *preScoreState) Clone() schedcore.StateData { return s }

// initPreScoreState fills in the soft constraints, the ignored nodes, the
// domains of the feasible nodes and the normalizing weights.
func (pl *PodTopologySpread) initPreScoreState(s *preScoreState, pod *v1.Pod, filteredNodes []*schedcore.NodeInfo, requireAllTopologies bool) error {
	var err error
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		s.Constraints, err = pl.filterTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, v1.ScheduleAnyway)
		if err != nil {
			return wrapf("obtaining pod's soft topology spread constraints", err)
		}
	} else {
		s.Constraints, err = pl.buildDefaultConstraints(pod, v1.ScheduleAnyway)
		if err != nil {
			return wrapf("setting default soft topology spread constraints", err)
		}
	}
	if len(s.Constraints) == 0 {
		return nil
	}
	s.TopologyValueToPodCounts = make([]map[string]*int64, len(s.Constraints))
	for i := range s.Constraints {
		s.TopologyValueToPodCounts[i] = make(map[string]*int64)
	}
	topoSize := make([]int, len(s.Constraints))
	for _, ni := range filteredNodes {
		node := ni.Node()
		if requireAllTopologies && !nodeLabelsMatchSpreadConstraints(node.Labels, s.Constraints) {
			s.IgnoredNodes.Insert(node.Name)
			continue
		}
		for i := range s.Constraints {
			key := s.Constraints[i].TopologyKey
			if key == v1.LabelHostname {
				continue
			}
			value := node.Labels[key]
			if s.TopologyValueToPodCounts[i][value] == nil {
				s.TopologyValueToPodCounts[i][value] = new(int64)
				topoSize[i]++
			}
		}
	}
	s.TopologyNormalizingWeight = make([]float64, len(s.Constraints))
	for i := range s.Constraints {
		sz := topoSize[i]
		if s.Constraints[i].TopologyKey == v1.LabelHostname {
			sz = len(filteredNodes) - len(s.IgnoredNodes)
		}
		s.TopologyNormalizingWeight[i] = topologyNormalizingWeight(sz)
	}
	return nil
}

// PreScore counts, over all nodes, the pods matching each soft constraint
// in the domains of the feasible nodes. Skip when there are no nodes or no
// soft constraints (the default ones apply only to pods without constraints
// and with a non-empty default selector).
func (pl *PodTopologySpread) PreScore(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, filteredNodes []*schedcore.NodeInfo) *schedcore.Status {
	allNodes := pl.handle.Snapshot().List()
	if len(allNodes) == 0 {
		return schedcore.NewStatus(schedcore.Skip)
	}
	s := &preScoreState{IgnoredNodes: sets.New[string]()}
	// Only non-system-default spreading requires every topology key, so that
	// nodes without a zone label still get hostname spreading.
	requireAllTopologies := len(pod.Spec.TopologySpreadConstraints) > 0 || !pl.systemDefaulted
	if err := pl.initPreScoreState(s, pod, filteredNodes, requireAllTopologies); err != nil {
		return schedcore.AsStatus(fmt.Errorf("calculating preScoreState: %w", err))
	}
	if len(s.Constraints) == 0 {
		return schedcore.NewStatus(schedcore.Skip)
	}

	counters, release := pl.counters(s.Constraints, pod.Namespace, allNodes)
	defer release()
	hasHostname := false
	s.hostCounts = make([][]int32, len(s.Constraints))
	for i := range s.Constraints {
		if s.Constraints[i].TopologyKey == v1.LabelHostname {
			s.hostCounts[i] = make([]int32, len(allNodes))
			for j := range s.hostCounts[i] {
				s.hostCounts[i][j] = -1
			}
			hasHostname = true
		}
	}
	if hasHostname {
		pl.handle.Parallelizer().Until(ctx, len(filteredNodes), func(n int) {
			ni := filteredNodes[n]
			idx := ni.ListIndex()
			if idx < 0 || idx >= len(allNodes) {
				return
			}
			for i := range s.Constraints {
				if s.hostCounts[i] != nil {
					s.hostCounts[i][idx] = int32(counters[i].count(ni))
				}
			}
		})
	}

	requiredNodeAffinity := helper.GetRequiredNodeAffinity(pod)
	logger := pl.handle.Logger
	pl.handle.Parallelizer().Until(ctx, len(allNodes), func(n int) {
		ni := allNodes[n]
		node := ni.Node()
		if node == nil {
			return
		}
		if requireAllTopologies && !nodeLabelsMatchSpreadConstraints(node.Labels, s.Constraints) {
			return
		}
		for i := range s.Constraints {
			c := &s.Constraints[i]
			if !c.matchNodeInclusionPolicies(logger, pod, node, &requiredNodeAffinity, pl.enableTaintTolerationComparisonOperators) {
				continue
			}
			// Domains without a feasible node, and hostname constraints
			// (counted in Score), are skipped.
			tpCount := s.TopologyValueToPodCounts[i][node.Labels[c.TopologyKey]]
			if tpCount == nil {
				continue
			}
			atomic.AddInt64(tpCount, int64(counters[i].count(ni)))
		}
	})
	if err := ctx.Err(); err != nil {
		return schedcore.AsStatus(err)
	}
	state.Write(preScoreStateKey, s)
	return nil
}

// Score sums, over the constraints whose topology key the node has,
// count × weight + (maxSkew − 1), where count is the matching pods in the
// node's domain (on the node itself for hostname), rounded. Lower is better;
// NormalizeScore reverses it.
func (pl *PodTopologySpread) Score(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	s, err := getPreScoreState(state)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	node := nodeInfo.Node()
	if s.IgnoredNodes.Has(node.Name) {
		return 0, nil
	}
	var score float64
	for i := range s.Constraints {
		c := &s.Constraints[i]
		tpVal, ok := node.Labels[c.TopologyKey]
		if !ok {
			continue
		}
		var cnt int64
		if c.TopologyKey == v1.LabelHostname {
			if idx := nodeInfo.ListIndex(); idx >= 0 && idx < len(s.hostCounts[i]) && s.hostCounts[i][idx] >= 0 {
				cnt = int64(s.hostCounts[i][idx])
			} else {
				cnt = int64(countPodsMatchSelector(nodeInfo.Pods, c.Selector, pod.Namespace))
			}
		} else if p := s.TopologyValueToPodCounts[i][tpVal]; p != nil {
			cnt = *p
		}
		score += scoreForCount(cnt, c.MaxSkew, s.TopologyNormalizingWeight[i])
	}
	return int64(math.Round(score)), nil
}

// NormalizeScore maps scores onto [0, 100] with the fewest matching pods
// best: 100 × (max + min − score) / max, 100 everywhere when max is 0, and 0
// for ignored nodes.
func (pl *PodTopologySpread) NormalizeScore(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, scores schedcore.NodeScoreList) *schedcore.Status {
	s, err := getPreScoreState(state)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if s == nil {
		return nil
	}
	var minScore int64 = math.MaxInt64
	var maxScore int64
	for i := range scores {
		if s.IgnoredNodes.Has(scores[i].Name) {
			scores[i].Score = invalidScore
			continue
		}
		minScore = min(minScore, scores[i].Score)
		maxScore = max(maxScore, scores[i].Score)
	}
	for i := range scores {
		if scores[i].Score == invalidScore {
			scores[i].Score = 0
			continue
		}
		if maxScore == 0 {
			scores[i].Score = schedcore.MaxNodeScore
			continue
		}
		scores[i].Score = schedcore.MaxNodeScore * (maxScore + minScore - scores[i].Score) / maxScore
	}
	return nil
}

func getPreScoreState(state *schedcore.CycleState) (*preScoreState, error) {
	c, err := state.Read(preScoreStateKey)
	if err != nil {
		return nil, fmt.Errorf("error reading %q from cycleState: %w", preScoreStateKey, err)
	}
	s, ok := c.(*preScoreState)
	if !ok {
		return nil, fmt.Errorf("%+v  convert to podtopologyspread.preScoreState error", c)
	}
	return s, nil
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
