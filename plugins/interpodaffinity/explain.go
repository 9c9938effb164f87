package interpodaffinity

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.ShortfallExplainer = (*InterPodAffinity)(nil)

// maxNamedPods bounds the pods an explanation names per rule.
const maxNamedPods = 3

// ExplainFilter names what Filter found, rule by rule in Filter's order,
// from the counts PreFilter made: the required affinity terms whose
// domain on the node has no matching pod (or whose topology key the node
// lacks), the pods the pod's anti-affinity repels in the node's domains,
// and the existing pods whose anti-affinity repels the pod. Evicting the
// repelled pods could help anti-affinity, nothing on the node can bring an
// affinity match: the shortfall is 1.
func (pl *InterPodAffinity) ExplainFilter(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	s, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return nil
	}
	node := nodeInfo.Node()
	var out []string
	if affinityFails(s, nodeInfo) {
		out = append(out, pl.affinityGaps(s, node)...)
	}
	if antiAffinityFails(s, nodeInfo) {
		out = append(out, pl.antiAffinityGaps(s, node)...)
	}
	if !satisfyExistingPodsAntiAffinity(s, nodeInfo) {
		out = append(out, pl.existingAntiAffinityGaps(s, node)...)
	}
	if len(out) == 0 {
		return nil
	}
	return schedcore.NewFilterExplanation(1, out...)
}

// FilterShortfall is ExplainFilter's shortfall, always 1: nothing on the node can bring an affinity match, and evicting repelled pods is preemption's, not a shortfall.
func (pl *InterPodAffinity) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}

// affinityGaps says, per required affinity term, that the node lacks its
// topology key or that its domain has no pod matching all the terms.
func (pl *InterPodAffinity) affinityGaps(s *preFilterState, node *v1.Node) []string {
	terms := s.podInfo.RequiredAffinityTerms
	var out []string
	for i := range terms {
		t := &terms[i]
		tv, ok := node.Labels[t.TopologyKey]
		if !ok {
			out = append(out, fmt.Sprintf("pod affinity term %d: node has no %s label", i+1, t.TopologyKey))
			continue
		}
		matchesAll := func(p *v1.Pod) bool { return podMatchesAllAffinityTerms(terms, p) }
		if len(pl.podsInDomain(node, t.TopologyKey, tv, matchesAll, 1)) == 0 {
			out = append(out, fmt.Sprintf("pod affinity term %d: no pod matching %s %s", i+1, selectorString(t.Selector), helper.InDomain(t.TopologyKey, tv)))
		}
	}
	return out
}

// antiAffinityGaps names the pods in the node's domains that the pod's
// required anti-affinity terms match.
func (pl *InterPodAffinity) antiAffinityGaps(s *preFilterState, node *v1.Node) []string {
	snap := pl.handle.Snapshot()
	var out []string
	for i := range s.podInfo.RequiredAntiAffinityTerms {
		t := &s.podInfo.RequiredAntiAffinityTerms[i]
		tv, ok := node.Labels[t.TopologyKey]
		if !ok {
			continue
		}
		matches := func(p *v1.Pod) bool { return t.Matches(p, snap.NamespaceLabels(p.Namespace)) }
		for _, m := range pl.podsInDomain(node, t.TopologyKey, tv, matches, maxNamedPods) {
			out = append(out, fmt.Sprintf("anti-affinity with pod %s %s", m.pod, m.where(node.Name, t.TopologyKey, tv)))
		}
	}
	return out
}

// existingAntiAffinityGaps names the pods whose required anti-affinity
// terms match the pod in the node's domains. The domains are compared
// through the snapshot's label columns (labelViews), and a node is only
// read when it shares a domain with this one for some topology key of the
// existing terms (the anti index's, brought up to date with the snapshot:
// every term on a node with its label is in a group), so that the pods of
// the nodes elsewhere are not walked.
func (pl *InterPodAffinity) existingAntiAffinityGaps(s *preFilterState, node *v1.Node) []string {
	var out []string
	views := labelViews{snap: pl.handle.Snapshot()}
	keys := pl.anti.topologyKeys(views.snap)
	values := make([]string, len(keys))
	for i, k := range keys {
		values[i] = node.Labels[k]
	}
	near := func(ni *schedcore.NodeInfo) bool {
		for i, k := range keys {
			if v, ok := views.of(k).Value(ni); ok && v == values[i] {
				return true
			}
		}
		return false
	}
	for _, ni := range views.snap.HavePodsWithRequiredAntiAffinityList() {
		if !near(ni) {
			continue
		}
		for _, pi := range ni.PodsWithRequiredAntiAffinity {
			for i := range pi.RequiredAntiAffinityTerms {
				t := &pi.RequiredAntiAffinityTerms[i]
				tv, ok := views.of(t.TopologyKey).Value(ni)
				if !ok || node.Labels[t.TopologyKey] != tv || !t.Matches(s.podInfo.Pod, s.namespaceLabels) {
					continue
				}
				m := domainPod{pod: schedcore.PodName(pi.Pod), node: ni.Name()}
				out = append(out, fmt.Sprintf("pod %s %s has anti-affinity to this pod", m.pod, m.where(node.Name, t.TopologyKey, tv)))
				if len(out) == maxNamedPods {
					return out
				}
			}
		}
	}
	return out
}

// labelViews are the snapshot's label views of the topology keys met so
// far (few: one per distinct key).
type labelViews struct {
	snap  *schedcore.Snapshot
	views []schedcore.LabelView
	keys  []string
}

func (lv *labelViews) of(key string) schedcore.LabelView {
	for i, k := range lv.keys {
		if k == key {
			return lv.views[i]
		}
	}
	v := lv.snap.LabelView(key)
	lv.keys, lv.views = append(lv.keys, key), append(lv.views, v)
	return v
}

// domainPod is a pod named in an explanation, with its node.
type domainPod struct{ pod, node string }

// where says where the pod is, seen from thisNode: "on this node", or "in
// zone zone-b (on node n2)".
func (d domainPod) where(thisNode, key, value string) string {
	if d.node == thisNode {
		return "on this node"
	}
	return fmt.Sprintf("%s (on node %s)", helper.InDomain(key, value), d.node)
}

// podsInDomain returns up to limit pods that match on the nodes with
// label key=value, the pods of node first.
func (pl *InterPodAffinity) podsInDomain(node *v1.Node, key, value string, match func(*v1.Pod) bool, limit int) []domainPod {
	var out []domainPod
	add := func(ni *schedcore.NodeInfo) bool {
		for _, pi := range ni.Pods {
			if match(pi.Pod) {
				out = append(out, domainPod{pod: schedcore.PodName(pi.Pod), node: ni.Name()})
				if len(out) >= limit {
					return true
				}
			}
		}
		return false
	}
	snap := pl.handle.Snapshot()
	if ni, err := snap.Get(node.Name); err == nil && add(ni) {
		return out
	}
	// The other nodes of the domain, in list order, from the label's
	// column: the same nodes as reading every node's labels.
	snap.LabelView(key).Nodes(value, func(ni *schedcore.NodeInfo) bool {
		return ni.Name() != node.Name && add(ni)
	})
	return out
}

func selectorString(s labels.Selector) string {
	if s == nil || s.Empty() {
		return "any labels"
	}
	return s.String()
}
