package runtime

import (
	"context"
	"errors"

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
}

// Message is the attempt's status message (kube's FitError).
func (f *FailedAttempt) Message() string { return f.status.Message() }

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
func (s *Scheduler) keepFailure(status *schedcore.Status, nominating *schedcore.NominatingInfo, before int) {
	var fitErr *schedcore.FitError
	if !status.IsRejected() || !errors.As(status.AsError(), &fitErr) || schedcore.RejectedForGroup(status) {
		return
	}
	all := s.Algorithm.Snapshot.NumNodesInPlacement()
	if all == 0 {
		return
	}
	after := s.Algorithm.startIndex()
	s.lastFailure = &FailedAttempt{status: status, nominating: nominating, advance: ((after-before)%all + all) % all, all: all}
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
