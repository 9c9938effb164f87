package podtopologyspread

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	v1helper "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// topologySpreadConstraint is a v1.TopologySpreadConstraint with its
// selector parsed (matchLabelKeys merged in) and its optional fields
// defaulted, as kube's internal type.
type topologySpreadConstraint struct {
	MaxSkew            int32
	TopologyKey        string
	Selector           labels.Selector
	MinDomains         int32
	NodeAffinityPolicy v1.NodeInclusionPolicy
	NodeTaintsPolicy   v1.NodeInclusionPolicy
}

// Inclusion verdict bits: a node's match of the pod's required node
// affinity and its taints' toleration, as remembered in inclusionMemo.
const (
	inclAffinityFails uint16 = 1 << iota
	inclTaintsFail
	inclKnown
)

// inclusion evaluates one pod's node inclusion policies node by node,
// remembering per node (while its labels and taints are unchanged) the
// verdicts, keyed by the pod's node constraints and tolerations.
type inclusion struct {
	pl      *PodTopologySpread
	pod     *v1.Pod
	require *helper.RequiredNodeAffinity
	view    schedcore.VerdictView
	// needed is false when no constraint honours a policy, or there are
	// no nodes.
	needed bool
}

func (pl *PodTopologySpread) newInclusion(pod *v1.Pod, require *helper.RequiredNodeAffinity, constraints []topologySpreadConstraint) inclusion {
	in := inclusion{pl: pl, pod: pod, require: require}
	for i := range constraints {
		if constraints[i].NodeAffinityPolicy == v1.NodeInclusionPolicyHonor || constraints[i].NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
			in.needed = true
		}
	}
	n := pl.handle.Snapshot().NumNodes()
	if in.needed = in.needed && n > 0; in.needed {
		// Nodes the memo does not know are matched through label columns.
		require.Bind(pl.handle.Snapshot())
		key := helper.TolerationsKey(helper.RequiredAffinityKey(new(schedcore.MemoKey), pod), pod)
		in.view = pl.inclusionMemo.View(key, n)
	}
	return in
}

// verdict returns the inclusion bits of node ni.
func (in *inclusion) verdict(ni *schedcore.NodeInfo) uint16 {
	if !in.needed {
		return inclKnown
	}
	if v, ok := in.view.GetByNode(ni); ok {
		return v
	}
	v := in.pl.inclusionOf(in.pod, in.require, ni)
	in.view.PutByNode(ni, v)
	return v
}

// inclusionOf computes a node's inclusion bits: whether it matches the
// pod's required node affinity and nodeSelector (parse errors match, as in
// kube), and whether the pod tolerates its NoSchedule/NoExecute taints.
func (pl *PodTopologySpread) inclusionOf(pod *v1.Pod, require *helper.RequiredNodeAffinity, ni *schedcore.NodeInfo) uint16 {
	v := inclKnown
	node := ni.Node()
	if match, _ := require.MatchNodeInfo(ni); !match {
		v |= inclAffinityFails
	}
	if _, untolerated := v1helper.FindMatchingUntoleratedTaint(pl.handle.Logger(), node.Spec.Taints, pod.Spec.Tolerations, helper.DoNotScheduleTaints, pl.enableTaintTolerationComparisonOperators); untolerated {
		v |= inclTaintsFail
	}
	return v
}

// includes reports whether a node with inclusion bits v counts for the
// constraint (kube's matchNodeInclusionPolicies).
func (tsc *topologySpreadConstraint) includes(v uint16) bool {
	if tsc.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && v&inclAffinityFails != 0 {
		return false
	}
	return tsc.NodeTaintsPolicy != v1.NodeInclusionPolicyHonor || v&inclTaintsFail == 0
}

// getConstraints returns the pod's constraints of the given action (hard:
// DoNotSchedule, soft: ScheduleAnyway), or the default ones when the pod
// has none of its own.
func (pl *PodTopologySpread) getConstraints(pod *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	kind := "hard"
	if action == v1.ScheduleAnyway {
		kind = "soft"
	}
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		c, err := pl.filterTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, action)
		if err != nil {
			return nil, wrapf("obtaining pod's "+kind+" topology spread constraints", err)
		}
		return c, nil
	}
	c, err := pl.buildDefaultConstraints(pod, action)
	if err != nil {
		return nil, wrapf("setting default "+kind+" topology spread constraints", err)
	}
	return c, nil
}

// buildDefaultConstraints applies the default constraints of the given
// action with the pod's DefaultSelector; none when it is empty.
func (pl *PodTopologySpread) buildDefaultConstraints(p *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	constraints, err := pl.filterTopologySpreadConstraints(pl.defaultConstraints, p.Labels, action)
	if err != nil || len(constraints) == 0 {
		return nil, err
	}
	// Not the snapshot's sources: queueing hints call this concurrently.
	selector := pl.selectors.Get(p, pl.handle.SelectorSources())
	if selector.Empty() {
		return nil, nil
	}
	for i := range constraints {
		constraints[i].Selector = selector
	}
	return constraints, nil
}

// nodeLabelsMatchSpreadConstraints reports whether the node has every
// constraint's topology key.
func nodeLabelsMatchSpreadConstraints(nodeLabels map[string]string, constraints []topologySpreadConstraint) bool {
	for i := range constraints {
		if _, ok := nodeLabels[constraints[i].TopologyKey]; !ok {
			return false
		}
	}
	return true
}

// filterTopologySpreadConstraints parses the constraints with the given
// action. As kube v1.37 does, the pod's matchLabelKeys values are ANDed
// into the selector, though the API server already merged them at
// creation: both select the same pods, and hand-written pods behave as in
// a cluster. A nil labelSelector selects nothing.
func (pl *PodTopologySpread) filterTopologySpreadConstraints(constraints []v1.TopologySpreadConstraint, podLabels map[string]string, action v1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	var result []topologySpreadConstraint
	for i := range constraints {
		c := &constraints[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		selector, err := schedcore.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		if pl.enableMatchLabelKeys && len(c.MatchLabelKeys) > 0 {
			matchLabels := make(labels.Set)
			for _, key := range c.MatchLabelKeys {
				if value, ok := podLabels[key]; ok {
					matchLabels[key] = value
				}
			}
			if len(matchLabels) > 0 {
				selector = mergeLabelSetWithSelector(matchLabels, selector)
			}
		}
		// NodeInclusionPolicyInPodTopologySpread is GA and locked on.
		result = append(result, topologySpreadConstraint{
			MaxSkew:            c.MaxSkew,
			TopologyKey:        c.TopologyKey,
			Selector:           selector,
			MinDomains:         ptr.Deref(c.MinDomains, 1),
			NodeAffinityPolicy: ptr.Deref(c.NodeAffinityPolicy, v1.NodeInclusionPolicyHonor),
			NodeTaintsPolicy:   ptr.Deref(c.NodeTaintsPolicy, v1.NodeInclusionPolicyIgnore),
		})
	}
	return result, nil
}

// mergeLabelSetWithSelector ANDs matchLabels with s; a selector without
// requirements to list (Nothing) is returned as it is.
func mergeLabelSetWithSelector(matchLabels labels.Set, s labels.Selector) labels.Selector {
	merged := labels.SelectorFromSet(matchLabels)
	requirements, ok := s.Requirements()
	if !ok {
		return s
	}
	for _, r := range requirements {
		merged = merged.Add(r)
	}
	return merged
}

// topologyKeys lists the constraints' topology keys, in order.
func topologyKeys(constraints []topologySpreadConstraint) []string {
	keys := make([]string, len(constraints))
	for i := range constraints {
		keys[i] = constraints[i].TopologyKey
	}
	return keys
}

// podLabelsMatchSpreadConstraints reports whether any constraint selects
// the labels.
func podLabelsMatchSpreadConstraints(constraints []topologySpreadConstraint, set labels.Set) bool {
	for i := range constraints {
		if constraints[i].Selector.Matches(set) {
			return true
		}
	}
	return false
}
