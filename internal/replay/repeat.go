package replay

import (
	"crypto/sha256"
	"encoding/json"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// count) then or now, and the attempt changed nothing itself (a cycle that
// nominated, evicted or cleared a nomination moved the count). "The pod"
// is what a cycle reads of it (signature): the replicas of a ReplicaSet
// are one pod to a cycle, so the attempt of one answers for the others.
// Pod groups are always run: their cycles and gangs hold state of their
// own.
//
// A failure that read no pod but its own (schedruntime.FailedAttempt.
// PodBlind: every node rejected by node affinity, taints, cordons or the
// node's name, and preemption with no node it could help) holds across
// the other pods' changes too: it is repeated while the count of the other
// changes (engine.Offline.ObjectChanges: nodes, objects, claims,
// PodGroups) is the one it started with. A pod that fits no node's labels
// would otherwise be retried for real, filtering every node, after each
// arrival, departure and placement of a trace.

// repeatedAttempts counts the attempts repeated rather than run, over
// every replay of the process (the tests read it); blindRepeats those of
// them made after other pods changed (PodBlind).
var repeatedAttempts, blindRepeats atomic.Int64

// kept is a failed attempt, as long as it may be repeated.
type kept struct {
	// changes is the cluster's change count during the attempt, objects
	// the count of its changes other than the pods'.
	changes, objects uint64
	attempt          *schedruntime.FailedAttempt
	// offsets are the preemption scan offsets the attempt drew.
	offsets []int32
}

// repeats is the replay's memory of failed attempts.
type repeats struct {
	on bool
	// kept are the last failed attempts by the signature of their pod.
	kept map[sigKey]kept
	// sigs are the pods' signatures, computed once per pod object.
	sigs map[types.UID]podSig
	// done counts the attempts repeated (not run), blind those of them
	// made after other pods changed.
	done, blind int
}

// startRepeats turns repeating on when the run allows it.
func (r *run) startRepeats() {
	r.rep.kept, r.rep.sigs = map[sigKey]kept{}, map[types.UID]podSig{}
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
	before, objects := r.c.Changes(), r.c.ObjectChanges()
	if key, ok := r.signature(qpi.Pod); ok && r.stored(qpi.Pod) {
		if k, ok := r.rep.kept[key]; ok && s.NumParked() == 0 && (k.changes == before || k.attempt.PodBlind() && k.objects == objects) {
			if k.changes != before {
				r.rep.blind++
			}
			r.c.Redraw(k.offsets)
			s.RepeatFailure(r.ctx, qpi, k.attempt)
			r.c.TakeOffsets()
			s.TakeFailure()
			r.rep.done++
			return
		}
	}
	r.c.TakeOffsets()
	s.ScheduleOnePod(r.ctx, qpi)
	f := s.TakeFailure()
	offsets := r.c.TakeOffsets()
	if f == nil || r.c.Changes() != before || s.NumParked() > 0 {
		return
	}
	cur, ok := r.c.Pod(qpi.Pod.Namespace, qpi.Pod.Name)
	if !ok || cur.UID != qpi.Pod.UID || cur.Spec.NodeName != "" {
		return
	}
	if key, ok := r.signature(cur); ok {
		r.rep.kept[key] = kept{changes: before, objects: objects, attempt: f, offsets: offsets}
	}
}

// sigKey is a pod's signature: a hash of what a scheduling cycle reads of
// it.
type sigKey [sha256.Size]byte

type podSig struct {
	pod *v1.Pod
	key sigKey
	ok  bool
}

// signature returns p's signature, computed once per pod object (the
// cluster replaces a pod, never writes into it); ok is false for a pod
// whose cycle reads what the signature leaves out.
func (r *run) signature(p *v1.Pod) (sigKey, bool) {
	if s, ok := r.rep.sigs[p.UID]; ok && s.pod == p {
		return s.key, s.ok
	}
	key, ok := signatureOf(p)
	r.rep.sigs[p.UID] = podSig{pod: p, key: key, ok: ok}
	return key, ok
}

// signatureOf hashes everything of a pending pod but its name, UID,
// creation time and the rest of its metadata that no plugin reads:
// namespace, labels, annotations, owners, spec and status. A pod whose
// cycle reads objects named after it (generic ephemeral volumes' claims,
// ResourceClaims made from templates) or that is nominated (the cycle
// tries its node first and leaves it out of the nominated pods) has none.
func signatureOf(p *v1.Pod) (sigKey, bool) {
	if len(p.Spec.ResourceClaims) > 0 || p.Status.NominatedNodeName != "" {
		return sigKey{}, false
	}
	for _, v := range p.Spec.Volumes {
		if v.Ephemeral != nil {
			return sigKey{}, false
		}
	}
	b, err := json.Marshal(struct {
		Namespace   string
		Labels      map[string]string
		Annotations map[string]string
		Owners      []metav1.OwnerReference
		Spec        *v1.PodSpec
		Status      *v1.PodStatus
	}{p.Namespace, p.Labels, p.Annotations, p.OwnerReferences, &p.Spec, &p.Status})
	if err != nil {
		return sigKey{}, false
	}
	return sha256.Sum256(b), true
}

// stored reports whether p is the cluster's object for its pod.
func (r *run) stored(p *v1.Pod) bool {
	cur, ok := r.c.Pod(p.Namespace, p.Name)
	return ok && cur == p
}
