// Package nodename implements kube-scheduler v1.37's NodeName plugin: a pod
// with spec.nodeName set may only go to that node.
//
// Extension points:
//   - PreFilter: for a pod with spec.nodeName, returns
//     PreFilterResult{NodeNames: {nodeName}} so only that node is evaluated
//     (every other node is UnschedulableAndUnresolvable and so no preemption
//     target); otherwise nil.
//   - Filter: ErrReason, UnschedulableAndUnresolvable, when spec.nodeName is
//     set and differs from the node's name.
//   - EventsToRegister: Node Add, without a hint (always queues).
//
// Args: none.
package nodename
