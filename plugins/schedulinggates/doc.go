// Package schedulinggates implements kube-scheduler v1.37's SchedulingGates
// plugin: a pod with spec.schedulingGates stays out of activeQ until its
// gates are removed.
//
// Extension points:
//   - PreEnqueue: UnschedulableAndUnresolvable with
//     "waiting for scheduling gates: [a b]" (the gate names, in order, as
//     Go's %v prints a string slice) while any gate remains.
//   - EventsToRegister: TargetPod UpdatePodSchedulingGatesEliminated (the
//     hint always queues).
//
// Args: none.
package schedulinggates
