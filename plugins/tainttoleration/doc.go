// Package tainttoleration implements kube-scheduler v1.37's TaintToleration
// plugin: a pod may only land on a node whose NoSchedule and NoExecute taints
// it tolerates, and it prefers nodes with fewer PreferNoSchedule taints it
// does not tolerate.
//
// Extension points:
//   - PreFilter: nothing to precompute; always succeeds (kube skips here only
//     for pods whose resize is deferred, behind the alpha gate
//     InPlacePodVerticalScalingSchedulerPreemption, which is off).
//   - Filter: the first NoSchedule/NoExecute taint no toleration tolerates
//     rejects the node with UnschedulableAndUnresolvable and
//     ErrReasonUntoleratedTaint. The reason does not name the taint: since
//     v1.32 kube-scheduler logs it at V(4) only.
//   - FilterKey (schedcore.NodeLocalFilter): the pod's tolerations; the
//     framework remembers the verdicts per node, unless V(4) logging is on.
//   - PreScore: keeps the tolerations whose effect is PreferNoSchedule or
//     empty (empty matches every effect).
//   - Score: the number of PreferNoSchedule taints those tolerations do not
//     tolerate.
//   - NormalizeScore: helper.DefaultNormalizeScore reversed, so the node with
//     the most intolerable taints scores 0 and nodes with none score 100.
//   - EventsToRegister: Node Add|UpdateNodeTaint (queues when the node goes
//     from untolerated to tolerated) and TargetPod UpdatePodToleration
//     (always queues).
//
// Args: none.
//
// Toleration operators Lt and Gt (alpha gate TaintTolerationComparisonOperators,
// off by default in v1.37) never match, as in kube with the gate off.
package tainttoleration
