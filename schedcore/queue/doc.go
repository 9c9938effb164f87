// Package queue is kube-scheduler v1.37's scheduling queue
// (pkg/scheduler/backend/queue) for single pods: it implements
// schedcore.SchedulingQueue.
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
// Differences from kube: only single pods (no pod groups, workloads,
// opportunistic batching signatures, PreQueueingHints or async API calls);
// the unschedulable pool is iterated in arrival order and PreEnqueue
// plugins run in profile order (kube iterates maps, so any order is
// kube's); the 30-second flush runs on the queue's clock; TryPop first
// flushes finished backoffs, standing in for Run in synchronous drivers.
package queue
