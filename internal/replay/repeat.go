package replay

import (
	"k8s.io/apimachinery/pkg/types"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// Retries whose answer is known. kube's leftover flush retries a pod that
// waited five minutes in the unschedulable pool whether or not anything
// changed; a pod that never fits is retried every five minutes for as long
// as the trace lasts, each retry filtering every node: with the pods that
// never fit growing with the cluster, that is quadratic in the nodes times
// the trace's span. A scheduling cycle is a function of what it reads: the
// cluster (nodes, pods, nominations, objects), the pod, the start node
// index and the seeded draws. When none of them has changed since the
// pod's last attempt failed, the retry fails again with the same status,
// and the replay repeats that failure (schedruntime.RepeatFailure) instead
// of running the cycle: the attempt is counted, recorded and requeued as
// kube's would be, the start index and the draws move as they would have.
//
// What "nothing changed" means here: the cluster's change count
// (engine.Offline.Changes: every put and delete of a pod, every node,
// object, claim or PodGroup change) is the one the failed attempt started
// and ended with, no pod waits at Permit (assumed pods are not in the
// count) then or now, the pod is the same object, and the attempt changed
// nothing itself (a cycle that nominated, evicted or cleared a nomination
// moved the count). Pod groups are always run: their cycles and gangs
// hold state of their own.

// kept is a pod's last failed attempt, as long as it may be repeated.
type kept struct {
	// changes is the cluster's change count during the attempt.
	changes uint64
	// pod is the cluster's object for the pod after the attempt.
	pod     *v1.Pod
	attempt *schedruntime.FailedAttempt
	// offsets are the preemption scan offsets the attempt drew.
	offsets []int32
}

// repeats is the replay's memory of failed attempts.
type repeats struct {
	on   bool
	kept map[types.UID]kept
	// done counts the attempts repeated (not run).
	done int
}

// startRepeats turns repeating on when the run allows it.
func (r *run) startRepeats() {
	r.rep.kept = map[types.UID]kept{}
	r.rep.on = !r.o.noRepeat && !r.gangs && !r.o.Features.GenericWorkload
	if r.rep.on {
		r.c.Scheduler.KeepFailures = true
		r.c.RecordOffsets()
	}
}

// attempt runs qpi's scheduling cycle, or repeats its last failure when
// nothing it reads has changed since.
func (r *run) attempt(qpi *schedcore.QueuedPodInfo) {
	s := r.c.Scheduler
	if !r.rep.on || qpi.Group != nil {
		s.ScheduleOnePod(r.ctx, qpi)
		return
	}
	uid := qpi.Pod.UID
	before := r.c.Changes()
	if k, ok := r.rep.kept[uid]; ok {
		if k.changes == before && k.pod == qpi.Pod && s.NumParked() == 0 && r.stored(qpi.Pod) {
			r.c.Redraw(k.offsets)
			s.RepeatFailure(r.ctx, qpi, k.attempt)
			r.c.TakeOffsets()
			s.TakeFailure()
			r.rep.done++
			return
		}
		delete(r.rep.kept, uid)
	}
	r.c.TakeOffsets()
	s.ScheduleOnePod(r.ctx, qpi)
	f := s.TakeFailure()
	offsets := r.c.TakeOffsets()
	if f == nil || r.c.Changes() != before || s.NumParked() > 0 {
		return
	}
	cur, ok := r.c.Pod(qpi.Pod.Namespace, qpi.Pod.Name)
	if !ok || cur.UID != uid || cur.Spec.NodeName != "" {
		return
	}
	r.rep.kept[uid] = kept{changes: before, pod: cur, attempt: f, offsets: offsets}
}

// stored reports whether p is the cluster's object for its pod.
func (r *run) stored(p *v1.Pod) bool {
	cur, ok := r.c.Pod(p.Namespace, p.Name)
	return ok && cur == p
}
