package runtime

import (
	"context"
	"errors"
	"slices"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// FailedAttempt is a single pod's scheduling cycle that found no node (a
// FitError, after PostFilter), kept so that a driver that knows nothing
// the cycle read has changed since can repeat it without running it
// (RepeatFailure): the replay's retries of a pod that does not fit, which
// kube's leftover flush makes every five minutes whether or not anything
// changed. A cycle is a function of the cluster (nodes, pods, nominations,
// objects), the pod, the start node index and the seeded draws: with all
// of them as they were, it fails again with the same status.
type FailedAttempt struct {
	status     *schedcore.Status
	nominating *schedcore.NominatingInfo
	// advance is how far the cycle moved the start node index, of all
	// nodes (a PreFilter that narrows the nodes moves it by theirs).
	advance, all int
	// podBlind: no change to the other pods alters the failure (see
	// PodBlind).
	podBlind bool
}

// Message is the attempt's status message (kube's FitError).
func (f *FailedAttempt) Message() string { return f.status.Message() }

// PodBlind reports whether the attempt fails again the same way after any
// change to the cluster's other pods (arrivals, departures, placements,
// nominations), as long as the nodes and the other objects are as they
// were: every node was rejected, UnschedulableAndUnresolvable, by a filter
// blind to the other pods with only such filters before it, and every
// PreFilter and PostFilter plugin of the profile is blind to them for the
// pod (schedcore.PodBlindPlugin). Such a cycle reads no pod but its own:
// not the nodes' pods (no filter that reads them runs on any node), not
// the nominated ones, and preemption, with no Unschedulable node, looks
// at no victim and draws no offset.
func (f *FailedAttempt) PodBlind() bool { return f.podBlind }

// podBlind reports whether fe, pod's failed cycle in fw, is one no change
// to the other pods can alter (FailedAttempt.PodBlind).
func (fw *Framework) podBlind(pod *v1.Pod, fe *schedcore.FitError) bool {
	d := &fe.Diagnosis
	if pod.Status.NominatedNodeName != "" || d.PreFilterMsg != "" || d.PendingPlugins.Len() > 0 || d.NodeToStatus == nil {
		return false
	}
	for _, pl := range fw.preFilter {
		if !isBlind(pl, pod, schedcore.BlindPreFilter) {
			return false
		}
	}
	for _, pl := range fw.postFilter {
		if !isBlind(pl, pod, schedcore.BlindPostFilter) {
			return false
		}
	}
	// The filters at the head of the order that are blind: a node's
	// status names the first filter that rejected it, so those before it
	// passed it.
	var head []string
	for _, pl := range fw.filter {
		if !isBlind(pl, pod, schedcore.BlindFilter) {
			break
		}
		head = append(head, pl.Name())
	}
	ok := len(head) > 0
	var last *schedcore.Status
	d.NodeToStatus.ForEachExplicitNode(func(_ string, s *schedcore.Status) {
		if !ok || s == last {
			return
		}
		last = s
		ok = s.Code() == schedcore.UnschedulableAndUnresolvable && slices.Contains(head, s.Plugin())
	})
	// The nodes without a status of their own are those a PreFilterResult
	// (of a blind PreFilter) left out.
	return ok && (d.NodeToStatus.Len() >= fe.NumAllNodes || len(d.LeftOutBy) > 0)
}

func isBlind(pl schedcore.Plugin, pod *v1.Pod, at schedcore.PodBlindness) bool {
	b, ok := pl.(schedcore.PodBlindPlugin)
	return ok && b.PodBlind(pod)&at != 0
}

// TakeFailure returns the last cycle ScheduleOnePod ran, if it was a
// single pod's and failed with a FitError not caused by its group, and
// forgets it; nil otherwise. Cycles are kept only while KeepFailures is
// set.
func (s *Scheduler) TakeFailure() *FailedAttempt {
	f := s.lastFailure
	s.lastFailure = nil
	return f
}

// keepFailure keeps a failed cycle for TakeFailure. before is the start
// node index the cycle began with.
func (s *Scheduler) keepFailure(fw *Framework, pod *v1.Pod, status *schedcore.Status, nominating *schedcore.NominatingInfo, before int) {
	var fitErr *schedcore.FitError
	if !status.IsRejected() || !errors.As(status.AsError(), &fitErr) || schedcore.RejectedForGroup(status) {
		return
	}
	all := s.Algorithm.Snapshot.NumNodesInPlacement()
	if all == 0 {
		return
	}
	after := s.Algorithm.startIndex()
	s.lastFailure = &FailedAttempt{status: status, nominating: nominating, advance: ((after-before)%all + all) % all, all: all,
		podBlind: fw.podBlind(pod, fitErr)}
}

// RepeatFailure does for qpi what ScheduleOnePod does when its cycle fails
// as f did, without running the cycle: the plugin metrics' sampling draw,
// the start node index moved as far, and kube's failure handling (the pod
// back in the queue with the same rejecting plugins, the nomination as the
// cycle left it, the Failed hook with the same status). The caller must
// know that the cycle would fail as f did: the cluster, the nominations,
// the pod and the random sources it reads are as they were then.
func (s *Scheduler) RepeatFailure(ctx context.Context, qpi *schedcore.QueuedPodInfo, f *FailedAttempt) {
	fw, ok := s.Profiles[qpi.Pod.Spec.SchedulerName]
	if !ok {
		s.Queue.Done(qpi.Pod.UID)
		return
	}
	start := s.Clock.Now()
	s.randMu.Lock()
	_ = s.Rand.Intn(100)
	s.randMu.Unlock()
	s.Algorithm.advance(true, f.advance, f.all)
	s.handleFailure(ctx, fw, qpi, f.status, f.nominating, start)
	if s.SyncBinding {
		s.ResolveWaiting(ctx)
	}
	if s.KeepFailures {
		s.lastFailure = f
	}
}

// startIndex is where the next cycle's filtering starts.
func (a *Algorithm) startIndex() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.nextStartNodeIndex
}
