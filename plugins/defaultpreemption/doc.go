// Package defaultpreemption implements kube-scheduler v1.37's
// DefaultPreemption plugin: when no node fits a pod, evict lower-priority
// pods from one node so that it fits there in a later cycle.
//
// Extension points: PostFilter, PodGroupPostFilter. (kube's PreEnqueue,
// which holds a pod or a pod group while its asynchronous preemption runs,
// has nothing to hold here: evictions are carried out synchronously
// through the handle's Evictor.)
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
// Victims are single pods with GenericWorkload off (its default); with it
// on they are kube's victim units (victims.go): a pod of a PodGroup with
// spec.disruptionMode.all goes with every scheduled pod of its group, on any
// node, at the PodGroup's spec.priority (SelectVictimsOnNode then runs over
// units, selectVictimUnitsOnNode). Extenders are not supported.
//
// PodGroupPostFilter (GenericWorkload; podgroup.go) is kube's pod-group
// preemption: in a mutation session of the snapshot, every unit of lower
// priority than the PodGroup's is taken off the cluster, the group
// algorithm runs once there, then units are put back, PDB-violating ones
// first, each part from the most important, while every placed member
// still passes its filters; the rest are evicted ("Preempted by podgroup
// <uid> on node cluster") and each placed member is nominated to its node.
// Messages, prefixed "pod group preemption: ": "found a placement for
// podgroup, preempting K victims", "No preemption victims found for
// incoming preemptor", "not eligible due to preemptionPolicy=Never." (any
// member Never: PodGroupPreemptionPolicy is off), "ongoing preemption on
// nominated nodes", or the group algorithm's status on the emptied cluster.
package defaultpreemption
