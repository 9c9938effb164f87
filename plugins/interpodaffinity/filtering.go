package interpodaffinity

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Filter reasons, word for word kube-scheduler v1.37's.
const (
	// ErrReasonExistingAntiAffinityRulesNotMatch: an existing pod's required
	// anti-affinity rejects the incoming pod in the node's topology.
	ErrReasonExistingAntiAffinityRulesNotMatch = "node(s) didn't satisfy existing pods anti-affinity rules"
	// ErrReasonAffinityRulesNotMatch: the node's topology has no pod matching
	// all of the incoming pod's required affinity terms.
	ErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules"
	// ErrReasonAntiAffinityRulesNotMatch: the node's topology has a pod the
	// incoming pod's required anti-affinity repels.
	ErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules"
)

// The Filter rejections, shared by every call (see schedcore.NewSharedStatus).
var (
	statusAffinityRulesNotMatch             = schedcore.NewSharedStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch)
	statusAntiAffinityRulesNotMatch         = schedcore.NewSharedStatus(schedcore.Unschedulable, ErrReasonAntiAffinityRulesNotMatch)
	statusExistingAntiAffinityRulesNotMatch = schedcore.NewSharedStatus(schedcore.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch)
)

const preFilterStateKey schedcore.StateKey = "PreFilter" + Name

// preFilterState is computed in PreFilter and read by Filter. With the
// InterPodAffinityHostnameFastPath gate off, the cluster-wide term lists are
// all of the pod's required terms and the host-scoped lists are empty; with
// it on, kubernetes.io/hostname-scoped terms are checked against the node's
// own pods instead (affinity only when every affinity term is host-scoped).
// The counts are per domain of their topology keys (kube's counts per
// topology pair), updated by AddPod and RemovePod on clones.
type preFilterState struct {
	// existing counts existing pods' required anti-affinity terms the
	// incoming pod matches (host-scoped ones excluded under the gate).
	existing *schedcore.DomainCounts
	// affinity counts existing pods matching all clusterWideAffinityTerms,
	// once per term; anti the existing pods matching each
	// clusterWideAntiAffinityTerm. Both have one key per distinct
	// topology key of their terms.
	affinity, anti *schedcore.DomainCounts

	podInfo         *schedcore.PodInfo
	namespaceLabels labels.Set

	hostScopedAffinityTerms      []schedcore.AffinityTerm
	hostScopedAntiAffinityTerms  []schedcore.AffinityTerm
	clusterWideAffinityTerms     []schedcore.AffinityTerm
	clusterWideAntiAffinityTerms []schedcore.AffinityTerm
	// matchingHostScopedAffinityPods counts pods anywhere matching all
	// hostScopedAffinityTerms (gate on, host-scoped affinity only).
	matchingHostScopedAffinityPods int64
	fastPath                       bool
}

// Clone copies the counts, which AddPod/RemovePod change; the rest is shared.
func (s *preFilterState) Clone() schedcore.StateData {
	if s == nil {
		return nil
	}
	c := *s
	c.existing, c.affinity, c.anti = s.existing.Clone(), s.affinity.Clone(), s.anti.Clone()
	return &c
}

// updateWithPod adds (multiplier 1) or removes (-1) an existing pod on a node.
func (s *preFilterState) updateWithPod(pi *schedcore.PodInfo, ni *schedcore.NodeInfo, multiplier int64) {
	if s == nil {
		return
	}
	for i := range pi.RequiredAntiAffinityTerms {
		t := &pi.RequiredAntiAffinityTerms[i]
		if (!s.fastPath || t.TopologyKey != v1.LabelHostname) && t.Matches(s.podInfo.Pod, s.namespaceLabels) {
			s.existing.AddNode(keyOf(s.existing, t.TopologyKey), ni, multiplier)
		}
	}
	if podMatchesAllAffinityTerms(s.clusterWideAffinityTerms, pi.Pod) {
		for i := range s.clusterWideAffinityTerms {
			s.affinity.AddNode(s.affinity.KeyIndex(s.clusterWideAffinityTerms[i].TopologyKey), ni, multiplier)
		}
	}
	for i := range s.clusterWideAntiAffinityTerms {
		if s.clusterWideAntiAffinityTerms[i].Matches(pi.Pod, nil) {
			s.anti.AddNode(s.anti.KeyIndex(s.clusterWideAntiAffinityTerms[i].TopologyKey), ni, multiplier)
		}
	}
	if len(s.hostScopedAffinityTerms) > 0 && podMatchesAllAffinityTerms(s.hostScopedAffinityTerms, pi.Pod) {
		s.matchingHostScopedAffinityPods += multiplier
	}
}

// podMatchesAllAffinityTerms reports whether terms is non-empty and pod
// matches every term. The incoming pod's namespace selectors are merged into
// Namespaces, so no namespace labels are needed.
func podMatchesAllAffinityTerms(terms []schedcore.AffinityTerm, pod *v1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nil) {
			return false
		}
	}
	return true
}

// podMatchesAnyAffinityTerms reports whether pod matches one of terms.
func podMatchesAnyAffinityTerms(terms []schedcore.AffinityTerm, pod *v1.Pod) bool {
	for i := range terms {
		if terms[i].Matches(pod, nil) {
			return true
		}
	}
	return false
}

// classifyTerms splits the pod's required terms by scope as kube's
// classifyTermsBasedOnScope does. Affinity terms stay together (one pod must
// match them all): they are host-scoped only if every one is.
func (s *preFilterState) classifyTerms() {
	aff, anti := s.podInfo.RequiredAffinityTerms, s.podInfo.RequiredAntiAffinityTerms
	if !s.fastPath {
		s.clusterWideAffinityTerms, s.clusterWideAntiAffinityTerms = aff, anti
		return
	}
	allHost := true
	for i := range aff {
		allHost = allHost && aff[i].TopologyKey == v1.LabelHostname
	}
	if allHost {
		s.hostScopedAffinityTerms = aff
	} else {
		s.clusterWideAffinityTerms = aff
	}
	for _, t := range anti {
		if t.TopologyKey == v1.LabelHostname {
			s.hostScopedAntiAffinityTerms = append(s.hostScopedAntiAffinityTerms, t)
		} else {
			s.clusterWideAntiAffinityTerms = append(s.clusterWideAntiAffinityTerms, t)
		}
	}
}

// PreFilter computes the counts Filter reads. See the package doc for Skip.
func (pl *InterPodAffinity) PreFilter(ctx context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, allNodes []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	pi := schedcore.NewPodInfo(pod)
	if pi.ParseError != nil {
		return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf("parsing pod: %+v", pi.ParseError))
	}
	snap := pl.handle.Snapshot()
	for i := range pi.RequiredAffinityTerms {
		mergeNamespaces(&pi.RequiredAffinityTerms[i], snap)
	}
	for i := range pi.RequiredAntiAffinityTerms {
		mergeNamespaces(&pi.RequiredAntiAffinityTerms[i], snap)
	}
	s := &preFilterState{podInfo: pi, namespaceLabels: snap.NamespaceLabels(pod.Namespace), fastPath: pl.fastPath}
	s.classifyTerms()

	antiNodes := snap.HavePodsWithRequiredAntiAffinityList()
	mustEvaluateHostScoped := false
	if pl.fastPath {
		var hostScopedOnNonHostNodes bool
		s.existing, hostScopedOnNonHostNodes = pl.existingCounts(pod, s.namespaceLabels)
		mustEvaluateHostScoped = hostScopedOnNonHostNodes || anyHostScopedOnly(antiNodes)
		if len(s.hostScopedAffinityTerms) > 0 {
			s.matchingHostScopedAffinityPods = pl.countMatchingHostScopedAffinityPods(ctx, allNodes, s.hostScopedAffinityTerms)
		}
	} else {
		s.existing, _ = pl.existingCounts(pod, s.namespaceLabels)
	}
	s.affinity, s.anti = pl.incomingCounts(s.clusterWideAffinityTerms, s.clusterWideAntiAffinityTerms)
	if err := ctx.Err(); err != nil {
		return nil, schedcore.AsStatus(err)
	}

	noTerms := len(pi.RequiredAffinityTerms) == 0 && len(pi.RequiredAntiAffinityTerms) == 0
	if s.existing.NonZero() == 0 && noTerms && !mustEvaluateHostScoped {
		return nil, schedcore.NewStatus(schedcore.Skip)
	}
	cycleState.Write(preFilterStateKey, s)
	return nil, nil
}

// AddPod adds a pod to the cycle's counts (nominated pods, preemption).
func (pl *InterPodAffinity) AddPod(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, podInfoToAdd *schedcore.PodInfo, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	s.updateWithPod(podInfoToAdd, nodeInfo, 1)
	return nil
}

// RemovePod removes a pod from the cycle's counts (preemption victims).
func (pl *InterPodAffinity) RemovePod(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, podInfoToRemove *schedcore.PodInfo, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	s.updateWithPod(podInfoToRemove, nodeInfo, -1)
	return nil
}

// anyCountIn reports whether one of d's keys has a positive count in the
// node's domain.
func anyCountIn(d *schedcore.DomainCounts, ni *schedcore.NodeInfo) bool {
	var buf [4]schedcore.Domain
	doms, _ := d.NodeDomains(ni, buf[:0])
	for k, dom := range doms {
		if d.At(k, dom) > 0 {
			return true
		}
	}
	return false
}

// satisfyExistingPodsAntiAffinity reports whether no existing pod's
// required anti-affinity repels the pod from the node's domains.
func satisfyExistingPodsAntiAffinity(s *preFilterState, nodeInfo *schedcore.NodeInfo) bool {
	if anyCountIn(s.existing, nodeInfo) {
		return false
	}
	if s.fastPath {
		if _, ok := nodeInfo.Node().Labels[v1.LabelHostname]; ok {
			for _, existing := range nodeInfo.PodsWithRequiredAntiAffinity {
				for i := range existing.RequiredAntiAffinityTerms {
					t := &existing.RequiredAntiAffinityTerms[i]
					if t.TopologyKey == v1.LabelHostname && t.Matches(s.podInfo.Pod, s.namespaceLabels) {
						return false
					}
				}
			}
		}
	}
	return true
}

// nodePodsConflictWithAntiAffinity checks the host-scoped anti-affinity
// terms against the node's pods (gate on).
func nodePodsConflictWithAntiAffinity(s *preFilterState, nodeInfo *schedcore.NodeInfo) bool {
	if len(s.hostScopedAntiAffinityTerms) == 0 {
		return false
	}
	if _, ok := nodeInfo.Node().Labels[v1.LabelHostname]; !ok {
		return false
	}
	for _, existing := range nodeInfo.Pods {
		if podMatchesAnyAffinityTerms(s.hostScopedAntiAffinityTerms, existing.Pod) {
			return true
		}
	}
	return false
}

// nodePodsSatisfyAffinity checks host-scoped-only affinity against the node's
// pods, falling back to the first-pod exception (gate on).
func nodePodsSatisfyAffinity(s *preFilterState, nodeInfo *schedcore.NodeInfo) bool {
	if _, ok := nodeInfo.Node().Labels[v1.LabelHostname]; !ok {
		return false
	}
	for _, existing := range nodeInfo.Pods {
		if podMatchesAllAffinityTerms(s.hostScopedAffinityTerms, existing.Pod) {
			return true
		}
	}
	return satisfiesSelfAffinity(s, nodeInfo.Node())
}

// nodeTopologyMatchesAffinity reports whether every affinity topology key is
// on the node and each of its domains holds a pod matching all the terms; or,
// when no pod matches anywhere, whether the pod matches its own terms (the
// first pod of a group with affinity to itself).
func nodeTopologyMatchesAffinity(s *preFilterState, nodeInfo *schedcore.NodeInfo) bool {
	var buf [4]schedcore.Domain
	doms, all := s.affinity.NodeDomains(nodeInfo, buf[:0])
	if !all {
		// Every topology label must be on the node, self-affinity included.
		return false
	}
	podsExist := true
	for k, dom := range doms {
		podsExist = podsExist && s.affinity.At(k, dom) > 0
	}
	if !podsExist {
		return s.affinity.NonZero() == 0 && satisfiesSelfAffinity(s, nodeInfo.Node())
	}
	return true
}

// satisfiesSelfAffinity is kube's satisfiesSelfAffinityCheck.
func satisfiesSelfAffinity(s *preFilterState, node *v1.Node) bool {
	terms := s.podInfo.RequiredAffinityTerms
	if s.fastPath {
		if s.matchingHostScopedAffinityPods <= 0 && podMatchesAllAffinityTerms(terms, s.podInfo.Pod) {
			for i := range terms {
				if _, ok := node.Labels[terms[i].TopologyKey]; !ok {
					return false
				}
			}
			return true
		}
		return false
	}
	return podMatchesAllAffinityTerms(terms, s.podInfo.Pod)
}

// affinityFails reports whether the node fails the pod's required
// affinity: host-scoped terms against its pods, the others by domain.
func affinityFails(s *preFilterState, nodeInfo *schedcore.NodeInfo) bool {
	if len(s.hostScopedAffinityTerms) > 0 {
		return !nodePodsSatisfyAffinity(s, nodeInfo)
	}
	return !nodeTopologyMatchesAffinity(s, nodeInfo)
}

// antiAffinityFails reports whether the node's domains hold a pod the
// pod's required anti-affinity repels.
func antiAffinityFails(s *preFilterState, nodeInfo *schedcore.NodeInfo) bool {
	return anyCountIn(s.anti, nodeInfo) || nodePodsConflictWithAntiAffinity(s, nodeInfo)
}

// Filter checks, in kube's order, the pod's required affinity, its required
// anti-affinity and the existing pods' required anti-affinity on the node.
func (pl *InterPodAffinity) Filter(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	s, err := schedcore.ReadAs[*preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	switch {
	case affinityFails(s, nodeInfo):
		return statusAffinityRulesNotMatch
	case antiAffinityFails(s, nodeInfo):
		return statusAntiAffinityRulesNotMatch
	case !satisfyExistingPodsAntiAffinity(s, nodeInfo):
		return statusExistingAntiAffinityRulesNotMatch
	}
	return nil
}

// PodBlind: PreFilter counts the matching pods into its state but fails
// only on the pod's own terms (Filter reads the counts).
func (pl *InterPodAffinity) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter
}

var _ schedcore.PodBlindPlugin = (*InterPodAffinity)(nil)
