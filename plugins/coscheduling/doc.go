// Package coscheduling is the Coscheduling plugin: gang scheduling, a group
// of pods placed all together or not at all, after scheduler-plugins'
// Coscheduling (sigs.k8s.io/scheduler-plugins/pkg/coscheduling). It is not
// in the default profile; enable it like any plugin, replacing PrioritySort
// as the queue sort:
//
//	profiles:
//	- plugins:
//	    multiPoint:
//	      enabled: [{name: Coscheduling}]
//	      disabled: [{name: PrioritySort}]
//
// # Groups
//
// A pod joins a group in one of two ways (the native field wins if a pod
// has both):
//   - scheduler-plugins: the label scheduling.x-k8s.io/pod-group: NAME and a
//     PodGroup scheduling.x-k8s.io/v1alpha1 NAME in the pod's namespace
//     (spec.minMember, spec.minResources, spec.scheduleTimeoutSeconds);
//   - Kubernetes 1.37: pod.spec.schedulingGroup.podGroupName: NAME and a
//     scheduling.k8s.io/v1beta1 PodGroup whose schedulingPolicy.gang.minCount
//     is the group's minMember (a basic policy is no gang: its pods are
//     scheduled one by one). With GenericWorkload on this mapping is off:
//     kube schedules such pods as pod groups (GangScheduling, the pod-group
//     cycle), so a pod naming a native PodGroup is in no Coscheduling group,
//     whether or not it also has the label; two gang mechanisms on one pod
//     would diverge.
//
// PodGroups and the pods of a group come from Handle.Objects (the snapshot
// in dryrun, informers in run).
//
// # Extension points
//   - PreEnqueue: a gang's pods wait outside activeQ until minMember of them
//     exist; a native group's pods until their PodGroup exists.
//   - QueueSort: priority, then the group's creationTimestamp (the time the
//     first member was queued when it has none; a pod's own queue time
//     outside groups), then group, then pod: a group's pods of equal
//     priority are popped one after the other and two groups never
//     interleave. Give a group's pods one priority.
//   - PreFilter: rejects (UnschedulableAndUnresolvable) a pod whose group is
//     in backoff, has fewer than minMember pods, or whose minResources plus
//     minMember pods the nodes' free resources cannot hold.
//   - PostFilter: when no node fits a member, rejects the group's members
//     waiting at Permit so their reservations are released at once, unless
//     minMember are already placed or at most a tenth are missing; then
//     backs the group off for podGroupBackoffSeconds.
//   - Reserve/Unreserve: keep the reserved members per group (runtime
//     state); Unreserve of one member rejects its waiting siblings, so one
//     member rejected, timed out or failing to bind releases the group,
//     which is then not tried again until the cluster outside it differs
//     from what the member's Reserve saw. Unreserve reads that from the
//     cycle state, never the snapshot: in run it may be called on the
//     binding goroutine while the next cycle refreshes the snapshot.
//   - Permit: Wait (timeout scheduleTimeoutSeconds, else
//     permitWaitingTimeSeconds) until minMember members are bound or
//     reserved, then Allow all waiting siblings. The first to wait
//     activates its pending siblings.
//   - EventsToRegister: a pod of the same group added (pending or
//     assigned), its PodGroup added or updated.
//
// # Args (CoschedulingArgs)
//   - permitWaitingTimeSeconds: default 60.
//   - podGroupBackoffSeconds: default 0 (no backoff).
//
// # Reasons
// scheduler-plugins' strings: "pre-filter pod %v cannot find enough sibling
// pods, current pods number: %v, minMember of group: %v", "podGroup %v
// failed recently", "resource gap: %v" (the gap printed as "cpu: 2, pods:
// 1", not Go structs), "PodGroup not found", "PodGroup %v gets rejected due
// to Pod %v is unschedulable even after PostFilter", "optimistic rejection
// in PostFilter", "rejection in Unreserve"; kube GangScheduling's for
// PreEnqueue: "waiting for minCount pods from a gang to appear in
// scheduling queue", "waiting for pods's pod group %q to appear in
// scheduling queue", and its Wait message for native gangs. A timeout is
// the framework's "rejected due to timeout after waiting %v at plugin
// Coscheduling".
//
// # Differences from scheduler-plugins
//   - PostFilter of a pod in no group returns Unschedulable without
//     scheduler-plugins' "can not find pod group", so such pods keep kube's
//     FitError messages.
//   - Members rejected while waiting are not counted towards minMember, and
//     the first member to wait activates its siblings directly.
//   - Native groups use permitWaitingTimeSeconds (kube's GangScheduling
//     waits 5 minutes) and are scheduled pod by pod, not in kube 1.37's
//     whole-group cycles.
package coscheduling
