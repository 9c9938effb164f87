// Package gangscheduling is kube-scheduler v1.37's GangScheduling plugin
// (pkg/scheduler/framework/plugins/gangscheduling): all-or-nothing
// scheduling of the pods of a scheduling.k8s.io/v1beta1 PodGroup with a
// gang policy. A pod is a member when it names its group in
// spec.schedulingGroup.podGroupName. The default profile has it only with
// GenericWorkload on (appended to multiPoint, as kube does); its
// CompositePodGroup parts (alpha, off) are not modelled.
//
// # Extension points
//   - PreEnqueue: a member waits outside activeQ until its PodGroup exists
//     (read from Handle.PodGroupManager, the cache) and, for a gang, until
//     the cache knows minCount members (AllPodsCount). A basic group
//     (spec.schedulingPolicy.basic) is never gated.
//   - Permit: a gang's member waits (timeout 5 minutes) while fewer than
//     minCount members are scheduled (assumed or bound, as the cache
//     counts them), and activates the unscheduled members; the member that
//     reaches minCount allows every assumed member waiting at Permit.
//   - PlacementFeasible (with GenericWorkload the framework wires it; no
//     config lists it): after each member tried in a placement of a
//     pod-group cycle, Unschedulable when the remaining and scheduled
//     members can no longer reach minCount (1 for a basic group), Wait
//     while fewer than minCount are scheduled, else Success.
//   - EventsToRegister: a member of the same group added (pending or
//     bound), its PodGroup added, its PodGroup updated with a gang minCount
//     decreased (kube's hints, word for word in effect).
//
// # Args
// None.
//
// # Reasons
// kube's strings: ErrReasonPodGroupNotFound ("waiting for pods's pod group
// %q to appear in scheduling queue") and ErrReasonQuorumNotMet ("waiting
// for minCount pods from a gang to appear in scheduling queue") at
// PreEnqueue, both UnschedulableAndUnresolvable; ReasonWaitingForQuorum
// ("waiting for minCount pods from a gang to be scheduled") at Permit;
// ReasonMinCountUnsatisfiable ("minCount (%d) cannot be satisfied: %d
// scheduled, %d remaining") and ReasonMinCountNotYetSatisfied ("minCount
// (%d) is not yet satisfied: %d scheduled, %d remaining") at
// PlacementFeasible.
//
// # Differences from kube
//   - Without a PodGroupManager on the handle (a driver that keeps no pod
//     groups) PreEnqueue says the PodGroup is missing; kube always has one.
//   - A PodGroupInfo without its PodGroup object counts as a basic group
//     (minCount 1) in PlacementFeasible; kube never calls it so.
package gangscheduling
