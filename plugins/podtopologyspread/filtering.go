package podtopologyspread

import (
	"context"
	"fmt"
	"maps"
	"math"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/resource"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The Filter rejections, shared by every call (see schedcore.NewSharedStatus).
var (
	statusNodeLabelNotMatch   = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch)
	statusConstraintsNotMatch = schedcore.NewSharedStatus(schedcore.Unschedulable, ErrReasonConstraintsNotMatch)
)

const preFilterStateKey schedcore.StateKey = "PreFilter" + Name

// preFilterState is computed in PreFilter and read by Filter: per hard
// constraint, the number of matching pods per topology value and the two
// critical paths (CriticalPaths[i][0].MatchNum is the global minimum).
// AddPod/RemovePod update it on clones during preemption and nominated-pod
// checks.
type preFilterState struct {
	Constraints []topologySpreadConstraint
	// CriticalPaths is indexed by constraint. [0] always holds the minimum
	// match number; [1] is >= [0] but not necessarily the second minimum.
	CriticalPaths []*criticalPaths
	// TpValueToMatchNum is indexed by constraint: matching pods per
	// topology value, for the domains that count.
	TpValueToMatchNum []map[string]int

	// selfMatchNum is, per constraint, 1 when the constraint selects the
	// incoming pod itself, else 0; computed once as the pod does not change.
	selfMatchNum []int
	// requiredNodeAffinity is the incoming pod's parsed nodeSelector and
	// required node affinity, reused by AddPod/RemovePod.
	requiredNodeAffinity helper.RequiredNodeAffinity

	// The dense form for Filter, when PreFilter counted the snapshot list:
	// list is that list, cols each constraint's label column and matchNum
	// the match numbers by the column's value ids. Read-only; AddPod and
	// RemovePod drop it from the copy they change (Filter then reads the
	// maps).
	list     []*schedcore.NodeInfo
	cols     []*schedcore.LabelColumn
	matchNum [][]int
}

// denseIndex is node's index in the dense form, -1 when it has none (no
// dense form, or a node that is not from the list PreFilter counted).
func (s *preFilterState) denseIndex(ni *schedcore.NodeInfo) int {
	if s.cols == nil {
		return -1
	}
	return schedcore.IndexIn(s.list, ni)
}

// minMatchNum returns the global minimum for the skew: the smallest match
// number, or 0 when fewer domains than minDomains exist.
func (s *preFilterState) minMatchNum(constraintID int, minDomains int32) int {
	m := s.CriticalPaths[constraintID][0].MatchNum
	if len(s.TpValueToMatchNum[constraintID]) < int(minDomains) {
		m = 0
	}
	return m
}

// Clone copies what AddPod/RemovePod change; constraints are shared.
func (s *preFilterState) Clone() schedcore.StateData {
	if s == nil {
		return nil
	}
	c := *s
	c.CriticalPaths = make([]*criticalPaths, len(s.CriticalPaths))
	for i, p := range s.CriticalPaths {
		cp := *p
		c.CriticalPaths[i] = &cp
	}
	c.TpValueToMatchNum = make([]map[string]int, len(s.TpValueToMatchNum))
	for i, m := range s.TpValueToMatchNum {
		c.TpValueToMatchNum[i] = maps.Clone(m)
	}
	return &c
}

// criticalPaths keeps the two topology values with the fewest matching
// pods. Two suffice because preemption removes pods from one node at a time,
// each on its own copy of the state (kube's caveat).
type criticalPaths [2]struct {
	TopologyValue string
	MatchNum      int
}

func newCriticalPaths() *criticalPaths {
	return &criticalPaths{{MatchNum: math.MaxInt32}, {MatchNum: math.MaxInt32}}
}

func (p *criticalPaths) update(tpVal string, num int) {
	i := -1
	if tpVal == p[0].TopologyValue {
		i = 0
	} else if tpVal == p[1].TopologyValue {
		i = 1
	}
	if i >= 0 {
		p[i].MatchNum = num
		if p[0].MatchNum > p[1].MatchNum {
			p[0], p[1] = p[1], p[0]
		}
		return
	}
	if num < p[0].MatchNum {
		p[1] = p[0]
		p[0].TopologyValue, p[0].MatchNum = tpVal, num
	} else if num < p[1].MatchNum {
		p[1].TopologyValue, p[1].MatchNum = tpVal, num
	}
}

// PreFilter counts, over all nodes, the pods matching each hard constraint
// per topology value. Skip when the pod has no hard constraints (and no
// hard default constraints apply).
func (pl *PodTopologySpread) PreFilter(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodes []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	if pl.enableSkipDeferredResize && resource.IsPodResizeDeferred(pod) {
		return nil, schedcore.NewStatus(schedcore.Skip)
	}
	s, err := pl.calPreFilterState(ctx, pod, nodes)
	if err != nil {
		return nil, schedcore.AsStatus(err)
	}
	if len(s.Constraints) == 0 {
		return nil, schedcore.NewStatus(schedcore.Skip)
	}
	state.Write(preFilterStateKey, s)
	return nil, nil
}

// AddPod counts a pod added to nodeInfo (a nominated pod or a preemption
// victim put back).
func (pl *PodTopologySpread) AddPod(_ context.Context, state *schedcore.CycleState, podToSchedule *v1.Pod, podInfoToAdd *schedcore.PodInfo, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	pl.updateWithPod(s, podInfoToAdd.Pod, podToSchedule, nodeInfo.Node(), 1)
	return nil
}

// RemovePod uncounts a pod removed from nodeInfo (a preemption victim).
func (pl *PodTopologySpread) RemovePod(_ context.Context, state *schedcore.CycleState, podToSchedule *v1.Pod, podInfoToRemove *schedcore.PodInfo, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := getPreFilterState(state)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	pl.updateWithPod(s, podInfoToRemove.Pod, podToSchedule, nodeInfo.Node(), -1)
	return nil
}

func (pl *PodTopologySpread) updateWithPod(s *preFilterState, updatedPod, preemptorPod *v1.Pod, node *v1.Node, delta int) {
	if s == nil {
		return
	}
	s.list, s.cols, s.matchNum = nil, nil, nil
	if updatedPod.Namespace != preemptorPod.Namespace || node == nil {
		return
	}
	if !nodeLabelsMatchSpreadConstraints(node.Labels, s.Constraints) {
		return
	}
	podLabelSet := labels.Set(updatedPod.Labels)
	for i := range s.Constraints {
		c := &s.Constraints[i]
		if !c.Selector.Matches(podLabelSet) {
			continue
		}
		if !c.matchNodeInclusionPolicies(pl.handle.Logger(), preemptorPod, node, &s.requiredNodeAffinity, pl.enableTaintTolerationComparisonOperators) {
			continue
		}
		v := node.Labels[c.TopologyKey]
		s.TpValueToMatchNum[i][v] += delta
		s.CriticalPaths[i].update(v, s.TpValueToMatchNum[i][v])
	}
}

// getPreFilterState reads the state PreFilter wrote.
func getPreFilterState(state *schedcore.CycleState) (*preFilterState, error) {
	c, err := state.Read(preFilterStateKey)
	if err != nil {
		return nil, fmt.Errorf("reading %q from cycleState: %w", preFilterStateKey, err)
	}
	s, ok := c.(*preFilterState)
	if !ok {
		return nil, fmt.Errorf("%+v convert to podtopologyspread.preFilterState error", c)
	}
	return s, nil
}

// calPreFilterState counts matching pods per constraint and topology value
// over allNodes in parallel. A node counts for a constraint when it has all
// the constraints' topology keys and passes the constraint's node inclusion
// policies.
func (pl *PodTopologySpread) calPreFilterState(ctx context.Context, pod *v1.Pod, allNodes []*schedcore.NodeInfo) (*preFilterState, error) {
	constraints, err := pl.getConstraints(pod)
	if err != nil {
		return nil, wrapf("get constraints from pod", err)
	}
	if len(constraints) == 0 {
		return &preFilterState{}, nil
	}
	nc := len(constraints)
	s := preFilterState{
		Constraints:          constraints,
		CriticalPaths:        make([]*criticalPaths, nc),
		TpValueToMatchNum:    make([]map[string]int, nc),
		selfMatchNum:         make([]int, nc),
		requiredNodeAffinity: helper.GetRequiredNodeAffinity(pod),
	}
	podLabelSet := labels.Set(pod.Labels)
	for i := range constraints {
		s.TpValueToMatchNum[i] = make(map[string]int, sizeHeuristic(len(allNodes), &constraints[i]))
		if constraints[i].Selector.Matches(podLabelSet) {
			s.selfMatchNum[i] = 1
		}
	}

	// counts[n*nc+i] is node n's count for constraint i, -1 when the node
	// does not count for it: one allocation instead of one per node.
	counts := make([]int, len(allNodes)*nc)
	counters, release := pl.counters(constraints, pod.Namespace, allNodes)
	defer release()
	incl := pl.newInclusion(pod, &s.requiredNodeAffinity, constraints, len(allNodes))
	pl.initDenseFilter(&s, allNodes)
	pl.handle.Parallelizer().Until(ctx, len(allNodes), func(n int) {
		row := counts[n*nc : (n+1)*nc]
		for i := range row {
			row[i] = -1
		}
		node := allNodes[n].Node()
		if node == nil {
			return
		}
		if s.cols != nil {
			for i := range s.cols {
				if s.cols[i].At(n) < 0 {
					return
				}
			}
		} else if !nodeLabelsMatchSpreadConstraints(node.Labels, constraints) {
			return
		}
		v := incl.verdict(allNodes[n])
		for i := range constraints {
			if !constraints[i].includes(v) {
				continue
			}
			row[i] = counters[i].count(allNodes[n])
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.cols != nil {
		// Sum by value id, then give the domains that count their names.
		counted := make([][]bool, nc)
		for i := range constraints {
			counted[i] = make([]bool, len(s.matchNum[i]))
		}
		for n := range allNodes {
			row := counts[n*nc : (n+1)*nc]
			for i, cnt := range row {
				if cnt >= 0 {
					id := s.cols[i].At(n)
					s.matchNum[i][id] += cnt
					counted[i][id] = true
				}
			}
		}
		for i := range constraints {
			for id, ok := range counted[i] {
				if ok {
					s.TpValueToMatchNum[i][s.cols[i].Values[id]] = s.matchNum[i][id]
				}
			}
		}
	} else {
		for n, ni := range allNodes {
			row := counts[n*nc : (n+1)*nc]
			for i, cnt := range row {
				if cnt >= 0 {
					s.TpValueToMatchNum[i][ni.Node().Labels[constraints[i].TopologyKey]] += cnt
				}
			}
		}
	}
	for i := range constraints {
		s.CriticalPaths[i] = newCriticalPaths()
		for value, num := range s.TpValueToMatchNum[i] {
			s.CriticalPaths[i].update(value, num)
		}
	}
	return &s, nil
}

// initDenseFilter sets up the dense form when allNodes is the snapshot's
// list (the label columns' list).
func (pl *PodTopologySpread) initDenseFilter(s *preFilterState, allNodes []*schedcore.NodeInfo) {
	snap := pl.handle.Snapshot()
	if snap == nil {
		return
	}
	if !snap.IsList(allNodes) {
		return
	}
	s.list = snap.List()
	s.cols = make([]*schedcore.LabelColumn, len(s.Constraints))
	s.matchNum = make([][]int, len(s.Constraints))
	for i := range s.Constraints {
		s.cols[i] = snap.LabelColumn(s.Constraints[i].TopologyKey)
		s.matchNum[i] = make([]int, s.cols[i].NumValues())
	}
}

// Filter checks every hard constraint on the node: the node must have the
// topology key (else UnschedulableAndUnresolvable), and
// matching pods in its domain + (1 if the pod matches itself) - global
// minimum must not exceed maxSkew (else Unschedulable).
func (pl *PodTopologySpread) Filter(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	if pl.enableSkipDeferredResize && resource.IsPodResizeDeferred(pod) {
		return nil
	}
	s, err := getPreFilterState(state)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if len(s.Constraints) == 0 {
		return nil
	}
	if idx := s.denseIndex(nodeInfo); idx >= 0 {
		for i := range s.Constraints {
			c := &s.Constraints[i]
			id := s.cols[i].At(idx)
			if id < 0 {
				pl.logFilter(nodeInfo.Node(), c, "Node doesn't have required topology label for spread constraint", 0, 0, 0)
				return statusNodeLabelNotMatch
			}
			minMatchNum := s.minMatchNum(i, c.MinDomains)
			matchNum := s.matchNum[i][id]
			if skew := matchNum + s.selfMatchNum[i] - minMatchNum; skew > int(c.MaxSkew) {
				pl.logFilter(nodeInfo.Node(), c, "Node failed spreadConstraint: matchNum + selfMatchNum - minMatchNum > maxSkew", matchNum, s.selfMatchNum[i], minMatchNum)
				return statusConstraintsNotMatch
			}
		}
		return nil
	}
	node := nodeInfo.Node()
	for i := range s.Constraints {
		c := &s.Constraints[i]
		tpVal, ok := node.Labels[c.TopologyKey]
		if !ok {
			pl.logFilter(node, c, "Node doesn't have required topology label for spread constraint", 0, 0, 0)
			return statusNodeLabelNotMatch
		}
		minMatchNum := s.minMatchNum(i, c.MinDomains)
		matchNum := s.TpValueToMatchNum[i][tpVal]
		if skew := matchNum + s.selfMatchNum[i] - minMatchNum; skew > int(c.MaxSkew) {
			pl.logFilter(node, c, "Node failed spreadConstraint: matchNum + selfMatchNum - minMatchNum > maxSkew", matchNum, s.selfMatchNum[i], minMatchNum)
			return statusConstraintsNotMatch
		}
	}
	return nil
}

// logFilter logs a failing node at V(5), as kube does; only failing nodes
// pay for it.
func (pl *PodTopologySpread) logFilter(node *v1.Node, c *topologySpreadConstraint, msg string, matchNum, selfMatchNum, minMatchNum int) {
	if l := pl.handle.Logger().V(5); l.Enabled() {
		logFilterTo(l, node, c, msg, matchNum, selfMatchNum, minMatchNum)
	}
}

func logFilterTo(l logr.Logger, node *v1.Node, c *topologySpreadConstraint, msg string, matchNum, selfMatchNum, minMatchNum int) {
	l.Info(msg, "node", node.Name, "topologyKey", c.TopologyKey, "matchNum", matchNum, "selfMatchNum", selfMatchNum, "minMatchNum", minMatchNum, "maxSkew", c.MaxSkew)
}

// sizeHeuristic sizes the per-constraint map: one entry per node for
// hostname spreading.
func sizeHeuristic(nodes int, c *topologySpreadConstraint) int {
	if c.TopologyKey == v1.LabelHostname {
		return nodes
	}
	return 0
}
