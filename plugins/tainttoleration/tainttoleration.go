package tainttoleration

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	v1helper "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// statusUntolerated is Filter's rejection, shared by every call.
var statusUntolerated = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonUntoleratedTaint)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.TaintToleration
	// preScoreStateKey keys the PreScore data in the CycleState.
	preScoreStateKey schedcore.StateKey = "PreScore" + Name

	// ErrReasonUntoleratedTaint is the Filter reason when the pod does not
	// tolerate a NoSchedule or NoExecute taint of the node.
	ErrReasonUntoleratedTaint = "node(s) had untolerated taint(s)"
	// ErrReasonNotMatch is kept by kube-scheduler as an exported constant but
	// not returned by any extension point in v1.37.
	ErrReasonNotMatch = "node(s) had taints that the pod didn't tolerate"
)

// TaintToleration checks that a pod tolerates a node's taints.
type TaintToleration struct {
	logger logr.Logger
	// comparisonOps is Features.TaintTolerationComparisonOperators.
	comparisonOps bool
}

var (
	_ schedcore.PreFilterPlugin      = (*TaintToleration)(nil)
	_ schedcore.FilterPlugin         = (*TaintToleration)(nil)
	_ schedcore.PreScorePlugin       = (*TaintToleration)(nil)
	_ schedcore.ScorePlugin          = (*TaintToleration)(nil)
	_ schedcore.NormalizeScorePlugin = (*TaintToleration)(nil)
	_ schedcore.EnqueueExtensions    = (*TaintToleration)(nil)
	_ schedcore.NodeLocalPlugin      = (*TaintToleration)(nil)
	_ schedcore.FilterExplainer      = (*TaintToleration)(nil)
	_ schedcore.NodeLocalScorer      = (*TaintToleration)(nil)
	_ schedcore.NodeLocalFilter      = (*TaintToleration)(nil)
)

// NodeLocal is true: the verdict reads the node's own taints.
func (pl *TaintToleration) NodeLocal(*v1.Pod) bool { return true }

// New returns the plugin; it takes no args.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	pl := &TaintToleration{logger: logr.Discard()}
	if h != nil {
		pl.comparisonOps = h.Features().TaintTolerationComparisonOperators
		if h.Logger().GetSink() != nil {
			pl.logger = h.Logger()
		}
	}
	return pl, nil
}

// Name returns the plugin's name.
func (pl *TaintToleration) Name() string { return Name }

// EventsToRegister lists the events that may make a pod this plugin rejected
// schedulable: a node added or re-tainted, or the pod gaining tolerations.
func (pl *TaintToleration) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeTaint}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodToleration}, QueueingHintFn: pl.isSchedulableAfterTargetPodTolerationChange},
	}, nil
}

// isSchedulableAfterNodeChange queues the pod only when the node went from
// having an untolerated NoSchedule/NoExecute taint (or not existing) to
// having none.
func (pl *TaintToleration) isSchedulableAfterNodeChange(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	originalNode, modifiedNode, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	wasUntolerated := true
	if originalNode != nil {
		_, wasUntolerated = pl.untoleratedTaint(logger, originalNode.Spec.Taints, pod.Spec.Tolerations)
	}
	_, isUntolerated := pl.untoleratedTaint(logger, modifiedNode.Spec.Taints, pod.Spec.Tolerations)
	if wasUntolerated && !isUntolerated {
		logger.V(5).Info("node was created or updated, and this may make the Pod rejected by TaintToleration plugin in the previous scheduling cycle schedulable", "pod", schedcore.PodName(pod), "node", modifiedNode.Name)
		return schedcore.Queue, nil
	}
	logger.V(5).Info("node was created or updated, but it doesn't change the TaintToleration plugin's decision", "pod", schedcore.PodName(pod), "node", modifiedNode.Name)
	return schedcore.QueueSkip, nil
}

// isSchedulableAfterTargetPodTolerationChange always queues: tolerations can
// only be added, and a new one may tolerate the taint that rejected the pod.
func (pl *TaintToleration) isSchedulableAfterTargetPodTolerationChange(logger logr.Logger, pod *v1.Pod, _, _ any) (schedcore.QueueingHint, error) {
	logger.V(5).Info("a new toleration is added for the unschedulable Pod, and it may make it schedulable", "pod", schedcore.PodName(pod))
	return schedcore.Queue, nil
}

// PreFilter has nothing to precompute.
func (pl *TaintToleration) PreFilter(context.Context, *schedcore.CycleState, *v1.Pod, []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	return nil, nil
}

// Filter rejects the node if the pod does not tolerate one of its NoSchedule
// or NoExecute taints.
func (pl *TaintToleration) Filter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	taint, ok := pl.untoleratedTaint(pl.logger, nodeInfo.Taints(), pod.Spec.Tolerations)
	if !ok {
		return nil
	}
	if l := pl.logger.V(4); l.Enabled() {
		l.Info("node had untolerated taints", "node", nodeInfo.Name(), "pod", schedcore.PodName(pod), "untoleratedTaint", taint)
	}
	return statusUntolerated
}

// FilterKey is the pod's tolerations: with the node's taints, all Filter
// reads. The framework remembers passes and rejections (a shared status),
// unless Filter logs each rejection (V(4)): then it remembers nothing.
func (pl *TaintToleration) FilterKey(_ *schedcore.CycleState, pod *v1.Pod, k *schedcore.MemoKey) bool {
	if pl.logger.V(4).Enabled() {
		return false
	}
	helper.TolerationsKey(k, pod)
	return true
}

// ExplainFilter names every NoSchedule or NoExecute taint of the node that
// no toleration of the pod tolerates, with the comparison operators as the
// Filter reads them: each one must be tolerated (or removed) for the pod
// to fit. Preemption cannot help, so the shortfall is 1.
func (pl *TaintToleration) ExplainFilter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	taints := nodeInfo.Taints()
	var texts []string
	for i := range taints {
		t := &taints[i]
		if !helper.DoNotScheduleTaints(t) {
			continue
		}
		if !v1helper.TolerationsTolerateTaint(logr.Discard(), pod.Spec.Tolerations, t, pl.comparisonOps) {
			texts = append(texts, fmt.Sprintf("taint %s not tolerated", t.ToString()))
		}
	}
	if len(texts) == 0 {
		return nil
	}
	return schedcore.NewFilterExplanation(1, texts...)
}

// FilterShortfall is ExplainFilter's shortfall, always 1: preemption cannot remove a taint.
func (pl *TaintToleration) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}

// untoleratedTaint returns the first NoSchedule or NoExecute taint that no
// toleration tolerates, as component-helpers' FindMatchingUntoleratedTaint
// with kube's DoNotScheduleTaintsFilterFunc, without allocating.
func (pl *TaintToleration) untoleratedTaint(logger logr.Logger, taints []v1.Taint, tolerations []v1.Toleration) (*v1.Taint, bool) {
	for i := range taints {
		t := &taints[i]
		if !helper.DoNotScheduleTaints(t) {
			continue
		}
		if !v1helper.TolerationsTolerateTaint(logger, tolerations, t, pl.comparisonOps) {
			return t, true
		}
	}
	return nil, false
}

// preScoreState holds the pod's tolerations that can tolerate a
// PreferNoSchedule taint.
type preScoreState struct {
	tolerationsPreferNoSchedule []v1.Toleration
}

// Clone returns the state itself: nothing changes it after PreScore.
func (s *preScoreState) Clone() schedcore.StateData { return s }

// PreScore keeps the tolerations with effect PreferNoSchedule or empty.
func (pl *TaintToleration) PreScore(_ context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) *schedcore.Status {
	var tols []v1.Toleration
	for _, t := range pod.Spec.Tolerations {
		if len(t.Effect) == 0 || t.Effect == v1.TaintEffectPreferNoSchedule {
			tols = append(tols, t)
		}
	}
	cycleState.Write(preScoreStateKey, &preScoreState{tolerationsPreferNoSchedule: tols})
	return nil
}

// Score counts the node's PreferNoSchedule taints the pod does not tolerate.
func (pl *TaintToleration) Score(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	s, err := schedcore.ReadAs[*preScoreState](cycleState, preScoreStateKey)
	if err != nil {
		return 0, schedcore.AsStatus(err)
	}
	taints := nodeInfo.Taints()
	var n int64
	for i := range taints {
		if taints[i].Effect != v1.TaintEffectPreferNoSchedule {
			continue
		}
		if !v1helper.TolerationsTolerateTaint(pl.logger, s.tolerationsPreferNoSchedule, &taints[i], pl.comparisonOps) {
			n++
		}
	}
	return n, nil
}

// ScoreKey is the tolerations PreScore kept: with the node's taints, they
// are all Score reads.
func (pl *TaintToleration) ScoreKey(cycleState *schedcore.CycleState, _ *v1.Pod, k *schedcore.MemoKey) bool {
	s, err := schedcore.ReadAs[*preScoreState](cycleState, preScoreStateKey)
	if err != nil {
		return false
	}
	for _, t := range s.tolerationsPreferNoSchedule {
		k.String(t.Key).String(string(t.Operator)).String(t.Value).String(string(t.Effect))
	}
	return true
}

// NormalizeColumn reverses the counts onto [0, 100]: fewer intolerable
// taints, higher score.
func (pl *TaintToleration) NormalizeColumn(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, scores []int64) *schedcore.Status {
	return helper.DefaultNormalizeColumn(schedcore.MaxNodeScore, true, scores)
}

// PodBlind: Filter reads the node's taints and the pod's tolerations,
// and rejects UnschedulableAndUnresolvable.
func (pl *TaintToleration) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter | schedcore.BlindFilter
}

var _ schedcore.PodBlindPlugin = (*TaintToleration)(nil)
