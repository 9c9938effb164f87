package interpodaffinity

import (
	"context"
	"errors"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.InterPodAffinity

var (
	_ schedcore.PreFilterPlugin      = (*InterPodAffinity)(nil)
	_ schedcore.PreFilterExtensions  = (*InterPodAffinity)(nil)
	_ schedcore.FilterPlugin         = (*InterPodAffinity)(nil)
	_ schedcore.PreScorePlugin       = (*InterPodAffinity)(nil)
	_ schedcore.ScorePlugin          = (*InterPodAffinity)(nil)
	_ schedcore.NormalizeScorePlugin = (*InterPodAffinity)(nil)
	_ schedcore.EnqueueExtensions    = (*InterPodAffinity)(nil)
	_ schedcore.NodeLocalPlugin      = (*InterPodAffinity)(nil)
)

// NodeLocal is true for pods without required pod affinity or
// anti-affinity terms. The existing pods' anti-affinity against such a pod
// stays what it is as copies of it are placed: copies bring no terms.
func (pl *InterPodAffinity) NodeLocal(pod *v1.Pod) bool {
	return len(podAffinityTerms(pod.Spec.Affinity)) == 0 && len(podAntiAffinityTerms(pod.Spec.Affinity)) == 0
}

// InterPodAffinity checks and scores inter-pod affinity and anti-affinity.
type InterPodAffinity struct {
	handle   *schedcore.Handle
	args     args
	fastPath bool
	// terms groups the existing pods' scoring terms across cycles.
	terms *termIndex
	// incoming counts the matches of incoming pods' preferred terms per
	// node.
	incoming *schedcore.TermCounter
	// requiredTotals keeps the required terms' counts per domain across
	// cycles (incomingCounts).
	requiredTotals *schedcore.TotalsCache
	// anti groups the existing pods' required anti-affinity terms across
	// cycles.
	anti *termIndex
}

// memoTerms bounds the incoming terms whose per-node counts are remembered.
const memoTerms = 64

// New builds the plugin. args is nil (defaults) or a
// *configv1.InterPodAffinityArgs.
func New(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	if h == nil {
		return nil, errors.New("handle is nil")
	}
	a, err := parseArgs(obj)
	if err != nil {
		return nil, err
	}
	return &InterPodAffinity{handle: h, args: a, fastPath: h.Features().InterPodAffinityHostnameFastPath, terms: newTermIndex(a.hardPodAffinityWeight), incoming: schedcore.NewTermCounter(memoTerms), requiredTotals: schedcore.NewTotalsCache(memoTerms), anti: newAntiIndex()}, nil
}

// Name returns the plugin's name.
func (pl *InterPodAffinity) Name() string { return Name }

// EventsToRegister returns the events that may make a pod rejected by this
// plugin schedulable: an assigned pod added (affinity), relabelled or deleted
// (anti-affinity), the pod's own labels changed, and a node added or
// relabelled (topology keys).
func (pl *InterPodAffinity) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Add | schedcore.UpdatePodLabel | schedcore.Delete}, QueueingHintFn: pl.isSchedulableAfterAssignedPodChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodLabel}, QueueingHintFn: pl.isSchedulableAfterTargetPodUpdateLabel},
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

// mergeNamespaces resolves a term's namespace selector (of the incoming pod)
// into its Namespaces set, as kube's mergeAffinityTermNamespacesIfNotEmpty
// does: an empty selector (all namespaces) stays as it is, any other is
// unrolled over the snapshot's namespaces and replaced by Nothing, so that
// matching never needs the other pod's namespace labels.
func mergeNamespaces(at *schedcore.AffinityTerm, snap *schedcore.Snapshot) {
	if at.NamespaceSelector.Empty() {
		return
	}
	if _, selectable := at.NamespaceSelector.Requirements(); selectable {
		for _, ns := range snap.Namespaces() {
			if at.NamespaceSelector.Matches(labels.Set(ns.Labels)) {
				at.Namespaces.Insert(ns.Name)
			}
		}
	}
	at.NamespaceSelector = labels.Nothing()
}

// podAffinityTerms is kube's GetPodAffinityTerms.
func podAffinityTerms(a *v1.Affinity) []v1.PodAffinityTerm {
	if a != nil && a.PodAffinity != nil && len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 {
		return a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// podAntiAffinityTerms is kube's GetPodAntiAffinityTerms.
func podAntiAffinityTerms(a *v1.Affinity) []v1.PodAffinityTerm {
	if a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 0 {
		return a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return nil
}

// isSchedulableAfterAssignedPodChange queues the pod when an assigned (or
// nominated) pod is added matching all of its affinity terms, relabelled to
// start matching them or to stop matching its anti-affinity, or deleted while
// matching its anti-affinity or having anti-affinity the pod matches.
func (pl *InterPodAffinity) isSchedulableAfterAssignedPodChange(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	originalPod, modifiedPod, err := helper.As[*v1.Pod](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	// NodeName or NominatedNodeName changes come as Add/Delete events.
	if (modifiedPod != nil && modifiedPod.Spec.NodeName == "" && modifiedPod.Status.NominatedNodeName == "") ||
		(originalPod != nil && originalPod.Spec.NodeName == "" && originalPod.Status.NominatedNodeName == "") {
		logger.V(5).Info("the added/updated/deleted pod is unscheduled, so it doesn't make the target pod schedulable",
			"pod", klog.KObj(pod), "originalPod", klog.KObj(originalPod), "modifiedPod", klog.KObj(modifiedPod))
		return schedcore.QueueSkip, nil
	}

	terms, err := schedcore.AffinityTerms(pod, podAffinityTerms(pod.Spec.Affinity))
	if err != nil {
		return schedcore.Queue, err
	}
	antiTerms, err := schedcore.AffinityTerms(pod, podAntiAffinityTerms(pod.Spec.Affinity))
	if err != nil {
		return schedcore.Queue, err
	}

	// Updated: one existing pod must satisfy all affinity terms at once.
	if modifiedPod != nil && originalPod != nil {
		if !podMatchesAllAffinityTerms(terms, originalPod) && podMatchesAllAffinityTerms(terms, modifiedPod) {
			logger.V(5).Info("a scheduled pod was updated to match the target pod's affinity, and the pod may be schedulable now",
				"pod", klog.KObj(pod), "modifiedPod", klog.KObj(modifiedPod))
			return schedcore.Queue, nil
		}
		if podMatchesAnyAffinityTerms(antiTerms, originalPod) && !podMatchesAnyAffinityTerms(antiTerms, modifiedPod) {
			logger.V(5).Info("a scheduled pod was updated not to match the target pod's anti affinity, and the pod may be schedulable now",
				"pod", klog.KObj(pod), "modifiedPod", klog.KObj(modifiedPod))
			return schedcore.Queue, nil
		}
		logger.V(5).Info("a scheduled pod was updated but it doesn't match the target pod's affinity or does match the target pod's anti-affinity",
			"pod", klog.KObj(pod), "modifiedPod", klog.KObj(modifiedPod))
		return schedcore.QueueSkip, nil
	}

	// Added.
	if modifiedPod != nil {
		if podMatchesAllAffinityTerms(terms, modifiedPod) {
			logger.V(5).Info("a scheduled pod was added and it matches the target pod's affinity",
				"pod", klog.KObj(pod), "modifiedPod", klog.KObj(modifiedPod))
			return schedcore.Queue, nil
		}
		logger.V(5).Info("a scheduled pod was added and it doesn't match the target pod's affinity",
			"pod", klog.KObj(pod), "modifiedPod", klog.KObj(modifiedPod))
		return schedcore.QueueSkip, nil
	}

	// Deleted.
	if podMatchesAnyAffinityTerms(antiTerms, originalPod) {
		logger.V(5).Info("a scheduled pod was deleted and it matches the target pod's anti-affinity. The pod may be schedulable now",
			"pod", klog.KObj(pod), "originalPod", klog.KObj(originalPod))
		return schedcore.Queue, nil
	}
	originalPodAntiTerms, err := schedcore.AffinityTerms(originalPod, podAntiAffinityTerms(originalPod.Spec.Affinity))
	if err != nil {
		return schedcore.Queue, err
	}
	if podMatchesAnyAffinityTerms(originalPodAntiTerms, pod) {
		logger.V(5).Info("a scheduled pod was deleted and the target pod matches the deleted pod's anti-affinity. The pod may be schedulable now",
			"pod", klog.KObj(pod), "originalPod", klog.KObj(originalPod))
		return schedcore.Queue, nil
	}
	logger.V(5).Info("a scheduled pod was deleted but it doesn't match the target pod's anti-affinity, nor vice versa",
		"pod", klog.KObj(pod), "originalPod", klog.KObj(originalPod))
	return schedcore.QueueSkip, nil
}

// isSchedulableAfterTargetPodUpdateLabel always queues: another pod's
// anti-affinity may have matched the old labels only.
func (pl *InterPodAffinity) isSchedulableAfterTargetPodUpdateLabel(logger logr.Logger, pod *v1.Pod, _, _ any) (schedcore.QueueingHint, error) {
	logger.V(5).Info("the target pod labels have changed and it may be schedulable now", "pod", klog.KObj(pod))
	return schedcore.Queue, nil
}

// isSchedulableAfterNodeChange queues the pod when a node gains, or moves to
// another value of, one of its affinity topology keys; when any node is added
// and the pod has anti-affinity; or when a node loses, or changes the value
// of, one of its anti-affinity topology keys.
func (pl *InterPodAffinity) isSchedulableAfterNodeChange(logger logr.Logger, pod *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	originalNode, modifiedNode, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	terms, err := schedcore.AffinityTerms(pod, podAffinityTerms(pod.Spec.Affinity))
	if err != nil {
		return schedcore.Queue, err
	}
	for _, term := range terms {
		if originalNode == nil {
			if _, ok := modifiedNode.Labels[term.TopologyKey]; ok {
				logger.V(5).Info("A node with a matched pod affinity topologyKey was added and it may make the pod schedulable",
					"pod", klog.KObj(pod), "node", modifiedNode.Name)
				return schedcore.Queue, nil
			}
			continue
		}
		ov, oHas := originalNode.Labels[term.TopologyKey]
		mv, mHas := modifiedNode.Labels[term.TopologyKey]
		if !oHas && mHas {
			logger.V(5).Info("A node got updated to have the topology key of pod affinity, which may make the pod schedulable",
				"pod", klog.KObj(pod), "node", modifiedNode.Name)
			return schedcore.Queue, nil
		}
		if oHas && mHas && ov != mv {
			logger.V(5).Info("A node is moved to a different domain of pod affinity, which may make the pod schedulable",
				"pod", klog.KObj(pod), "node", modifiedNode.Name)
			return schedcore.Queue, nil
		}
	}

	antiTerms, err := schedcore.AffinityTerms(pod, podAntiAffinityTerms(pod.Spec.Affinity))
	if err != nil {
		return schedcore.Queue, err
	}
	for _, term := range antiTerms {
		if originalNode == nil {
			// A node without the key always accepts the pod; one with it may
			// join a domain free of the pods the pod repels.
			logger.V(5).Info("A node was added and it may make the pod schedulable",
				"pod", klog.KObj(pod), "node", modifiedNode.Name)
			return schedcore.Queue, nil
		}
		ov, oHas := originalNode.Labels[term.TopologyKey]
		mv, mHas := modifiedNode.Labels[term.TopologyKey]
		if oHas && !mHas {
			logger.V(5).Info("A node got updated to not have the topology key of pod anti-affinity, which may make the pod schedulable",
				"pod", klog.KObj(pod), "node", modifiedNode.Name)
			return schedcore.Queue, nil
		}
		if oHas && mHas && ov != mv {
			logger.V(5).Info("A node is moved to a different domain of pod anti-affinity, which may make the pod schedulable",
				"pod", klog.KObj(pod), "node", modifiedNode.Name)
			return schedcore.Queue, nil
		}
	}
	logger.V(5).Info("a node is added/updated but doesn't have any topologyKey which matches pod affinity/anti-affinity",
		"pod", klog.KObj(pod), "node", modifiedNode.Name)
	return schedcore.QueueSkip, nil
}
