// Package topologyaware is kube-scheduler v1.37's TopologyPlacementGenerator
// plugin (pkg/scheduler/framework/plugins/topologyaware): it divides the
// nodes a pod group may use into one placement per domain of the group's
// topology key, so that the pod-group cycle tries the group on one domain
// at a time. The default profile has it only with
// TopologyAwareWorkloadScheduling on (appended to multiPoint, as kube
// does).
//
// # Extension points
//   - PlacementGenerate: without spec.schedulingConstraints.topology, the
//     parent placement itself; else, with KEY its topology[0].key, one
//     placement per value of KEY among the parent's nodes (Name = the
//     value, Nodes in the parent's order; nodes without KEY are in none).
//     When members are already scheduled (assumed or bound, per the
//     cycle's snapshot), only their domain is offered.
//
// # Args
// None.
//
// # Reasons
// Errors, kube's words: "cannot determine domain for already scheduled
// pods: %w" wrapping "getting node for pod NS/NAME: %w", "no topology
// domain found for pod NS/NAME" or "more than 1 domain found for pod
// group: A, B". No placement at all (no node has the key) becomes the
// framework's "no feasible placements found".
//
// # Differences from kube
//   - Placements are ordered by domain name; kube's come from a Go map in
//     random order. The order shows only in which placement's status a
//     failed group's message quotes as the first (design §5.6).
package topologyaware
