package nodeaffinity

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The Filter rejections, shared by every call (see schedcore.NewSharedStatus).
var (
	statusPod      = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonPod)
	statusEnforced = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonEnforced)
)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.NodeAffinity

	preFilterStateKey schedcore.StateKey = "PreFilter" + Name
	preScoreStateKey  schedcore.StateKey = "PreScore" + Name

	// ErrReasonPod is the Filter reason when the node does not match the
	// pod's nodeSelector or required node affinity.
	ErrReasonPod = "node(s) didn't match Pod's node affinity/selector"
	// ErrReasonEnforced is the Filter reason when the node does not match the
	// scheduler's args.addedAffinity.
	ErrReasonEnforced = "node(s) didn't match scheduler-enforced node affinity"
	// ErrReasonConflict is the PreFilter reason when the pod's required terms
	// name no node at all through metadata.name.
	ErrReasonConflict = "pod affinity terms conflict"
)

// NodeAffinity filters and scores nodes by the pod's node selector and node
// affinity, plus the scheduler-enforced added affinity.
type NodeAffinity struct {
	addedNodeSelector   *nodeaffinity.NodeSelector
	addedPrefSchedTerms *nodeaffinity.PreferredSchedulingTerms
	// terms remembers which nodes match a preferred term (termViews).
	terms  *schedcore.VerdictMemo
	handle *schedcore.Handle
}

var (
	_ schedcore.PreFilterPlugin      = (*NodeAffinity)(nil)
	_ schedcore.FilterPlugin         = (*NodeAffinity)(nil)
	_ schedcore.PreScorePlugin       = (*NodeAffinity)(nil)
	_ schedcore.ScorePlugin          = (*NodeAffinity)(nil)
	_ schedcore.NormalizeScorePlugin = (*NodeAffinity)(nil)
	_ schedcore.EnqueueExtensions    = (*NodeAffinity)(nil)
	_ schedcore.NodeLocalPlugin      = (*NodeAffinity)(nil)
	_ schedcore.FilterExplainer      = (*NodeAffinity)(nil)
	// The framework remembers Filter's verdicts (its rejections are
	// shared statuses) and Score's sums per node, keyed by the pod's
	// constraints (pods of one workload share them), while the node is
	// unchanged.
	_ schedcore.NodeLocalFilter = (*NodeAffinity)(nil)
	_ schedcore.NodeLocalScorer = (*NodeAffinity)(nil)
)

// NodeLocal is true: the verdict reads the node's own labels (and name).
func (pl *NodeAffinity) NodeLocal(*v1.Pod) bool { return true }

// New builds the plugin from *configv1.NodeAffinityArgs (nil means none).
func New(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	args, err := getArgs(obj)
	if err != nil {
		return nil, err
	}
	pl := &NodeAffinity{terms: schedcore.NewVerdictMemo(termMemoKeys), handle: h}
	if a := args.AddedAffinity; a != nil {
		if ns := a.RequiredDuringSchedulingIgnoredDuringExecution; ns != nil {
			if pl.addedNodeSelector, err = nodeaffinity.NewNodeSelector(ns); err != nil {
				return nil, fmt.Errorf("parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: %w", err)
			}
		}
		if terms := a.PreferredDuringSchedulingIgnoredDuringExecution; len(terms) != 0 {
			if pl.addedPrefSchedTerms, err = nodeaffinity.NewPreferredSchedulingTerms(terms); err != nil {
				return nil, fmt.Errorf("parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: %w", err)
			}
		}
	}
	return pl, nil
}

// Name returns the plugin's name.
func (pl *NodeAffinity) Name() string { return Name }

// EventsToRegister: a node added or relabelled may now match.
func (pl *NodeAffinity) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

// isSchedulableAfterNodeChange queues the pod when the new node matches the
// added affinity and the pod's required affinity, and it is a new node or
// did not match before the update.
func (pl *NodeAffinity) isSchedulableAfterNodeChange(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	originalNode, modifiedNode, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if pl.addedNodeSelector != nil && !pl.addedNodeSelector.Match(modifiedNode) {
		logger.V(4).Info("added or modified node didn't match scheduler-enforced node affinity and this event won't make the Pod schedulable", "pod", schedcore.PodName(pod), "node", modifiedNode.Name)
		return schedcore.QueueSkip, nil
	}
	required := nodeaffinity.GetRequiredNodeAffinity(pod)
	isMatched, err := required.Match(modifiedNode)
	if err != nil {
		return schedcore.Queue, err
	}
	if !isMatched {
		logger.V(5).Info("node was created or updated, but the pod's NodeAffinity doesn't match", "pod", schedcore.PodName(pod), "node", modifiedNode.Name)
		return schedcore.QueueSkip, nil
	}
	if originalNode == nil {
		logger.V(5).Info("node was created, and matches with the pod's NodeAffinity", "pod", schedcore.PodName(pod), "node", modifiedNode.Name)
		return schedcore.Queue, nil
	}
	wasMatched, err := required.Match(originalNode)
	if err != nil {
		return schedcore.Queue, err
	}
	if wasMatched {
		logger.V(5).Info("node updated, but the pod's NodeAffinity hasn't changed", "pod", schedcore.PodName(pod), "node", modifiedNode.Name)
		return schedcore.QueueSkip, nil
	}
	logger.V(5).Info("node was updated and the pod's NodeAffinity changed to matched", "pod", schedcore.PodName(pod), "node", modifiedNode.Name)
	return schedcore.Queue, nil
}

// preFilterState is the pod's parsed nodeSelector and required affinity.
type preFilterState struct {
	requiredNodeSelectorAndAffinity helper.RequiredNodeAffinity
}

// Clone returns the state itself: other pods do not change it.
func (s *preFilterState) Clone() schedcore.StateData { return s }

// PreFilter parses the pod's required node constraints and, when they pin
// the pod to named nodes through metadata.name, restricts the nodes.
func (pl *NodeAffinity) PreFilter(_ context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	affinity := pod.Spec.Affinity
	noNodeAffinity := affinity == nil || affinity.NodeAffinity == nil || affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil
	if noNodeAffinity && pl.addedNodeSelector == nil && pod.Spec.NodeSelector == nil {
		return nil, schedcore.Skipped()
	}
	st := &preFilterState{requiredNodeSelectorAndAffinity: helper.GetRequiredNodeAffinity(pod)}
	if pl.handle != nil {
		// Filter reads the listed nodes' labels from the label columns.
		st.requiredNodeSelectorAndAffinity.Bind(pl.handle.Snapshot())
	}
	cycleState.Write(preFilterStateKey, st)
	if noNodeAffinity || len(affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms) == 0 {
		return nil, nil
	}

	// Terms are ORed, requirements within a term ANDed: the pod is pinned to
	// named nodes only if every term has a metadata.name In requirement.
	var nodeNames sets.Set[string]
	for _, t := range affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		var termNodeNames sets.Set[string]
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == v1.NodeSelectorOpIn {
				s := sets.New(r.Values...)
				if termNodeNames == nil {
					termNodeNames = s
				} else {
					termNodeNames = termNodeNames.Intersection(s)
				}
			}
		}
		if termNodeNames == nil {
			return nil, nil
		}
		nodeNames = nodeNames.Union(termNodeNames)
	}
	if nodeNames != nil && len(nodeNames) == 0 {
		return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonConflict)
	}
	if len(nodeNames) > 0 {
		return &schedcore.PreFilterResult{NodeNames: nodeNames}, nil
	}
	return nil, nil
}

// Filter checks the added affinity first, then the pod's own constraints.
func (pl *NodeAffinity) Filter(_ context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		// PreFilter is disabled: parse here, as kube falls back to.
		s = &preFilterState{requiredNodeSelectorAndAffinity: helper.GetRequiredNodeAffinity(pod)}
	}
	node := nodeInfo.Node()
	if pl.addedNodeSelector != nil && !pl.addedNodeSelector.Match(node) {
		return statusEnforced
	}
	// Parse errors are ignored for backwards compatibility.
	if match, _ := s.requiredNodeSelectorAndAffinity.MatchNodeInfo(nodeInfo); !match {
		return statusPod
	}
	return nil
}

// FilterKey is the pod's node selector and required node affinity (what
// PreFilter parsed): with the node's labels and name, and the plugin's
// added affinity, all Filter reads.
func (pl *NodeAffinity) FilterKey(cycleState *schedcore.CycleState, pod *v1.Pod, k *schedcore.MemoKey) bool {
	if _, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey); err != nil {
		return false
	}
	helper.RequiredAffinityKey(k, pod)
	return true
}

// ExplainFilter names what the node lacks, in Filter's order: the
// scheduler-enforced affinity, else each nodeSelector label it does not
// have as wanted and, when no required term matches, each term's first
// failing requirement (the terms are ORed). Labels cannot be changed by
// preemption, so the shortfall is 1. It also explains a node the
// PreFilterResult (the terms' metadata.name) left out.
func (pl *NodeAffinity) ExplainFilter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	node := nodeInfo.Node()
	if pl.addedNodeSelector != nil && !pl.addedNodeSelector.Match(node) {
		return schedcore.NewFilterExplanation(1, "node does not match the scheduler-enforced node affinity (NodeAffinity args.addedAffinity)")
	}
	out := helper.NodeSelectorGaps(pod.Spec.NodeSelector, node)
	a := pod.Spec.Affinity
	if a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		var termGaps []string
		for i := range terms {
			gap := helper.NodeSelectorTermGap(&terms[i], node)
			if gap == "" {
				termGaps = nil // a term matches: the selector is what fails
				break
			}
			termGaps = append(termGaps, fmt.Sprintf("node affinity term %d: %s", i+1, gap))
		}
		if len(terms) == 0 {
			termGaps = []string{"node affinity: required terms are empty and match no node"}
		}
		out = append(out, termGaps...)
	}
	if len(out) == 0 {
		return nil
	}
	return schedcore.NewFilterExplanation(1, out...)
}

// FilterShortfall is ExplainFilter's shortfall, always 1: nothing on the node but its labels can make it match.
func (pl *NodeAffinity) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}

// preScoreState is the pod's parsed preferred terms (nil if none).
type preScoreState struct {
	preferredNodeAffinity *helper.PreferredSchedulingTerms
	// termViews are the remembered matches of its terms (termViews), nil
	// when they are not remembered.
	termViews []schedcore.VerdictView
	// bound are the terms bound to the label columns, for the nodes the
	// views do not know (nil: their labels are read).
	bound []helper.BoundSelector
}

// Clone returns the state itself: nothing changes it after PreScore.
func (s *preScoreState) Clone() schedcore.StateData { return s }

// PreScore parses the pod's preferred terms; Skip when there is nothing to score.
func (pl *NodeAffinity) PreScore(_ context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) *schedcore.Status {
	pref, err := getPodPreferredNodeAffinity(pod)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if pref == nil && pl.addedPrefSchedTerms == nil {
		return schedcore.Skipped()
	}
	st := &preScoreState{preferredNodeAffinity: pref}
	st.termViews, st.bound = pl.termViews(pref)
	cycleState.Write(preScoreStateKey, st)
	return nil
}

// Score sums the weights of the matching preferred terms.
func (pl *NodeAffinity) Score(_ context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	s, err := schedcore.ReadAs[*preScoreState](cycleState, preScoreStateKey)
	node := nodeInfo.Node()
	var count int64
	if pl.addedPrefSchedTerms != nil {
		count += pl.addedPrefSchedTerms.Score(node)
	}
	if err != nil {
		// PreScore is disabled: parse here, as kube falls back to.
		pref, err := getPodPreferredNodeAffinity(pod)
		if err != nil {
			return 0, schedcore.AsStatus(err)
		}
		s = &preScoreState{preferredNodeAffinity: pref}
	}
	if s.termViews != nil {
		count += scoreTerms(s.preferredNodeAffinity, s.termViews, s.bound, nodeInfo)
	} else if s.preferredNodeAffinity != nil {
		count += s.preferredNodeAffinity.Score(node)
	}
	return count, nil
}

// ScoreKey is the pod's preferred node affinity terms (what PreScore
// parsed): with the node's labels and the plugin's added preferred terms,
// all Score reads.
func (pl *NodeAffinity) ScoreKey(cycleState *schedcore.CycleState, pod *v1.Pod, k *schedcore.MemoKey) bool {
	if _, err := schedcore.ReadAs[*preScoreState](cycleState, preScoreStateKey); err != nil {
		return false
	}
	helper.PreferredAffinityKey(k, pod)
	return true
}

// NormalizeColumn scales the sums onto [0, 100] by the highest.
func (pl *NodeAffinity) NormalizeColumn(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, scores []int64) *schedcore.Status {
	return helper.DefaultNormalizeColumn(schedcore.MaxNodeScore, false, scores)
}

func getPodPreferredNodeAffinity(pod *v1.Pod) (*helper.PreferredSchedulingTerms, error) {
	a := pod.Spec.Affinity
	if a != nil && a.NodeAffinity != nil && a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution != nil {
		return helper.NewPreferredSchedulingTerms(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return nil, nil
}

// PodBlind: PreFilter reads the pod's affinity, Filter the node's labels
// and name; both reject UnschedulableAndUnresolvable.
func (pl *NodeAffinity) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter | schedcore.BlindFilter
}

var _ schedcore.PodBlindPlugin = (*NodeAffinity)(nil)
