package podtopologyspread

import (
	"context"
	"math"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

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
// constraint, the matching pods per domain of the nodes that count, and
// the two critical paths. AddPod and RemovePod update it on clones.
type preFilterState struct {
	Constraints []topologySpreadConstraint
	// CriticalPaths is indexed by constraint. [0] always holds the minimum
	// match number; [1] is >= [0] but not necessarily the second minimum.
	CriticalPaths []criticalPaths
	counts        *schedcore.DomainCounts
	// selfMatchNum is, per constraint, 1 when the constraint selects the
	// incoming pod itself, else 0.
	selfMatchNum []int
	// requiredNodeAffinity is the pod's, for AddPod/RemovePod.
	requiredNodeAffinity helper.RequiredNodeAffinity
}

// Clone copies what AddPod/RemovePod change; constraints are shared.
func (s *preFilterState) Clone() schedcore.StateData {
	if s == nil {
		return nil
	}
	c := *s
	c.counts = s.counts.Clone()
	c.CriticalPaths = slices.Clone(s.CriticalPaths)
	return &c
}

// criticalPaths keeps the two domains with the fewest matching pods. Two
// suffice because preemption removes pods from one node at a time, each on
// its own copy of the state (kube's caveat).
type criticalPaths [2]struct {
	Domain   schedcore.Domain
	MatchNum int
}

func newCriticalPaths() criticalPaths {
	return criticalPaths{{Domain: schedcore.NoDomain, MatchNum: math.MaxInt32}, {Domain: schedcore.NoDomain, MatchNum: math.MaxInt32}}
}

func (p *criticalPaths) update(dom schedcore.Domain, num int) {
	i := -1
	if dom == p[0].Domain {
		i = 0
	} else if dom == p[1].Domain {
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
		p[0].Domain, p[0].MatchNum = dom, num
	} else if num < p[1].MatchNum {
		p[1].Domain, p[1].MatchNum = dom, num
	}
}

// PreFilter counts, over all nodes (the snapshot's list, which the
// framework passes), the pods matching each hard constraint per domain. Skip when the pod has no hard constraints (and no hard
// default constraints apply).
func (pl *PodTopologySpread) PreFilter(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	s, err := pl.calPreFilterState(pod)
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
	s, err := schedcore.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	pl.updateWithPod(s, podInfoToAdd.Pod, podToSchedule, nodeInfo, 1)
	return nil
}

// RemovePod uncounts a pod removed from nodeInfo (a preemption victim).
func (pl *PodTopologySpread) RemovePod(_ context.Context, state *schedcore.CycleState, podToSchedule *v1.Pod, podInfoToRemove *schedcore.PodInfo, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	pl.updateWithPod(s, podInfoToRemove.Pod, podToSchedule, nodeInfo, -1)
	return nil
}

func (pl *PodTopologySpread) updateWithPod(s *preFilterState, updatedPod, preemptorPod *v1.Pod, nodeInfo *schedcore.NodeInfo, delta int) {
	node := nodeInfo.Node()
	if s == nil || updatedPod.Namespace != preemptorPod.Namespace || node == nil {
		return
	}
	if _, all := s.counts.NodeDomains(nodeInfo, nil); !all {
		return
	}
	podLabelSet := labels.Set(updatedPod.Labels)
	incl := pl.inclusionOf(preemptorPod, &s.requiredNodeAffinity, nodeInfo)
	for i := range s.Constraints {
		if !s.Constraints[i].Selector.Matches(podLabelSet) || !s.Constraints[i].includes(incl) {
			continue
		}
		dom, _ := s.counts.AddNode(i, nodeInfo, int64(delta))
		s.CriticalPaths[i].update(dom, int(s.counts.At(i, dom)))
	}
}

// calPreFilterState counts matching pods per constraint and domain over
// every node (from totals kept across cycles: see domainTotals). A node
// counts for a constraint when it has all the constraints' topology keys
// and passes the constraint's node inclusion policies.
func (pl *PodTopologySpread) calPreFilterState(pod *v1.Pod) (*preFilterState, error) {
	constraints, err := pl.getConstraints(pod, v1.DoNotSchedule)
	if err != nil {
		return nil, wrapf("get constraints from pod", err)
	}
	if len(constraints) == 0 {
		return &preFilterState{}, nil
	}
	nc := len(constraints)
	s := preFilterState{
		Constraints:          constraints,
		CriticalPaths:        make([]criticalPaths, nc),
		counts:               schedcore.NewDomainCounts(pl.handle.Snapshot(), topologyKeys(constraints)...),
		selfMatchNum:         make([]int, nc),
		requiredNodeAffinity: helper.GetRequiredNodeAffinity(pod),
	}
	for i := range constraints {
		if constraints[i].Selector.Matches(labels.Set(pod.Labels)) {
			s.selfMatchNum[i] = 1
		}
	}
	incl := pl.newInclusion(pod, &s.requiredNodeAffinity, constraints)
	pl.hardCounts(pod, &s, &incl)
	for i := range constraints {
		s.CriticalPaths[i] = newCriticalPaths()
		s.counts.ForEach(i, func(dom schedcore.Domain, num int64) { s.CriticalPaths[i].update(dom, int(num)) })
	}
	return &s, nil
}

// Filter checks every hard constraint on the node: the node must have the
// topology key (else UnschedulableAndUnresolvable), and matching pods in
// its domain + (1 if the pod matches itself) - global minimum must not
// exceed maxSkew (else Unschedulable).
func (pl *PodTopologySpread) Filter(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	var buf [4]schedcore.Domain
	doms, _ := s.counts.NodeDomains(nodeInfo, buf[:0])
	for i := range s.Constraints {
		// check's rule, inline: Filter runs pods × nodes times.
		if dom := doms[i]; dom == schedcore.NoLabel || int(s.counts.At(i, dom))+s.selfMatchNum[i]-s.minMatchNum(i) > int(s.Constraints[i].MaxSkew) {
			pl.logFilter(nodeInfo, s, i, dom)
			if dom == schedcore.NoLabel {
				return statusNodeLabelNotMatch
			}
			return statusConstraintsNotMatch
		}
	}
	return nil
}

// violation is a hard constraint a node violates: it lacks the topology
// key (labeled false), or the pod would make its domain's skew too large.
type violation struct {
	constraint                  int
	labeled                     bool
	skew, matchNum, minMatchNum int
}

// check returns what constraint i says of a node whose domain of its key
// is dom (NoLabel: it lacks the key), and whether the node violates it:
// the skew the pod would cause there (matching pods, plus 1 if the pod
// matches itself, minus the global minimum) exceeds maxSkew.
func (s *preFilterState) check(i int, dom schedcore.Domain) (violation, bool) {
	if dom == schedcore.NoLabel {
		return violation{constraint: i}, true
	}
	matchNum, minMatchNum := int(s.counts.At(i, dom)), s.minMatchNum(i)
	skew := matchNum + s.selfMatchNum[i] - minMatchNum
	return violation{constraint: i, labeled: true, skew: skew, matchNum: matchNum, minMatchNum: minMatchNum}, skew > int(s.Constraints[i].MaxSkew)
}

// minMatchNum returns constraint i's global minimum: the smallest match
// number, or 0 when fewer domains than minDomains exist.
func (s *preFilterState) minMatchNum(i int) int {
	if s.counts.NumCounted(i) < int(s.Constraints[i].MinDomains) {
		return 0
	}
	return s.CriticalPaths[i][0].MatchNum
}

// logFilter logs a node failing constraint i at V(5), as kube does; only
// failing nodes pay for it.
func (pl *PodTopologySpread) logFilter(nodeInfo *schedcore.NodeInfo, s *preFilterState, i int, dom schedcore.Domain) {
	if l := pl.handle.Logger().V(5); l.Enabled() {
		v, _ := s.check(i, dom)
		msg := "Node failed spreadConstraint: matchNum + selfMatchNum - minMatchNum > maxSkew"
		if !v.labeled {
			msg = "Node doesn't have required topology label for spread constraint"
		}
		l.Info(msg, "node", nodeInfo.Node().Name, "topologyKey", s.Constraints[i].TopologyKey, "matchNum", v.matchNum, "selfMatchNum", s.selfMatchNum[i], "minMatchNum", v.minMatchNum, "maxSkew", s.Constraints[i].MaxSkew)
	}
}

// PodBlind: PreFilter counts the pods of the domains into its state but
// fails only on the pod's own constraints (Filter reads the counts).
func (pl *PodTopologySpread) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter
}

var _ schedcore.PodBlindPlugin = (*PodTopologySpread)(nil)
