package podtopologyspread

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.PodTopologySpread

// Filter reasons, word for word kube-scheduler v1.37's.
const (
	// ErrReasonConstraintsNotMatch is returned (Unschedulable) when placing
	// the pod on the node would exceed a constraint's maxSkew.
	ErrReasonConstraintsNotMatch = "node(s) didn't match pod topology spread constraints"
	// ErrReasonNodeLabelNotMatch is returned (UnschedulableAndUnresolvable)
	// when the node lacks a constraint's topology key.
	ErrReasonNodeLabelNotMatch = ErrReasonConstraintsNotMatch + " (missing required label)"
)

var (
	_ schedcore.PreFilterPlugin      = (*PodTopologySpread)(nil)
	_ schedcore.PreFilterExtensions  = (*PodTopologySpread)(nil)
	_ schedcore.FilterPlugin         = (*PodTopologySpread)(nil)
	_ schedcore.PreScorePlugin       = (*PodTopologySpread)(nil)
	_ schedcore.ScorePlugin          = (*PodTopologySpread)(nil)
	_ schedcore.NormalizeScorePlugin = (*PodTopologySpread)(nil)
	_ schedcore.EnqueueExtensions    = (*PodTopologySpread)(nil)
	_ schedcore.NodeLocalPlugin      = (*PodTopologySpread)(nil)
)

// NodeLocal is true for pods with no hard (DoNotSchedule) constraint, of
// their own or by default: the soft ones only score. A hard constraint
// compares the counts of matching pods across domains, which every copy
// placed changes.
func (pl *PodTopologySpread) NodeLocal(pod *v1.Pod) bool {
	c, err := pl.getConstraints(pod, v1.DoNotSchedule)
	return err == nil && len(c) == 0
}

// PodTopologySpread enforces the pod's hard topology spread constraints and
// scores nodes by its soft ones (or by the default constraints).
type PodTopologySpread struct {
	handle             *schedcore.Handle
	defaultConstraints []v1.TopologySpreadConstraint
	systemDefaulted    bool

	// Feature gates: MatchLabelKeysInPodTopologySpread (beta, on) and
	// TaintTolerationComparisonOperators (schedcore.Features);
	// NodeInclusionPolicyInPodTopologySpread is GA, locked on.
	enableMatchLabelKeys                     bool
	enableTaintTolerationComparisonOperators bool

	// counts counts selectors' matching pods per node, remembered across
	// cycles.
	counts *schedcore.MatchCounter
	// inclusionMemo remembers per node the node inclusion verdicts of
	// pods' node affinity and tolerations (see inclusion).
	inclusionMemo *schedcore.VerdictMemo
	// totals keeps constraints' counts per domain across cycles (see
	// countsKey), members the nodes that count per domain (membersKey):
	// apart, so that the many workloads' counts, used in turn, do not
	// evict the members the workloads share.
	totals, members *schedcore.TotalsCache
	// noSoftTotals makes PreScore count node by node (tests compare).
	noSoftTotals bool
	// selectors are pods' default spreading selectors, kept across cycles.
	selectors helper.DefaultSelectors
}

// memoKeys bounds the selectors whose per-node counts are remembered.
const memoKeys = 64

// New builds the plugin. args is nil (defaults: defaultingType System) or a
// *configv1.PodTopologySpreadArgs.
func New(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	if h == nil {
		return nil, errors.New("handle is nil")
	}
	a, err := parseArgs(obj)
	if err != nil {
		return nil, err
	}
	return &PodTopologySpread{
		handle:               h,
		defaultConstraints:   a.defaultConstraints,
		systemDefaulted:      a.systemDefaulted,
		enableMatchLabelKeys: true,
		counts:               schedcore.NewMatchCounter(memoKeys),
		inclusionMemo:        schedcore.NewVerdictMemo(memoKeys),
		totals:               schedcore.NewTotalsCache(maxTotals),
		members:              schedcore.NewNodeTotalsCache(maxMembers),

		enableTaintTolerationComparisonOperators: h.Features().TaintTolerationComparisonOperators,
	}, nil
}

// Name returns the plugin's name.
func (pl *PodTopologySpread) Name() string { return Name }

func wrapf(msg string, err error) error { return fmt.Errorf("%s: %w", msg, err) }

// EventsToRegister returns the events that may make a pod rejected by this
// plugin schedulable, with kube's hints: an assigned pod added, relabelled
// or deleted; the pod's own labels or tolerations changed; a node added,
// deleted, relabelled or retainted.
func (pl *PodTopologySpread) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Add | schedcore.UpdatePodLabel | schedcore.Delete}, QueueingHintFn: pl.isSchedulableAfterAssignedPodChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodToleration | schedcore.UpdatePodLabel}, QueueingHintFn: pl.isSchedulableAfterTargetPodChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.Delete | schedcore.UpdateNodeLabel | schedcore.UpdateNodeTaint}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

// involvedInTopologySpreading reports whether incoming (a changed pod) can
// count for podWithSpreading: it is bound or nominated, in the same namespace.
func involvedInTopologySpreading(incoming, podWithSpreading *v1.Pod) bool {
	if incoming.Spec.NodeName == "" && incoming.Status.NominatedNodeName == "" {
		return false
	}
	return incoming.Namespace == podWithSpreading.Namespace
}

// isSchedulableAfterTargetPodChange queues the pod when it got new
// tolerations and a constraint honours taints, or when its labels changed
// whether a constraint selects it.
func (pl *PodTopologySpread) isSchedulableAfterTargetPodChange(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	originalPod, modifiedPod, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if originalPod == nil || modifiedPod == nil {
		return schedcore.Queue, fmt.Errorf("target pod update without old or new pod")
	}
	constraints, err := pl.getConstraints(pod, v1.DoNotSchedule)
	if err != nil {
		return schedcore.Queue, err
	}
	if !equality.Semantic.DeepEqual(modifiedPod.Spec.Tolerations, originalPod.Spec.Tolerations) && slices.ContainsFunc(constraints, func(c topologySpreadConstraint) bool { return c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor }) {
		logger.V(5).Info("the unschedulable pod has got a new toleration, which could make it schedulable",
			"pod", klog.KObj(pod), "modifiedPod", klog.KObj(modifiedPod))
		return schedcore.Queue, nil
	}
	return pl.isSchedulableAfterPodLabelChange(logger, originalPod, modifiedPod, constraints)
}

// isSchedulableAfterAssignedPodChange queues the pod when a bound or
// nominated pod of its namespace is added or deleted matching a constraint's
// selector, or relabelled into or out of one.
func (pl *PodTopologySpread) isSchedulableAfterAssignedPodChange(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	originalPod, modifiedPod, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if (modifiedPod != nil && !involvedInTopologySpreading(modifiedPod, pod)) || (originalPod != nil && !involvedInTopologySpreading(originalPod, pod)) {
		logger.V(5).Info("the added/updated/deleted pod is unscheduled or has different namespace with target pod, so it doesn't make the target pod schedulable",
			"pod", klog.KObj(pod), "originalPod", klog.KObj(originalPod))
		return schedcore.QueueSkip, nil
	}
	constraints, err := pl.getConstraints(pod, v1.DoNotSchedule)
	if err != nil {
		return schedcore.Queue, err
	}
	switch {
	case modifiedPod != nil && originalPod != nil:
		return pl.isSchedulableAfterPodLabelChange(logger, originalPod, modifiedPod, constraints)
	case modifiedPod != nil:
		if podLabelsMatchSpreadConstraints(constraints, modifiedPod.Labels) {
			logger.V(5).Info("a scheduled pod was created and it matches with the pod's topology spread constraints",
				"pod", klog.KObj(pod), "createdPod", klog.KObj(modifiedPod))
			return schedcore.Queue, nil
		}
		logger.V(5).Info("a scheduled pod was created, but it doesn't matches with the pod's topology spread constraints",
			"pod", klog.KObj(pod), "createdPod", klog.KObj(modifiedPod))
		return schedcore.QueueSkip, nil
	case originalPod != nil:
		if podLabelsMatchSpreadConstraints(constraints, originalPod.Labels) {
			logger.V(5).Info("a scheduled pod which matches with the pod's topology spread constraints was deleted, and the pod may be schedulable now",
				"pod", klog.KObj(pod), "deletedPod", klog.KObj(originalPod))
			return schedcore.Queue, nil
		}
		logger.V(5).Info("a scheduled pod was deleted, but it's unrelated to the pod's topology spread constraints",
			"pod", klog.KObj(pod), "deletedPod", klog.KObj(originalPod))
		return schedcore.QueueSkip, nil
	}
	return schedcore.Queue, fmt.Errorf("assigned pod event without old or new pod")
}

// isSchedulableAfterPodLabelChange queues when the label change flips
// whether some constraint selects the pod.
func (pl *PodTopologySpread) isSchedulableAfterPodLabelChange(logger logr.Logger, originalPod, modifiedPod *v1.Pod, constraints []topologySpreadConstraint) (schedcore.QueueingHint, error) {
	if equality.Semantic.DeepEqual(modifiedPod.Labels, originalPod.Labels) {
		logger.V(5).Info("the pod's update doesn't include the label update, which doesn't make the target pod schedulable",
			"pod", klog.KObj(originalPod), "modifiedPod", klog.KObj(modifiedPod))
		return schedcore.QueueSkip, nil
	}
	for i := range constraints {
		sel := constraints[i].Selector
		if sel.Matches(labels.Set(originalPod.Labels)) != sel.Matches(labels.Set(modifiedPod.Labels)) {
			logger.V(5).Info("a scheduled or target pod's label was updated and it makes the updated pod match or unmatch the pod's topology spread constraints",
				"pod", klog.KObj(originalPod), "modifiedPod", klog.KObj(modifiedPod))
			return schedcore.Queue, nil
		}
	}
	logger.V(5).Info("a scheduled or target pod's label was updated, but it's a change unrelated to the pod's topology spread constraints",
		"pod", klog.KObj(originalPod), "modifiedPod", klog.KObj(modifiedPod))
	return schedcore.QueueSkip, nil
}

// isSchedulableAfterNodeChange queues the pod when a node with every
// topology key is added or deleted, when an update makes a node gain or
// lose one of the keys, or when a node with all keys changes a key's value
// or its taints.
func (pl *PodTopologySpread) isSchedulableAfterNodeChange(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	originalNode, modifiedNode, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	constraints, err := pl.getConstraints(pod, v1.DoNotSchedule)
	if err != nil {
		return schedcore.Queue, err
	}
	var originalMatching, modifiedMatching bool
	if originalNode != nil {
		originalMatching = nodeLabelsMatchSpreadConstraints(originalNode.Labels, constraints)
	}
	if modifiedNode != nil {
		modifiedMatching = nodeLabelsMatchSpreadConstraints(modifiedNode.Labels, constraints)
	}
	switch {
	case originalNode != nil && modifiedNode != nil:
		if originalMatching != modifiedMatching {
			logger.V(5).Info("the node is updated and now pod topology spread constraints has changed, and the pod may be schedulable now",
				"pod", klog.KObj(pod), "node", modifiedNode.Name, "originalMatching", originalMatching, "newMatching", modifiedMatching)
			return schedcore.Queue, nil
		}
		if modifiedMatching && (checkTopologyKeyLabelsChanged(originalNode.Labels, modifiedNode.Labels, constraints) || !equality.Semantic.DeepEqual(originalNode.Spec.Taints, modifiedNode.Spec.Taints)) {
			logger.V(5).Info("the node is updated and now has different taints or labels, and the pod may be schedulable now",
				"pod", klog.KObj(pod), "node", modifiedNode.Name)
			return schedcore.Queue, nil
		}
		return schedcore.QueueSkip, nil
	case modifiedNode != nil:
		if !modifiedMatching {
			logger.V(5).Info("the created node doesn't match pod topology spread constraints", "pod", klog.KObj(pod), "node", modifiedNode.Name)
			return schedcore.QueueSkip, nil
		}
		logger.V(5).Info("the created node matches topology spread constraints, and the pod may be schedulable now", "pod", klog.KObj(pod), "node", modifiedNode.Name)
		return schedcore.Queue, nil
	default:
		if !originalMatching {
			logger.V(5).Info("the deleted node doesn't match pod topology spread constraints", "pod", klog.KObj(pod))
			return schedcore.QueueSkip, nil
		}
		logger.V(5).Info("the deleted node matches topology spread constraints, and the pod may be schedulable now", "pod", klog.KObj(pod), "node", originalNode.Name)
		return schedcore.Queue, nil
	}
}

// checkTopologyKeyLabelsChanged reports whether any topology key's value differs.
func checkTopologyKeyLabelsChanged(originalLabels, modifiedLabels map[string]string, constraints []topologySpreadConstraint) bool {
	for i := range constraints {
		key := constraints[i].TopologyKey
		if originalLabels[key] != modifiedLabels[key] {
			return true
		}
	}
	return false
}
