package schedcore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// RunReservePluginsReserve runs Reserve plugins; a failure stops the chain.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status {
	start := time.Now()
	for _, pl := range f.reserve {
		if s := pl.Reserve(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				f.observe(ExtReserve, s, start)
				return s.WithPlugin(pl.Name())
			}
			st := AsStatus(fmt.Errorf("running Reserve plugin %q: %w", pl.Name(), s.AsError()))
			f.observe(ExtReserve, st, start)
			return st
		}
	}
	f.observe(ExtReserve, nil, start)
	return nil
}

// RunReservePluginsUnreserve runs Unreserve in reverse order.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) {
	start := time.Now()
	for i := len(f.reserve) - 1; i >= 0; i-- {
		f.reserve[i].Unreserve(ctx, state, pod, nodeName)
	}
	f.observe(ExtUnreserve, nil, start)
}

// RunPermitPlugins runs Permit plugins. A rejection stops the chain; Wait
// from any plugin (with no rejection) returns Wait and the per-plugin
// timeouts, capped at MaxPermitTimeout.
func (f *Framework) RunPermitPlugins(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) (map[string]time.Duration, *Status) {
	start := time.Now()
	var wait *Status
	waits := map[string]time.Duration{}
	for _, pl := range f.permit {
		s, timeout := pl.Permit(ctx, state, pod, nodeName)
		if s.IsSuccess() {
			continue
		}
		if s.IsRejected() {
			f.observe(ExtPermit, s, start)
			return nil, s.WithPlugin(pl.Name())
		}
		if s.IsWait() {
			waits[pl.Name()] = min(timeout, MaxPermitTimeout)
			wait = s
			continue
		}
		st := AsStatus(fmt.Errorf("running Permit plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
		f.observe(ExtPermit, st, start)
		return nil, st
	}
	if wait.IsWait() {
		wait.AppendReason("one or more plugins asked to wait and no plugin rejected pod")
		f.observe(ExtPermit, wait, start)
		return waits, wait
	}
	f.observe(ExtPermit, nil, start)
	return nil, nil
}

// RunPreBindPlugins runs PreBind plugins, skipping those whose PreFlight said
// Skip.
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status {
	start := time.Now()
	for _, pl := range f.preBind {
		if state.SkipPreBindPlugins.Has(pl.Name()) {
			continue
		}
		if s := pl.PreBind(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				f.observe(ExtPreBind, s, start)
				return s.WithPlugin(pl.Name())
			}
			st := AsStatus(fmt.Errorf("running PreBind plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
			f.observe(ExtPreBind, st, start)
			return st
		}
	}
	f.observe(ExtPreBind, nil, start)
	return nil
}

// RunBindPlugins runs binders until one does not Skip.
func (f *Framework) RunBindPlugins(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status {
	start := time.Now()
	var s *Status
	for _, pl := range f.bind {
		s = pl.Bind(ctx, state, pod, nodeName)
		if s.IsSkip() {
			continue
		}
		if !s.IsSuccess() {
			if s.IsRejected() {
				f.observe(ExtBind, s, start)
				return s.WithPlugin(pl.Name())
			}
			st := AsStatus(fmt.Errorf("running Bind plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
			f.observe(ExtBind, st, start)
			return st
		}
		f.observe(ExtBind, s, start)
		return s
	}
	f.observe(ExtBind, s, start)
	return s
}

// RunPostBindPlugins tells PostBind plugins of a binding.
func (f *Framework) RunPostBindPlugins(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) {
	start := time.Now()
	for _, pl := range f.postBind {
		pl.PostBind(ctx, state, pod, nodeName)
	}
	f.observe(ExtPostBind, nil, start)
}

// WaitingPod is a pod held at Permit. Plugins Allow or Reject it by name.
type WaitingPod struct {
	pod     *v1.Pod
	mu      sync.Mutex
	pending map[string]*time.Timer
	done    chan *Status
	sent    bool
}

// Pod returns the waiting pod.
func (w *WaitingPod) Pod() *v1.Pod { return w.pod }

// PendingPlugins lists plugins that have not allowed the pod yet.
func (w *WaitingPod) PendingPlugins() []string {
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
func (w *WaitingPod) Allow(plugin string) {
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

// Reject releases the pod with an Unschedulable status.
func (w *WaitingPod) Reject(plugin, msg string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.pending {
		t.Stop()
	}
	w.send(NewStatus(Unschedulable, msg).WithPlugin(plugin))
}

func (w *WaitingPod) send(s *Status) {
	if !w.sent {
		w.sent = true
		w.done <- s
	}
}

type waitingPodsMap struct {
	mu   sync.RWMutex
	pods map[types.UID]*WaitingPod
}

func newWaitingPodsMap() *waitingPodsMap { return &waitingPodsMap{pods: map[types.UID]*WaitingPod{}} }

// AddWaitingPod holds a pod after Permit returned Wait; each plugin's
// timeout rejects it with kube's message.
func (f *Framework) AddWaitingPod(pod *v1.Pod, timeouts map[string]time.Duration) *WaitingPod {
	w := &WaitingPod{pod: pod, pending: map[string]*time.Timer{}, done: make(chan *Status, 1)}
	w.mu.Lock()
	for plugin, d := range timeouts {
		plugin, d := plugin, d
		w.pending[plugin] = time.AfterFunc(d, func() {
			w.Reject(plugin, fmt.Sprintf("rejected due to timeout after waiting %v at plugin %v", d, plugin))
		})
	}
	w.mu.Unlock()
	f.waitingPods.mu.Lock()
	f.waitingPods.pods[pod.UID] = w
	f.waitingPods.mu.Unlock()
	return w
}

// GetWaitingPod returns a waiting pod by UID.
func (f *Framework) GetWaitingPod(uid types.UID) *WaitingPod {
	f.waitingPods.mu.RLock()
	defer f.waitingPods.mu.RUnlock()
	return f.waitingPods.pods[uid]
}

// IterateOverWaitingPods calls fn for each waiting pod.
func (f *Framework) IterateOverWaitingPods(fn func(*WaitingPod)) {
	f.waitingPods.mu.RLock()
	ws := make([]*WaitingPod, 0, len(f.waitingPods.pods))
	for _, w := range f.waitingPods.pods {
		ws = append(ws, w)
	}
	f.waitingPods.mu.RUnlock()
	for _, w := range ws {
		fn(w)
	}
}

// WaitOnPermit blocks until a waiting pod is allowed or rejected (or ctx
// ends). Pods not waiting return at once.
func (f *Framework) WaitOnPermit(ctx context.Context, pod *v1.Pod) *Status {
	w := f.GetWaitingPod(pod.UID)
	if w == nil {
		return nil
	}
	defer func() {
		f.waitingPods.mu.Lock()
		delete(f.waitingPods.pods, pod.UID)
		f.waitingPods.mu.Unlock()
	}()
	select {
	case s := <-w.done:
		if s.IsSuccess() {
			return nil
		}
		if s.IsRejected() {
			return s
		}
		return AsStatus(fmt.Errorf("error while waiting on permit for pod %v: %w", PodName(pod), s.AsError())).WithPlugin(s.Plugin())
	case <-ctx.Done():
		return AsStatus(fmt.Errorf("waiting on permit for pod %v: %w", PodName(pod), ctx.Err()))
	}
}

// JoinReasons joins reasons for messages.
func JoinReasons(r []string) string { return strings.Join(r, ", ") }
