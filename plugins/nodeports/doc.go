// Package nodeports implements kube-scheduler v1.37's NodePorts plugin: a
// pod's host ports must be free on the node.
//
// Extension points:
//   - PreFilter: collects the host ports (hostPort > 0) of the containers and
//     of the restartable (sidecar) init containers into the CycleState; Skip
//     when there are none (plain init containers' ports do not count, as
//     they do not run alongside the others).
//   - Filter: ErrReason, Unschedulable (preemption may free the port), when
//     a wanted port conflicts with NodeInfo.UsedPorts. Conflicts are per
//     protocol and port; host IP 0.0.0.0 conflicts with every IP.
//   - EventsToRegister: AssignedPod Delete (queues when the deleted pod was
//     on or nominated to a node and used one of the pod's ports) and Node Add
//     (no hint, always queues). Container ports are immutable, so pod updates
//     are not registered.
//
// Args: none.
package nodeports
