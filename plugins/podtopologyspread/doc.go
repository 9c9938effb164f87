// Package podtopologyspread is kube-scheduler v1.37.2's PodTopologySpread
// plugin: it enforces a pod's hard topology spread constraints
// (whenUnsatisfiable: DoNotSchedule) and scores nodes by its soft ones
// (ScheduleAnyway).
//
// A pod's own constraints are used when it has any, else the default
// constraints with the pod's default selector (its Services,
// ReplicationController, ReplicaSet or StatefulSet; none when empty).
// matchLabelKeys are ANDed into the selector; minDomains defaults to 1,
// nodeAffinityPolicy to Honor, nodeTaintsPolicy to Ignore. A node counts
// for a constraint when it has every constraint's topology key and passes
// the honoured inclusion policies; matching pods are the non-terminating
// pods of the pod's namespace the selector selects. Counts are kept per
// domain in a schedcore.DomainCounts.
//
// Extension points:
//   - PreFilter (with AddPod/RemovePod): matching pods per hard constraint
//     and domain over all nodes, and the two smallest domains. Skip without
//     hard constraints; a selector that does not parse is an Error.
//   - Filter: the node must have each topology key, and its domain's count
//     + 1 if the pod matches itself − the global minimum (0 with fewer
//     domains than minDomains) must be at most maxSkew.
//   - PreScore/Score/NormalizeScore: per soft constraint, the matching pods
//     in the feasible nodes' domains (on the node, for hostname); nodes
//     missing a key score 0 unless the constraints are the System defaults.
//     Score is round(Σ count × log(domains+2) + maxSkew − 1), normalized to
//     100 × (max + min − score) / max.
//   - FilterExplainer: the skew per violated constraint.
//   - EnqueueExtensions: AssignedPod Add|UpdatePodLabel|Delete, TargetPod
//     UpdatePodToleration|UpdatePodLabel, Node
//     Add|Delete|UpdateNodeLabel|UpdateNodeTaint, with kube's hints.
//
// Args (*configv1.PodTopologySpreadArgs): defaultingType System (hostname
// maxSkew 3 and zone maxSkew 5, ScheduleAnyway) or List
// (defaultConstraints, without labelSelector nor repeated {topologyKey,
// whenUnsatisfiable}). Feature gates at v1.37.2's defaults.
//
// Filter reasons: ErrReasonNodeLabelNotMatch (UnschedulableAndUnresolvable),
// ErrReasonConstraintsNotMatch (Unschedulable).
package podtopologyspread
