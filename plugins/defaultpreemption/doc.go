// Package defaultpreemption implements kube-scheduler v1.37's
// DefaultPreemption plugin: when no node fits a pod, evict lower-priority
// pods from one node so that it fits there in a later cycle.
//
// Extension points: PostFilter. (kube's PreEnqueue, which holds a pod while
// its asynchronous preemption runs, has nothing to hold here: evictions are
// carried out synchronously through the handle's Evictor.)
//
// Args (DefaultPreemptionArgs): minCandidateNodesPercentage (default 10,
// [0, 100]) and minCandidateNodesAbsolute (default 100, >= 0), not both 0:
// the dry run stops once max(percentage of the potential nodes, absolute)
// candidates (at most all of them) are found, one of them violating no PDB.
//
// The algorithm is kube's:
//  1. Eligibility: not with preemptionPolicy Never ("not eligible due to
//     preemptionPolicy=Never."), nor while a lower-priority victim of an
//     earlier preemption is terminating on the pod's nominated node ("not
//     eligible due to a terminating pod on the nominated node.").
//  2. Potential nodes: those whose filter status is Unschedulable;
//     UnschedulableAndUnresolvable ones are skipped.
//  3. SelectVictimsOnNode on each, from an offset: remove every pod of lower
//     priority (PreFilter RemovePod extensions keep the cycle state right),
//     check that the pod fits (filters with nominated pods), then reprieve
//     victims, PDB-violating ones first, each group from the most important
//     (priority, then earliest start). A node without lower-priority pods is
//     "No preemption victims found for incoming pod".
//  4. The candidate: fewest PDB violations, lowest priority of the most
//     important victim, smallest sum of priorities, fewest victims, latest
//     start time of the highest-priority victims, then the first.
//  5. Actuation: victims are evicted (PreemptionHooks.Evictor), Normal event
//     "Preempted" "Preempted by pod <uid> on node <node>", lower-priority pods
//     nominated to the node lose their nomination, and the node is nominated
//     for the pod (ModeOverride).
//
// Messages, all prefixed "preemption: " as kube: on success "found a
// potential placement for pod on node N, preempting K victims"; without a
// candidate, a FitError over the potential nodes' statuses, the others
// counted as "Preemption is not helpful for scheduling", e.g.
// "preemption: 0/5 nodes are available: 2 No preemption victims found for
// incoming pod, 3 Preemption is not helpful for scheduling.".
//
// Deterministic where kube is random: the scan offset comes from
// PreemptionHooks.Offset (kube: rand.Int31n; the dry-run: 0, or seeded with
// --seed), parallel results are taken in scan order, and a tie after every
// rule goes to the first candidate in scan order (kube: map order).
// Victims are single pods (the GenericWorkload pod-group victims of kube,
// off by default, are not modelled); extenders are not supported.
package defaultpreemption
