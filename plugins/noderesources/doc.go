// Package noderesources holds kube-scheduler v1.37.2's NodeResourcesFit and
// NodeResourcesBalancedAllocation plugins.
//
// # NodeResourcesFit
//
// Extension points: PreFilter, Filter, PreScore, Score, EnqueueExtensions,
// PlacementScore.
//
//   - PreFilter computes the pod's requests once (schedcore.ComputePodRequests:
//     spec only, pod-level resources under PodLevelResources, init containers
//     by max, restartable sidecars, overhead).
//   - Filter compares them with the node's allocatable minus what its pods
//     request (status resources of resized pods included) and reports every
//     missing resource, in kube's order: ErrReasonTooManyPods, then
//     ErrReasonInsufficientCPU, ErrReasonInsufficientMemory,
//     ErrReasonInsufficientEphemeralStorage, then "Insufficient <name>" for
//     scalar resources, by name (kube walks a map there, in random order).
//     The code is UnschedulableAndUnresolvable when a request exceeds the
//     allocatable by itself, Unschedulable otherwise. Fits and
//     InsufficientResource expose the amounts for explain.
//   - Score uses the args' scoringStrategy: LeastAllocated (default, cpu:1
//     memory:1), MostAllocated or RequestedToCapacityRatio (a broken-linear
//     shape over utilization, scores 0..10 scaled by 10). cpu and memory
//     read the node's NonZeroRequested and the pod's requests with the
//     non-zero defaults (100m, 200Mi per container that sets none); as in
//     kube v1.37 the pod's scoring requests ignore pod-level resources. A
//     scalar resource the pod does not request, or the node lacks, is left
//     out. No NormalizeScore.
//   - DRA-backed extended resources (DRAExtendedResource, GA): a scored
//     resource the pod requests, of which a node lists no allocatable and
//     that a DeviceClass backs (extendedResourceName or the implicit
//     deviceclass.resource.kubernetes.io/<class>), scores with the node's
//     devices of that class (its ResourceSlices, the class's CEL selectors)
//     as the allocatable and those allocated claims hold as the allocated
//     amount, counted once in PreScore for every node (dra.go). Filter
//     leaves such a resource to DynamicResources on nodes without it.
//   - Queueing hints: an assigned pod deleted (skipped when it was neither
//     bound nor nominated), a node added or its allocatable updated (queued
//     when the pod fits it and, for an update, a requested resource or the
//     pod count grew), an assigned pod scaled down (queued when a resource the
//     pod requests shrank) and the pod itself scaled down.
//   - PlacementScore (pod groups' placements; the scorer exists only with
//     TopologyAwareWorkloadScheduling on, as kube builds it, and the
//     framework lays the plugin out at the point from multiPoint with its
//     weight either way): MostAllocated over the args' resources, whatever
//     the node strategy, of the placement's nodes taken together: the
//     proposed members' requests plus each node's allocated amounts over
//     the sum of their allocatable. No normalization. As kube passes the
//     running sum as the requests, an extended resource counts from the
//     first node where the members' requests plus the allocated amounts of
//     the nodes before are non-zero. Without the gate it returns Error
//     ErrReasonNoPlacementScorer (kube's would never be called).
//
// Args (NodeResourcesFitArgs, v1 defaults then kube's validation):
// ignoredResources and ignoredResourceGroups (extended resources the Filter
// skips, by name or by the prefix before '/'), scoringStrategy {type,
// resources [{name, weight in (0,100]}], requestedToCapacityRatio.shape}.
//
// # NodeResourcesBalancedAllocation
//
// Extension points: PreScore, Score.
//
//   - PreScore computes the pod's plain requests of the args' resources
//     (default cpu and memory) and returns Skip when they are all zero.
//   - Score is kube v1.37's before/after balance: b = (1 - std of
//     requested/allocatable fractions) * 100, with and without the pod;
//     score = 50 + (50 + b_with - b_without)/2. It reads the node's
//     Requested (not NonZeroRequested); DRA-backed extended resources count
//     devices as for NodeResourcesFit. No NormalizeScore.
//
// Args (NodeResourcesBalancedAllocationArgs): resources, unique names,
// weight exactly 1 (0 defaults to 1).
//
// Not ported: the alpha InPlacePodVerticalScalingSchedulerPreemption gate
// (off by default), and SignPod (opportunistic batching).
package noderesources
