// Package interpodaffinity is kube-scheduler v1.37.2's InterPodAffinity
// plugin: required pod affinity and anti-affinity (the incoming pod's and the
// existing pods'), and preferred affinity scoring.
//
// Extension points:
//   - PreFilter (with AddPod/RemovePod): counts, per topology pair, the
//     existing pods whose required anti-affinity the incoming pod violates
//     (over the nodes of Snapshot.HavePodsWithRequiredAntiAffinityList), and
//     the existing pods matching the incoming pod's required affinity and
//     anti-affinity terms. Namespace selectors of the incoming pod's terms are
//     resolved against the snapshot's namespaces; existing pods' selectors are
//     matched against the incoming pod's namespace labels. A pod whose
//     affinity selectors do not parse is UnschedulableAndUnresolvable
//     ("parsing pod: ..."). PreFilter returns Skip when no existing pod's
//     required anti-affinity matches the pod, the pod has no required
//     (anti-)affinity terms, and (with InterPodAffinityHostnameFastPath) no
//     existing pod has a hostname-scoped required anti-affinity term.
//   - Filter: the reasons below, checked in that order.
//   - PreScore/Score/NormalizeScore: the incoming pod's preferred affinity
//     (+weight) and anti-affinity (-weight) against existing pods, existing
//     pods' required affinity (+hardPodAffinityWeight) and preferred
//     affinity/anti-affinity against the incoming pod, summed per topology
//     pair; a node's score is the sum over its labels; normalization maps
//     [min, max] onto [0, 100] as int64(100 * (s-min)/(max-min)) in float64.
//     PreScore returns Skip when nothing matched anywhere, or when
//     ignorePreferredTermsOfExistingPods is set and the pod has no preferred
//     terms.
//   - FilterExplainer: the terms the node's domains fail, with the pods
//     involved (a few named).
//   - EnqueueExtensions: AssignedPod Add|UpdatePodLabel|Delete, TargetPod
//     UpdatePodLabel and Node Add|UpdateNodeLabel, with kube's hints.
//
// The counts per topology pair (kube's topologyToMatchedTermCount and
// scoreMap) are schedcore.DomainCounts, with one key per distinct topology
// key; PreFilter's clones are copy-on-write, so AddPod and RemovePod copy
// only the key they change. The incoming pod's preferred terms are counted
// from a pod label index (schedcore.TermCounter: only the nodes holding pods
// with the term's label pair); its required terms' matches per node are
// remembered across cycles while the node is unchanged (schedcore.NodeMemo,
// keyed by the terms); the existing pods' scoring terms and their required
// anti-affinity terms are grouped by content, kept up to date node by node
// (termIndex in scoreindex.go), so a cycle matches the incoming pod once
// per distinct term; each required anti-affinity group also keeps its
// counts by domain, which PreFilter shares copy-on-write
// (DomainCounts.ShareKey) instead of adding up every topology value per
// cycle. ExplainFilter reads other nodes' topology values from the
// snapshot's label columns (Snapshot.LabelView), not their label maps.
//
// Args (*configv1.InterPodAffinityArgs): hardPodAffinityWeight (default 1,
// valid range [0, 100]) and ignorePreferredTermsOfExistingPods.
//
// Feature gates: InterPodAffinityHostnameFastPath (alpha in v1.37, off by
// default) evaluates kubernetes.io/hostname-scoped required terms against the
// node's own pods in Filter instead of through the cluster-wide counts, as
// kube does.
//
// Filter reasons:
//   - ErrReasonAffinityRulesNotMatch (UnschedulableAndUnresolvable)
//   - ErrReasonAntiAffinityRulesNotMatch (Unschedulable)
//   - ErrReasonExistingAntiAffinityRulesNotMatch (Unschedulable)
package interpodaffinity
