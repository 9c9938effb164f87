// Package dynamicresources implements kube-scheduler v1.37.2's
// DynamicResources plugin (Dynamic Resource Allocation, resource.k8s.io/v1;
// GA and locked on; score weight 2, just before DefaultPreemption in the
// default profile). Devices are allocated by k8s.io/dynamic-resource-
// allocation v0.37.2's structured allocator with its CEL, as kube does;
// the DRA objects come from Handle.DRA (schedcore.DRAManager) and the API
// writes go to Handle.ClaimWriter.
//
// Extension points:
//   - PreEnqueue: holds a pod until each of its claims exists (and a
//     template claim is owned by it): `pod "ns/name": ResourceClaim not
//     created yet`, `could not find ResourceClaim "ns/name"`.
//   - PreFilter: gathers the claims (and the special claim of DRA-backed
//     extended resources); `resource claim ns/name is in the process of
//     being allocated`, `request <req>: device class <class> does not
//     exist`; prepares the allocator over the slices (DeviceTaintRules
//     applied) and the allocated devices, in flight ones included (the
//     last one again while nothing it keeps changed: reuse.go).
//   - Filter: ErrReasonNotAvailable for an allocated claim whose node
//     selector excludes the node (or whose binding failed or timed out),
//     ErrReasonCannotAllocate when the node's devices cannot satisfy the
//     unallocated claims; allocator errors (a CEL expression that does not
//     compile) are Errors. The allocator's answer per node is memoized by
//     exactly what it reads (memo.go): pools the claims cannot select from
//     count by content only (relevance.go), and an answer found on one
//     node serves a node whose pools have the same signatures, under its
//     own names (share.go); an answer also serves nodes that differ only
//     in complete, valid pools the claims cannot select from (relevance.go),
//     an answer stays while devices are only taken in ways that cannot
//     change it (monotone.go), and serves, by the same rule, a node with
//     the same devices and more of them taken (taken.go).
//   - PostFilter: deallocates an unavailable claim reserved for nobody
//     else (MsgDeallocated), or deletes a stale special claim (MsgDeleted).
//   - PodGroupPostFilter (GenericWorkload): Unschedulable with
//     MsgPodGroupDeallocated, before DefaultPreemption's; no reason for a
//     group with a topology constraint (TopologyAwareWorkloadScheduling).
//     kube's deallocation of members' claims is not modelled.
//   - Score / NormalizeScore: 8 - index of each chosen firstAvailable
//     subrequest, normalized to 100.
//   - Reserve / Unreserve: the allocation in flight until PreBind writes
//     it; Unreserve drops it and the pod's reservations.
//   - PreBind (with PreBindPreFlight): writes the finalizer, the
//     allocation and the pod in status.reservedFor (conflicts retried with
//     a fresh claim), creates the special claim of extended resources and
//     patches the pod's status, then waits for binding conditions.
//   - Prepare (explain's load): builds the allocated state, the
//     allocator, the memo's slice index, pool signatures and node pools,
//     and the explanations' slice index, as the first cycle would.
//   - ExplainFilter / FilterShortfall: why the node's devices do not do;
//     the shortfall is computed once per node signature for the claims
//     (explain_share.go).
//   - EventsToRegister: Node Add/UpdateNodeLabel/UpdateNodeAllocatable;
//     ResourceClaim Add/Update/Delete (hint: a deallocation, or a change of
//     one of the pod's claims); the pod's generated claims; DeviceClass
//     Add/Update; ResourceSlice Add/Update.
//
// Every rejection is UnschedulableAndUnresolvable. Args:
// DynamicResourcesArgs (filterTimeout 10s, bindingTimeout 10m).
package dynamicresources
