package runtime

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// waitingPod is the runtime's schedcore.WaitingPod: a pod held at Permit,
// assumed on its node until every plugin that asked it to wait allows it,
// one rejects it, or a plugin's timeout passes.
type waitingPod struct {
	pod     *v1.Pod
	mu      sync.Mutex
	pending map[string]clock.Timer
	done    chan *schedcore.Status
	sent    bool
	result  *schedcore.Status
	longest time.Duration
}

// Timeout is the longest of the plugins' Permit timeouts: how long the pod
// may wait at most.
func (w *waitingPod) Timeout() time.Duration { return w.longest }

// Pod returns the waiting pod.
func (w *waitingPod) Pod() *v1.Pod { return w.pod }

// GetPod returns the waiting pod (kube's name for Pod).
func (w *waitingPod) GetPod() *v1.Pod { return w.pod }

// PendingPlugins lists plugins that have not allowed the pod yet.
func (w *waitingPod) PendingPlugins() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.pending))
	for p := range w.pending {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// Allow records the plugin's approval; the last approval releases the pod.
func (w *waitingPod) Allow(plugin string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if t, ok := w.pending[plugin]; ok {
		t.Stop()
		delete(w.pending, plugin)
	}
	if len(w.pending) == 0 {
		w.send(nil)
	}
}

// Reject releases the pod with an Unschedulable status naming the plugin.
// A pod already allowed or rejected stays as it was. The pod passed its
// filters and was reserved, so the status is marked ForGroup: it is
// rejected for the sake of the pods it waits with, not its own fit.
func (w *waitingPod) Reject(plugin, msg string) {
	w.reject(schedcore.NewStatus(schedcore.Unschedulable, msg).WithPlugin(plugin).ForGroup())
}

func (w *waitingPod) reject(s *schedcore.Status) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.pending {
		t.Stop()
	}
	w.send(s)
}

// timeout rejects the pod from a timer callback. It does not stop the other
// timers: a fake clock runs callbacks while holding its lock, and a timer
// that fires later finds the pod decided and does nothing.
func (w *waitingPod) timeout(plugin string, d time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.send(schedcore.NewStatus(schedcore.Unschedulable, fmt.Sprintf("rejected due to timeout after waiting %v at plugin %v", d, plugin)).WithPlugin(plugin).ForGroup())
}

// Decided reports whether the pod has been allowed or rejected (its binding
// cycle can go on without blocking).
func (w *waitingPod) Decided() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sent
}

// Rejected reports whether the pod has been rejected. A rejected pod still
// holds its reservation until its binding cycle unreserves it, so plugins
// counting a group's assumed pods should not count it.
func (w *waitingPod) Rejected() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sent && !w.result.IsSuccess()
}

func (w *waitingPod) send(s *schedcore.Status) {
	if !w.sent {
		w.sent = true
		w.result = s
		w.done <- s
	}
}

type waitingPodsMap struct {
	mu   sync.RWMutex
	pods map[types.UID]*waitingPod
}

func newWaitingPodsMap() *waitingPodsMap { return &waitingPodsMap{pods: map[types.UID]*waitingPod{}} }

func (m *waitingPodsMap) remove(uid types.UID) {
	m.mu.Lock()
	delete(m.pods, uid)
	m.mu.Unlock()
}

// afterFunc runs fn after d on the handle's clock when it can schedule
// callbacks (the real clock and the dry-run's fake clock both can), so
// permit timeouts follow an injected clock.
func (f *Framework) afterFunc(d time.Duration, fn func()) clock.Timer {
	if c, ok := f.handle.Clock().(clock.WithDelayedExecution); ok {
		return c.AfterFunc(d, fn)
	}
	return clock.RealClock{}.AfterFunc(d, fn)
}

// AddWaitingPod holds a pod after Permit returned Wait; each plugin's
// timeout, on the handle's clock, rejects it with kube's message.
func (f *Framework) AddWaitingPod(pod *v1.Pod, timeouts map[string]time.Duration) schedcore.WaitingPod {
	w := &waitingPod{pod: pod, pending: make(map[string]clock.Timer, len(timeouts)), done: make(chan *schedcore.Status, 1)}
	w.mu.Lock()
	// Sorted so that timers of equal length fire in a fixed order.
	plugins := make([]string, 0, len(timeouts))
	for p := range timeouts {
		plugins = append(plugins, p)
	}
	sort.Strings(plugins)
	for _, plugin := range plugins {
		d := timeouts[plugin]
		w.longest = max(w.longest, d)
		w.pending[plugin] = f.afterFunc(d, func() { w.timeout(plugin, d) })
	}
	w.mu.Unlock()
	f.waitingPods.mu.Lock()
	f.waitingPods.pods[pod.UID] = w
	f.waitingPods.mu.Unlock()
	return w
}

// GetWaitingPod returns a waiting pod by UID, nil if it is not waiting.
func (f *Framework) GetWaitingPod(uid types.UID) schedcore.WaitingPod {
	if w := f.waitingPod(uid); w != nil {
		return w
	}
	return nil
}

// waitingPod returns a waiting pod by UID, nil if it is not waiting.
func (f *Framework) waitingPod(uid types.UID) *waitingPod {
	f.waitingPods.mu.RLock()
	defer f.waitingPods.mu.RUnlock()
	return f.waitingPods.pods[uid]
}

// IterateOverWaitingPods calls fn for each waiting pod, in UID order so
// that callers that act on several pods do so reproducibly.
func (f *Framework) IterateOverWaitingPods(fn func(schedcore.WaitingPod)) {
	f.waitingPods.mu.RLock()
	ws := make([]*waitingPod, 0, len(f.waitingPods.pods))
	for _, w := range f.waitingPods.pods {
		ws = append(ws, w)
	}
	f.waitingPods.mu.RUnlock()
	sort.Slice(ws, func(i, j int) bool { return ws[i].pod.UID < ws[j].pod.UID })
	for _, w := range ws {
		fn(w)
	}
}

// RejectWaitingPod rejects a waiting pod by UID, as kube's Handle does when
// a waiting pod is deleted; it reports whether the pod was waiting.
func (f *Framework) RejectWaitingPod(uid types.UID) bool {
	if w := f.waitingPod(uid); w != nil {
		w.reject(schedcore.NewStatus(schedcore.Unschedulable, "removed"))
		return true
	}
	return false
}

// NumWaitingPods counts the pods held at Permit.
func (f *Framework) NumWaitingPods() int {
	f.waitingPods.mu.RLock()
	defer f.waitingPods.mu.RUnlock()
	return len(f.waitingPods.pods)
}

// WaitOnPermit blocks until a waiting pod is allowed or rejected (or ctx
// ends). Pods not waiting return at once. An allowed pod leaves the waiting
// map here; a rejected one stays in it, marked rejected, until the
// scheduler has unreserved and forgotten it, so that no plugin sees its
// reservation without knowing it is going away.
func (f *Framework) WaitOnPermit(ctx context.Context, pod *v1.Pod) *schedcore.Status {
	w := f.waitingPod(pod.UID)
	if w == nil {
		return nil
	}
	select {
	case s := <-w.done:
		if s.IsSuccess() {
			f.waitingPods.remove(pod.UID)
			return nil
		}
		if s.IsRejected() {
			return s
		}
		return schedcore.AsStatus(fmt.Errorf("error while waiting on permit for pod %v: %w", schedcore.PodName(pod), s.AsError())).WithPlugin(s.Plugin())
	case <-ctx.Done():
		return schedcore.AsStatus(fmt.Errorf("waiting on permit for pod %v: %w", schedcore.PodName(pod), ctx.Err()))
	}
}

// forgetWaitingPod drops a pod from the waiting map once its failure has
// been handled.
func (f *Framework) forgetWaitingPod(uid types.UID) { f.waitingPods.remove(uid) }
