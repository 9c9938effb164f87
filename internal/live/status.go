package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// unschedulableCondition is the PodScheduled condition kube-scheduler sets
// after a failed attempt: reason Unschedulable or SchedulerError and the full
// message (only the event is truncated), observed at the pod's generation.
func unschedulableCondition(pod *v1.Pod, reason, message string) *v1.PodCondition {
	return &v1.PodCondition{
		Type:               v1.PodScheduled,
		ObservedGeneration: pod.Generation,
		Status:             v1.ConditionFalse,
		Reason:             reason,
		Message:            message,
	}
}

// podStatusPatch is what kube-scheduler's updatePod sends for a pod: the
// condition (if any) merged as podutil.UpdatePodCondition does — the
// transition time is now unless the status is unchanged — and the
// nominated node name when nominating overrides it with another value. It
// returns nil when nothing would change.
func podStatusPatch(pod *v1.Pod, cond *v1.PodCondition, nominating *schedcore.NominatingInfo, now metav1.Time) ([]byte, error) {
	status := pod.Status.DeepCopy()
	nnnChanged := nominating != nil && nominating.NominatingMode == schedcore.ModeOverride && pod.Status.NominatedNodeName != nominating.NominatedNodeName
	condChanged := cond != nil && updatePodCondition(status, cond, now)
	if !condChanged && !nnnChanged {
		return nil, nil
	}
	if nnnChanged {
		status.NominatedNodeName = nominating.NominatedNodeName
	}
	oldData, err := json.Marshal(v1.Pod{Status: pod.Status})
	if err != nil {
		return nil, err
	}
	newData, err := json.Marshal(v1.Pod{Status: *status})
	if err != nil {
		return nil, err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &v1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("creating merge patch for pod %s: %w", schedcore.PodName(pod), err)
	}
	if string(patch) == "{}" {
		return nil, nil
	}
	return patch, nil
}

// updatePodCondition is podutil.UpdatePodCondition: it adds or replaces the
// condition and reports whether anything changed. As there, a change of
// observedGeneration alone does not count.
func updatePodCondition(status *v1.PodStatus, cond *v1.PodCondition, now metav1.Time) bool {
	c := *cond
	c.LastTransitionTime = now
	for i := range status.Conditions {
		old := &status.Conditions[i]
		if old.Type != c.Type {
			continue
		}
		if c.Status == old.Status {
			c.LastTransitionTime = old.LastTransitionTime
		}
		equal := c.Status == old.Status && c.Reason == old.Reason && c.Message == old.Message &&
			c.LastProbeTime.Equal(&old.LastProbeTime) && c.LastTransitionTime.Equal(&old.LastTransitionTime)
		status.Conditions[i] = c
		return !equal
	}
	status.Conditions = append(status.Conditions, c)
	return true
}

// retriable are the API errors kube-scheduler retries binding on.
func retriable(err error) bool {
	return apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || utilnet.IsConnectionRefused(err)
}

// retriableWithConflict adds conflicts, for status patches.
func retriableWithConflict(err error) bool { return retriable(err) || apierrors.IsConflict(err) }

// patchPodStatus sends podStatusPatch's patch to the status subresource,
// retrying as kube-scheduler does.
func patchPodStatus(ctx context.Context, client kubernetes.Interface, pod *v1.Pod, cond *v1.PodCondition, nominating *schedcore.NominatingInfo) error {
	patch, err := podStatusPatch(pod, cond, nominating, metav1.Now())
	if err != nil || patch == nil {
		return err
	}
	return retry.OnError(retry.DefaultBackoff, retriableWithConflict, func() error {
		_, err := client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	})
}

// apiBinder binds through the pods/binding subresource, as kube-scheduler's
// DefaultBinder, retrying transient errors. The API server refuses to bind a
// pod that is already bound or whose UID changed, so a pod is never bound
// twice, whoever else schedules it.
type apiBinder struct {
	client kubernetes.Interface
	// inFlight, when set, bounds the binding requests in flight (a
	// semaphore): see maxBindingsInFlight.
	inFlight chan struct{}
}

// maxBindingsInFlight bounds the concurrent pods/binding requests. The
// scheduling loop outruns the API server when the client limits are high;
// without a bound, hundreds of bindings wait on the server at once and,
// past the server's 250 HTTP/2 streams per connection, the client dials
// extra TLS connections the server pays handshakes for, slowing every
// binding. Binding cycles still run concurrently (kube's goroutine per
// pod); only their API calls queue here, in no particular order.
const maxBindingsInFlight = 128

func newAPIBinder(client kubernetes.Interface) apiBinder {
	return apiBinder{client: client, inFlight: make(chan struct{}, maxBindingsInFlight)}
}

// call runs one API request within the in-flight bound.
func (b apiBinder) call(ctx context.Context, f func() error) error {
	if b.inFlight != nil {
		select {
		case b.inFlight <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-b.inFlight }()
	}
	return f()
}

var _ schedcore.Binder = apiBinder{}

// Bind implements schedcore.Binder. It retries what kube-scheduler retries
// (internal errors, unavailable, connection refused) and, beyond kube, an
// attempt whose outcome is unknown: the request was sent but the answer
// lost (connection reset, EOF, timeout: the apiserver died or restarted
// mid-request). Such an attempt may have bound the pod, so when the retries
// do not succeed Bind asks the API server where the pod is, for as long as
// ctx allows, before it reports a failure: a failure makes the scheduler
// forget the pod and give its room to others, which must not happen if the
// pod is in fact bound there (kube-scheduler then overcommits the node once
// its informer catches up). A retry after a lost success fails with a
// conflict, as the API server binds a pod once only.
func (b apiBinder) Bind(ctx context.Context, pod *v1.Pod, node string) error {
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}
	uncertain := false
	err := retry.OnError(bindBackoff, func(err error) bool { return retriable(err) || outcomeUnknown(err) }, func() error {
		err := b.call(ctx, func() error {
			return b.client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{})
		})
		if outcomeUnknown(err) {
			uncertain = true
		}
		return err
	})
	if err == nil || !uncertain {
		return err
	}
	return b.resolve(ctx, pod, node, err)
}

// outcomeUnknown reports whether a request failed after it may have been
// sent: a transport error other than a refused connection (no API status
// came back).
func outcomeUnknown(err error) bool {
	if err == nil || utilnet.IsConnectionRefused(err) {
		return false
	}
	var st apierrors.APIStatus
	return !errors.As(err, &st) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err)
}

// bindBackoff is kube-scheduler's binding retry backoff.
var bindBackoff = retry.DefaultBackoff

// resolveInterval is the pause between two reads of a pod whose binding
// outcome is unknown.
var resolveInterval = time.Second

// resolve finds out whether an uncertain binding took effect: nil if the
// pod (same UID) is bound to node, bindErr if it is not bound, gone, bound
// elsewhere or ctx ends first.
func (b apiBinder) resolve(ctx context.Context, pod *v1.Pod, node string, bindErr error) error {
	for {
		cur, err := b.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		switch {
		case err == nil && cur.UID == pod.UID && cur.Spec.NodeName == node:
			return nil
		case err == nil || apierrors.IsNotFound(err):
			return bindErr
		case !outcomeUnknown(err) && !retriable(err):
			// The server answered with an error (forbidden, say): it will
			// not tell.
			return bindErr
		}
		select {
		case <-ctx.Done():
			return bindErr
		case <-time.After(resolveInterval):
		}
	}
}
