package nodeunschedulable

import (
	"context"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	v1helper "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// statusUnschedulable is Filter's rejection, shared by every call.
var statusUnschedulable = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonUnschedulable)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.NodeUnschedulable

	// ErrReasonUnknownCondition is kept by kube-scheduler as an exported
	// constant but not returned by any extension point in v1.37.
	ErrReasonUnknownCondition = "node(s) had unknown conditions"
	// ErrReasonUnschedulable is the Filter reason for a cordoned node.
	ErrReasonUnschedulable = "node(s) were unschedulable"
)

// unschedulableTaint is the taint a pod must tolerate to go to a cordoned node.
var unschedulableTaint = v1.Taint{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}

// NodeUnschedulable filters out nodes with spec.unschedulable unless the pod
// tolerates the unschedulable taint.
type NodeUnschedulable struct {
	logger logr.Logger
	// comparisonOps is Features.TaintTolerationComparisonOperators.
	comparisonOps bool
}

var (
	_ schedcore.PreFilterPlugin   = (*NodeUnschedulable)(nil)
	_ schedcore.FilterPlugin      = (*NodeUnschedulable)(nil)
	_ schedcore.FilterExplainer   = (*NodeUnschedulable)(nil)
	_ schedcore.EnqueueExtensions = (*NodeUnschedulable)(nil)
	_ schedcore.NodeLocalPlugin   = (*NodeUnschedulable)(nil)
	_ schedcore.NodeLocalFilter   = (*NodeUnschedulable)(nil)
)

// NodeLocal is true: the verdict reads the node's own unschedulable flag
// and taints only.
func (pl *NodeUnschedulable) NodeLocal(*v1.Pod) bool { return true }

// New returns the plugin; it takes no args.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	pl := &NodeUnschedulable{logger: logr.Discard()}
	if h != nil {
		pl.comparisonOps = h.Features().TaintTolerationComparisonOperators
		if h.Logger().GetSink() != nil {
			pl.logger = h.Logger()
		}
	}
	return pl, nil
}

// Name returns the plugin's name.
func (pl *NodeUnschedulable) Name() string { return Name }

// EventsToRegister lists node additions and taint updates (spec.unschedulable
// changes arrive as UpdateNodeTaint) and the pod gaining tolerations.
func (pl *NodeUnschedulable) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeTaint}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodToleration}, QueueingHintFn: pl.isSchedulableAfterTargetPodTolerationChange},
	}, nil
}

// isSchedulableAfterTargetPodTolerationChange queues the pod when it now
// tolerates the unschedulable taint. The old pod need not be checked: it was
// rejected by this plugin, so it did not tolerate the taint.
func (pl *NodeUnschedulable) isSchedulableAfterTargetPodTolerationChange(logger logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	_, modifiedPod, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if v1helper.TolerationsTolerateTaint(logger, modifiedPod.Spec.Tolerations, &unschedulableTaint, pl.comparisonOps) {
		logger.V(5).Info("a new toleration is added for the unschedulable Pod, and it may make it schedulable", "pod", schedcore.PodName(modifiedPod))
		return schedcore.Queue, nil
	}
	logger.V(5).Info("a new toleration is added for the unschedulable Pod, but it's an unrelated toleration", "pod", schedcore.PodName(modifiedPod))
	return schedcore.QueueSkip, nil
}

// isSchedulableAfterNodeChange queues the pod when a schedulable node is
// added or a node turns from unschedulable to schedulable.
func (pl *NodeUnschedulable) isSchedulableAfterNodeChange(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	originalNode, modifiedNode, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if (originalNode != nil && originalNode.Spec.Unschedulable && !modifiedNode.Spec.Unschedulable) ||
		(originalNode == nil && !modifiedNode.Spec.Unschedulable) {
		logger.V(5).Info("node was created or updated, pod may be schedulable now", "pod", schedcore.PodName(pod), "node", modifiedNode.Name)
		return schedcore.Queue, nil
	}
	logger.V(5).Info("node was created or updated, but it doesn't make this pod schedulable", "pod", schedcore.PodName(pod), "node", modifiedNode.Name)
	return schedcore.QueueSkip, nil
}

// PreFilter has nothing to precompute.
func (pl *NodeUnschedulable) PreFilter(context.Context, *schedcore.CycleState, *v1.Pod, []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	return nil, nil
}

// Filter rejects a cordoned node unless the pod tolerates the unschedulable taint.
func (pl *NodeUnschedulable) Filter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	if !nodeInfo.Unschedulable() {
		return nil
	}
	if !v1helper.TolerationsTolerateTaint(pl.logger, pod.Spec.Tolerations, &unschedulableTaint, pl.comparisonOps) {
		return statusUnschedulable
	}
	return nil
}

// FilterKey is whether the pod tolerates the unschedulable taint: with
// the node's spec.unschedulable, all Filter reads. The framework then
// remembers the verdicts (the rejection is a shared status), and the
// filter loop need not reach a node to know it is not cordoned.
func (pl *NodeUnschedulable) FilterKey(_ *schedcore.CycleState, pod *v1.Pod, k *schedcore.MemoKey) bool {
	if v1helper.TolerationsTolerateTaint(logr.Discard(), pod.Spec.Tolerations, &unschedulableTaint, pl.comparisonOps) {
		k.Int(1)
	} else {
		k.Int(0)
	}
	return true
}

// ExplainFilter says what would let the pod on the cordoned node.
func (pl *NodeUnschedulable) ExplainFilter(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) *schedcore.FilterExplanation {
	return schedcore.NewFilterExplanation(1, "node is cordoned (spec.unschedulable); uncordon it or tolerate "+unschedulableTaint.ToString())
}

// FilterShortfall is ExplainFilter's shortfall, always 1: only uncordoning the node can help.
func (pl *NodeUnschedulable) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}

// PodBlind: Filter reads the node's spec.unschedulable and the pod's
// tolerations, and rejects UnschedulableAndUnresolvable.
func (pl *NodeUnschedulable) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter | schedcore.BlindFilter
}

var _ schedcore.PodBlindPlugin = (*NodeUnschedulable)(nil)
