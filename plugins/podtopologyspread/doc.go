// Package podtopologyspread is kube-scheduler v1.37.2's PodTopologySpread
// plugin: it enforces a pod's hard topology spread constraints
// (whenUnsatisfiable: DoNotSchedule) and scores nodes by its soft ones
// (ScheduleAnyway).
//
// Constraints. A pod's own constraints are used when it has any; otherwise
// the plugin's default constraints apply, with the pod's default selector
// (plugins/helper.DefaultSelector: the Services selecting the pod and the
// ReplicationController, ReplicaSet or StatefulSet controlling it). A pod
// whose default selector is empty gets no default constraints.
// matchLabelKeys are ANDed into the selector with the pod's values
// (MatchLabelKeysInPodTopologySpread); minDomains defaults to 1,
// nodeAffinityPolicy to Honor and nodeTaintsPolicy to Ignore.
//
// Which nodes count. A node counts for a constraint when it has every
// constraint's topology key, matches the pod's nodeSelector and required
// node affinity if nodeAffinityPolicy is Honor, and has no
// NoSchedule/NoExecute taint the pod does not tolerate if nodeTaintsPolicy
// is Honor. Matching pods are those of the pod's namespace that the
// selector selects, terminating pods excluded.
//
// The counts per domain are a schedcore.DomainCounts with one key per
// constraint, kept across cycles in schedcore.TotalsCache (totals.go).
//
// Extension points:
//   - PreFilter (with AddPod/RemovePod): counts matching pods per hard
//     constraint and domain over all nodes, in parallel, and keeps the two
//     smallest domains. Skip when there are no hard constraints. A selector
//     that does not parse is an Error.
//   - Filter: per constraint, the node must have the topology key, and the
//     matching pods in its domain, plus 1 if the pod matches itself, minus
//     the global minimum (0 when there are fewer domains than minDomains)
//     must be at most maxSkew.
//   - PreScore/Score/NormalizeScore: per soft constraint, the matching pods
//     in the domains of the feasible nodes (over all nodes; hostname
//     constraints are counted on the node). Feasible nodes missing a
//     topology key are ignored (score 0) unless the constraints are the
//     System defaults, which let nodes without a zone label still spread by
//     hostname. A node scores round(Σ count × log(domains+2) + maxSkew − 1);
//     normalization gives 100 × (max + min − score) / max (100 everywhere
//     when max is 0). Skip without soft constraints or without nodes.
//   - FilterExplainer: per violated constraint, the skew the pod would
//     cause, or the missing topology key.
//   - EnqueueExtensions: AssignedPod Add|UpdatePodLabel|Delete, TargetPod
//     UpdatePodToleration|UpdatePodLabel and Node
//     Add|Delete|UpdateNodeLabel|UpdateNodeTaint, with kube's hints.
//
// Args: kube's PodTopologySpreadArgs (args.go). Feature gates: see the
// PodTopologySpread type. Not ported: the alpha
// InPlacePodVerticalScalingSchedulerPreemption gate (a pod whose resize is
// Deferred skips the plugin), as in NodeResourcesFit.
//
// Filter reasons:
//   - ErrReasonNodeLabelNotMatch (UnschedulableAndUnresolvable)
//   - ErrReasonConstraintsNotMatch (Unschedulable)
package podtopologyspread
