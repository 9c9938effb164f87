// Package queuesort implements kube-scheduler v1.37's PrioritySort plugin,
// the default QueueSort: activeQ pops the pod with the highest
// spec.priority first (unset counts as 0) and, among equal priorities, the
// one queued earliest (QueuedPodInfo.Timestamp).
//
// Extension points: QueueSort. Args: none.
package queuesort
