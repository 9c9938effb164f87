// Package nodeunschedulable implements kube-scheduler v1.37's
// NodeUnschedulable plugin: a cordoned node (spec.unschedulable) takes only
// pods that tolerate the node.kubernetes.io/unschedulable:NoSchedule taint.
//
// Extension points:
//   - PreFilter: nothing to precompute; always succeeds (kube skips here only
//     for pods whose resize is deferred, behind an alpha gate that is off).
//   - Filter: ErrReasonUnschedulable, UnschedulableAndUnresolvable, for a
//     node with spec.unschedulable the pod does not tolerate.
//   - FilterKey (schedcore.NodeLocalFilter): whether the pod tolerates the
//     unschedulable taint; the framework remembers the verdicts per node.
//   - EventsToRegister: Node Add|UpdateNodeTaint (queues a node added
//     schedulable or turned schedulable) and TargetPod UpdatePodToleration
//     (queues when the pod now tolerates the unschedulable taint).
//
// Args: none.
package nodeunschedulable
