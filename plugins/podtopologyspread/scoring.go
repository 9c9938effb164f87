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

	// The dense form, when every node comes from the snapshot list: cols
	// holds each constraint's label column, present and counts are indexed
	// by constraint then by the column's value id (nil for hostname
	// constraints), and ignored by list index. The maps above point into
	// counts, so both forms read the same numbers.
	cols    []*schedcore.LabelColumn
	present [][]bool
	counts  [][]int64
	empty   []int32
	ignored []bool
	list    []*schedcore.NodeInfo
}

// nodeHasAllKeys reports whether node idx has every constraint's topology
// key, from the columns.
func (s *preScoreState) nodeHasAllKeys(idx int) bool {
	for i := range s.cols {
		if s.cols[i].At(idx) < 0 {
			return false
		}
	}
	return true
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
	if pl.initDense(s, filteredNodes) {
		for _, ni := range filteredNodes {
			idx := ni.ListIndex()
			if requireAllTopologies && !s.nodeHasAllKeys(idx) {
				s.IgnoredNodes.Insert(ni.Name())
				s.ignored[idx] = true
				continue
			}
			for i := range s.Constraints {
				if s.counts[i] == nil {
					continue
				}
				id := s.cols[i].At(idx)
				if id < 0 {
					id = s.noLabelID(i)
				}
				if !s.present[i][id] {
					s.present[i][id] = true
					s.TopologyValueToPodCounts[i][s.valueOf(i, id)] = &s.counts[i][id]
					topoSize[i]++
				}
			}
		}
	} else {
		pl.initMaps(s, filteredNodes, requireAllTopologies, topoSize)
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

// initDense sets up the dense form when every feasible node is from the
// snapshot list, and reports whether it did.
func (pl *PodTopologySpread) initDense(s *preScoreState, filteredNodes []*schedcore.NodeInfo) bool {
	snap := pl.handle.Snapshot()
	if snap == nil {
		return false
	}
	all := snap.List()
	for _, ni := range filteredNodes {
		if schedcore.IndexIn(all, ni) < 0 {
			return false
		}
	}
	s.cols = make([]*schedcore.LabelColumn, len(s.Constraints))
	s.present = make([][]bool, len(s.Constraints))
	s.counts = make([][]int64, len(s.Constraints))
	s.empty = make([]int32, len(s.Constraints))
	for i := range s.Constraints {
		key := s.Constraints[i].TopologyKey
		s.cols[i] = snap.LabelColumn(key)
		if key == v1.LabelHostname {
			continue
		}
		// Nodes without the label (counted only when not every key is
		// required) are in the domain "", with the nodes whose value is "":
		// that value's slot, or one more than the values.
		n := s.cols[i].NumValues()
		s.empty[i] = int32(n)
		for id, v := range s.cols[i].Values {
			if v == "" {
				s.empty[i] = int32(id)
			}
		}
		if int(s.empty[i]) == n {
			n++
		}
		s.present[i], s.counts[i] = make([]bool, n), make([]int64, n)
	}
	s.ignored = make([]bool, len(all))
	s.list = all
	return true
}

// noLabelID is the slot of nodes without constraint i's label: the domain
// "", the value a missing label reads as.
func (s *preScoreState) noLabelID(i int) int32 { return s.empty[i] }

// valueOf is the topology value of slot id of constraint i.
func (s *preScoreState) valueOf(i int, id int32) string {
	if int(id) >= len(s.cols[i].Values) {
		return ""
	}
	return s.cols[i].Values[id]
}

// initMaps is initPreScoreState's node loop over the label maps, for nodes
// that are not all from the snapshot list.
func (pl *PodTopologySpread) initMaps(s *preScoreState, filteredNodes []*schedcore.NodeInfo, requireAllTopologies bool, topoSize []int) {
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
	incl := pl.newInclusion(pod, &requiredNodeAffinity, s.Constraints, len(allNodes))
	pl.handle.Parallelizer().Until(ctx, len(allNodes), func(n int) {
		ni := allNodes[n]
		node := ni.Node()
		if node == nil {
			return
		}
		if s.cols != nil {
			// allNodes is the list the columns were built for.
			if requireAllTopologies && !s.nodeHasAllKeys(n) {
				return
			}
		} else if requireAllTopologies && !nodeLabelsMatchSpreadConstraints(node.Labels, s.Constraints) {
			return
		}
		var v uint16
		for i := range s.Constraints {
			c := &s.Constraints[i]
			// Domains without a feasible node, and hostname constraints
			// (counted in Score), are skipped.
			var tpCount *int64
			if s.cols != nil {
				if s.counts[i] == nil {
					continue
				}
				id := s.cols[i].At(n)
				if id < 0 {
					id = s.noLabelID(i)
				}
				if !s.present[i][id] {
					continue
				}
				tpCount = &s.counts[i][id]
			} else if tpCount = s.TopologyValueToPodCounts[i][node.Labels[c.TopologyKey]]; tpCount == nil {
				continue
			}
			if v == 0 {
				v = incl.verdict(ni)
			}
			if !c.includes(v) {
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
	if s.cols != nil {
		if idx := schedcore.IndexIn(s.list, nodeInfo); idx >= 0 {
			return s.denseScore(pod, nodeInfo, idx), nil
		}
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

// denseScore is Score from the columns for node idx of the snapshot list.
func (s *preScoreState) denseScore(pod *v1.Pod, nodeInfo *schedcore.NodeInfo, idx int) int64 {
	if s.ignored[idx] {
		return 0
	}
	var score float64
	for i := range s.Constraints {
		c := &s.Constraints[i]
		id := s.cols[i].At(idx)
		if id < 0 {
			continue
		}
		var cnt int64
		if s.counts[i] == nil { // hostname
			if idx < len(s.hostCounts[i]) && s.hostCounts[i][idx] >= 0 {
				cnt = int64(s.hostCounts[i][idx])
			} else {
				cnt = int64(countPodsMatchSelector(nodeInfo.Pods, c.Selector, pod.Namespace))
			}
		} else if s.present[i][id] {
			cnt = s.counts[i][id]
		}
		score += scoreForCount(cnt, c.MaxSkew, s.TopologyNormalizingWeight[i])
	}
	return int64(math.Round(score))
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
		if len(s.IgnoredNodes) > 0 && s.IgnoredNodes.Has(scores[i].Name) {
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
