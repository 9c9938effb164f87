package podtopologyspread

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// inclusion evaluates the node inclusion policies of one pod's constraints
// node by node, remembering per node whether the pod's required node
// affinity matches it and whether the pod tolerates its taints, keyed by
// the pod's node constraints and tolerations (pods of a workload share
// them), while the node is unchanged.
type inclusion struct {
	pl      *PodTopologySpread
	pod     *v1.Pod
	require *helper.RequiredNodeAffinity
	view    schedcore.VerdictView
	memo    bool
	// needed is false when no constraint honours a policy: every node is
	// included and nothing is evaluated.
	needed bool
}

func (pl *PodTopologySpread) newInclusion(pod *v1.Pod, require *helper.RequiredNodeAffinity, constraints []topologySpreadConstraint, numNodes int) inclusion {
	in := inclusion{pl: pl, pod: pod, require: require}
	for i := range constraints {
		if constraints[i].NodeAffinityPolicy == v1.NodeInclusionPolicyHonor || constraints[i].NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
			in.needed = true
		}
	}
	if in.needed && pl.inclusionMemo != nil && numNodes > 0 {
		in.view = pl.inclusionMemo.View(helper.RequiredAffinityKey(pod)+"\x00"+helper.TolerationsKey(pod), numNodes)
		in.memo = true
	}
	return in
}

// verdict returns the inclusion bits of node ni.
func (in *inclusion) verdict(ni *schedcore.NodeInfo) uint16 {
	if !in.needed {
		return inclKnown
	}
	if in.memo {
		if v, ok := in.view.Get(ni); ok {
			return v
		}
	}
	v := inclKnown
	node := ni.Node()
	if match, _ := in.require.Match(node); !match {
		v |= inclAffinityFails
	}
	if _, untolerated := v1helper.FindMatchingUntoleratedTaint(in.pl.handle.Logger(), node.Spec.Taints, in.pod.Spec.Tolerations, doNotScheduleTaints, in.pl.enableTaintTolerationComparisonOperators); untolerated {
		v |= inclTaintsFail
	}
	if in.memo {
		in.view.Put(ni, v)
	}
	return v
}

// includes reports whether a node with inclusion bits v counts for the
// constraint (matchNodeInclusionPolicies from the bits).
func (tsc *topologySpreadConstraint) includes(v uint16) bool {
	if tsc.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor && v&inclAffinityFails != 0 {
		return false
	}
	return tsc.NodeTaintsPolicy != v1.NodeInclusionPolicyHonor || v&inclTaintsFail == 0
}

// matchNodeInclusionPolicies reports whether node counts for the constraint:
// with nodeAffinityPolicy Honor it must match the pod's required node
// affinity and nodeSelector (parse errors count as a match, for kube's
// backwards compatibility); with nodeTaintsPolicy Honor the pod must
// tolerate its NoSchedule and NoExecute taints.
func (tsc *topologySpreadConstraint) matchNodeInclusionPolicies(logger logr.Logger, pod *v1.Pod, node *v1.Node, require *helper.RequiredNodeAffinity, enableComparisonOperators bool) bool {
	if tsc.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor {
		if match, _ := require.Match(node); !match {
			return false
		}
	}
	if tsc.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
		if _, untolerated := v1helper.FindMatchingUntoleratedTaint(logger, node.Spec.Taints, pod.Spec.Tolerations, doNotScheduleTaints, enableComparisonOperators); untolerated {
			return false
		}
	}
	return true
}

// doNotScheduleTaints keeps the taints that matter for scheduling.
func doNotScheduleTaints(t *v1.Taint) bool {
	return t.Effect == v1.TaintEffectNoSchedule || t.Effect == v1.TaintEffectNoExecute
}

// getConstraints returns the pod's hard (DoNotSchedule) constraints, or the
// hard default constraints when the pod has none of its own.
func (pl *PodTopologySpread) getConstraints(pod *v1.Pod) ([]topologySpreadConstraint, error) {
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		c, err := pl.filterTopologySpreadConstraints(pod.Spec.TopologySpreadConstraints, pod.Labels, v1.DoNotSchedule)
		if err != nil {
			return nil, wrapf("obtaining pod's hard topology spread constraints", err)
		}
		return c, nil
	}
	c, err := pl.buildDefaultConstraints(pod, v1.DoNotSchedule)
	if err != nil {
		return nil, wrapf("setting default hard topology spread constraints", err)
	}
	return c, nil
}

// buildDefaultConstraints applies the plugin's default constraints of the
// given action to a pod, with the pod's DefaultSelector (its Services,
// ReplicationController, ReplicaSet or StatefulSet). A pod with an empty
// default selector gets no constraints.
func (pl *PodTopologySpread) buildDefaultConstraints(p *v1.Pod, action v1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	constraints, err := pl.filterTopologySpreadConstraints(pl.defaultConstraints, p.Labels, action)
	if err != nil || len(constraints) == 0 {
		return nil, err
	}
	selector := helper.DefaultSelector(p, pl.selectorSources())
	if selector.Empty() {
		return nil, nil
	}
	for i := range constraints {
		constraints[i].Selector = selector
	}
	return constraints, nil
}

// selectorSources returns the Services, ReplicaSets, ...: the driver's
// current ones when it serves them (run: the queueing hints call this on
// event goroutines, concurrently with snapshot updates), else the
// snapshot's.
func (pl *PodTopologySpread) selectorSources() *schedcore.SelectorSources {
	return pl.handle.SelectorSources()
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
// action. As kube-scheduler v1.37 does (MatchLabelKeysInPodTopologySpread),
// the pod's values of matchLabelKeys are ANDed into the selector here, even
// though the v1.37 API server (MatchLabelKeysInPodTopologySpreadSelectorMerge)
// already merged them into labelSelector at creation: the two merges select
// the same pods, and pods that never went through an API server (snapshots
// written by hand) behave as in a real cluster. A nil labelSelector selects
// nothing and stays so.
func (pl *PodTopologySpread) filterTopologySpreadConstraints(constraints []v1.TopologySpreadConstraint, podLabels map[string]string, action v1.UnsatisfiableConstraintAction) ([]topologySpreadConstraint, error) {
	var result []topologySpreadConstraint
	for i := range constraints {
		c := &constraints[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		selector, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
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
		tsc := topologySpreadConstraint{
			MaxSkew:            c.MaxSkew,
			TopologyKey:        c.TopologyKey,
			Selector:           selector,
			MinDomains:         ptr.Deref(c.MinDomains, 1),
			NodeAffinityPolicy: v1.NodeInclusionPolicyHonor,
			NodeTaintsPolicy:   v1.NodeInclusionPolicyIgnore,
		}
		// NodeInclusionPolicyInPodTopologySpread is GA and locked on.
		if c.NodeAffinityPolicy != nil {
			tsc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			tsc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		result = append(result, tsc)
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

// countPodsMatchSelector counts the pods of namespace ns that the selector
// matches, skipping terminating pods (kube #87621). An empty selector
// counts nothing.
func countPodsMatchSelector(podInfos []*schedcore.PodInfo, selector labels.Selector, ns string) int {
	if selector.Empty() {
		return 0
	}
	count := 0
	for _, pi := range podInfos {
		p := pi.Pod
		if p.DeletionTimestamp != nil || p.Namespace != ns {
			continue
		}
		if selector.Matches(labels.Set(p.Labels)) {
			count++
		}
	}
	return count
}

// matchCounter counts a node's pods of one namespace that a selector
// matches, remembered per node in the plugin's memo while the node is
// unchanged: a cycle recounts only the nodes that changed since the
// selector was last counted.
type matchCounter struct {
	t   *schedcore.MemoTable[int]
	sel labels.Selector
	ns  string
	// byNode, when indexed, holds every node's count by snapshot list index
	// (from the postings index; nodes without a candidate pod count 0).
	byNode  []int32
	indexed bool
}

// counters returns a counter per constraint for namespace ns over the
// snapshot's nodes (constraints with the same selector share one table);
// call release when the cycle's counting is done. Selectors with an
// equality requirement are counted from the postings index, the others
// node by node through the memo.
func (pl *PodTopologySpread) counters(constraints []topologySpreadConstraint, ns string, nodes []*schedcore.NodeInfo) (cs []matchCounter, release func()) {
	cs = make([]matchCounter, len(constraints))
	keys := make([]string, len(constraints))
	var held []*schedcore.MemoTable[int]
	synced := false
	pl.postings.mu.Lock()
	defer pl.postings.mu.Unlock()
	for i := range constraints {
		sel := constraints[i].Selector
		cs[i] = matchCounter{sel: sel, ns: ns}
		if sel.Empty() {
			continue
		}
		if !synced {
			pl.postings.sync(nodes)
			synced = true
		}
		keys[i] = ns + "\x00" + sel.String()
		if cands, ok := pl.postings.candidates(sel, ns); ok {
			// Only the nodes with candidate pods can count; those unchanged
			// since their count was remembered are not recounted.
			t := pl.counts.Acquire(keys[i], len(nodes))
			byNode := make([]int32, len(nodes))
			for idx, pods := range cands {
				if int(idx) >= len(nodes) {
					continue
				}
				ni := nodes[idx]
				n, ok := t.Get(ni)
				if !ok {
					n = 0
					for _, pi := range pods {
						if sel.Matches(labels.Set(pi.Pod.Labels)) {
							n++
						}
					}
					t.Put(ni, n)
				}
				byNode[idx] = int32(n)
			}
			t.Release()
			cs[i].byNode, cs[i].indexed = byNode, true
			continue
		}
		for j := 0; j < i; j++ {
			if keys[j] == keys[i] {
				cs[i].t = cs[j].t
				break
			}
		}
		if cs[i].t == nil {
			cs[i].t = pl.counts.Acquire(keys[i], len(nodes))
			held = append(held, cs[i].t)
		}
	}
	return cs, func() {
		for _, t := range held {
			t.Release()
		}
	}
}

func (c matchCounter) count(ni *schedcore.NodeInfo) int {
	if c.indexed {
		if i := ni.ListIndex(); i >= 0 && i < len(c.byNode) {
			return int(c.byNode[i])
		}
		return countPodsMatchSelector(ni.Pods, c.sel, c.ns)
	}
	if c.t == nil {
		return 0
	}
	if v, ok := c.t.Get(ni); ok {
		return v
	}
	v := countPodsMatchSelector(ni.Pods, c.sel, c.ns)
	c.t.Put(ni, v)
	return v
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
