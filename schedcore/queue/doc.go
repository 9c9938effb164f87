// Package queue is kube-scheduler v1.37's scheduling queue
// (pkg/scheduler/backend/queue): it implements schedcore.SchedulingQueue.
//
//	        Add / Update ──► PreEnqueue ──gated──► unschedulable pool (gated)
//	                            │ ok                   ▲      │ event of the gating plugin,
//	                            ▼                      │      │ Update, flush
//	  Pop ◄── activeQ (QueueSort Less) ◄── backoff done ── backoffQ (by expiry)
//	   │            ▲ queueImmediately          ▲ queueAfterBackoff
//	   ▼            │                           │
//	in flight ──AddUnschedulableIfNotPresent──► hints over the events received
//	                                            in flight ──queueSkip──► unschedulable pool
//
// Pods rejected in an attempt come back through AddUnschedulableIfNotPresent.
// The events received while they were in flight (MoveAllToActiveOrBackoffQueue,
// Update, Activate) are replayed through the queueing hints of the pod's
// rejector plugins (UnschedulablePlugins ∪ PendingPlugins): a Queue from a
// Pending plugin sends the pod to activeQ at once, from an Unschedulable
// plugin to backoffQ (or activeQ if its backoff already ended); no Queue
// leaves it in the unschedulable pool until a later event, its own update,
// or the 5-minute flush. Pods with no rejectors (errors) and wildcard events
// go after backoff. The backoff is initial << (failures-1), capped at max,
// counted from the last attempt and, with SchedulerPopFromBackoffQ (on, as
// in v1.37), aligned to whole seconds; Pop then also takes from backoffQ
// when activeQ is empty.
//
// An event visits only the pods of the pool it could move: the pool files
// each pod under the rejector plugins that registered hints in its profile
// (requeue_index.go), and the event takes, in the pool's order, the pods
// filed under the plugins registered for it plus those with no rejectors;
// kube's walk over the others ends in QueueSkip without calling anything.
// Wildcard events, and loggers at V(5) (kube logs each skipped pod), walk
// the whole pool.
//
// Pod groups (GenericWorkload on; groups.go): a member of an observed
// PodGroup is queued inside its group's entity, a *QueuedPodInfo whose
// Group is set (its queueing fields are the group's, its Pod a stand-in),
// keyed podgroup/NS/NAME in every sub-queue. Members whose PodGroup is not
// observed wait in incompletePodGroupPods, members arriving while their
// group is in flight in pendingPodGroupPods; AddPodGroup moves the first
// in, DeletePodGroup moves members back. PreEnqueue runs for every member
// (any gated member gates the group), a group is worth requeuing on its
// strongest member hint, Pop moves every member in flight, and the members
// a pod-group cycle hands back return with the group through
// AddAttemptedPodGroupIfNeeded (backoff cap max × √members). Pop returns
// the entity; the caller tells a group by Group != nil.
//
// Differences from kube: no CompositePodGroups (every PodGroup is a
// root), workloads, opportunistic batching signatures, PreQueueingHints,
// deferred-resize pods or async API calls; a group entity sits in the
// unschedulable pool's any-event list (every event visits it) rather than
// under its members' rejectors; members leave incompletePodGroupPods and
// pendingPodGroupPods in member order (kube: map order, which only decides
// whose timestamp a new group takes); the nominator's bare pods do not find
// queued members (they come back bare, as in-flight pods do); the pending
// gauges (Metrics.PendingPods) count entities, the incoming counter pods; WithPodGroups(false)
// keeps members single pods (the engine no longer passes it: its loop runs
// the pod-group cycle);
// the unschedulable pool is iterated in arrival order and PreEnqueue
// plugins run in profile order (kube iterates maps, so any order is
// kube's); the 30-second flush runs on the queue's clock; TryPop first
// flushes finished backoffs, standing in for Run in synchronous drivers.
package queue
