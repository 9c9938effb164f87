package runtime

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// RunReservePluginsReserve runs Reserve plugins; a failure stops the chain.
func (f *Framework) RunReservePluginsReserve(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeName string) *schedcore.Status {
	start := time.Now()
	for _, pl := range f.reserve {
		if s := pl.Reserve(ctx, state, pod, nodeName); !s.IsSuccess() {
			if s.IsRejected() {
				f.observe(ExtReserve, s, start)
				return s.WithPlugin(pl.Name())
			}
			st := schedcore.AsStatus(fmt.Errorf("running Reserve plugin %q: %w", pl.Name(), s.AsError()))
			f.observe(ExtReserve, st, start)
			return st
		}
	}
	f.observe(ExtReserve, nil, start)
	return nil
}

// RunReservePluginsUnreserve runs Unreserve in reverse order.
func (f *Framework) RunReservePluginsUnreserve(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeName string) {
	start := time.Now()
	for i := len(f.reserve) - 1; i >= 0; i-- {
		f.reserve[i].Unreserve(ctx, state, pod, nodeName)
	}
	f.observe(ExtUnreserve, nil, start)
}

// RunPermitPlugins runs Permit plugins. A rejection stops the chain; Wait
// from any plugin (with no rejection) returns Wait and the per-plugin
// timeouts, capped at MaxPermitTimeout.
func (f *Framework) RunPermitPlugins(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeName string) (map[string]time.Duration, *schedcore.Status) {
	start := time.Now()
	var wait *schedcore.Status
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
			waits[pl.Name()] = min(timeout, schedcore.MaxPermitTimeout)
			wait = s
			continue
		}
		st := schedcore.AsStatus(fmt.Errorf("running Permit plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
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
func (f *Framework) RunPreBindPlugins(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeName string) *schedcore.Status {
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
			st := schedcore.AsStatus(fmt.Errorf("running PreBind plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
			f.observe(ExtPreBind, st, start)
			return st
		}
	}
	f.observe(ExtPreBind, nil, start)
	return nil
}

// RunBindPlugins runs binders until one does not Skip.
func (f *Framework) RunBindPlugins(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeName string) *schedcore.Status {
	start := time.Now()
	var s *schedcore.Status
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
			st := schedcore.AsStatus(fmt.Errorf("running Bind plugin %q: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
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
func (f *Framework) RunPostBindPlugins(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeName string) {
	start := time.Now()
	for _, pl := range f.postBind {
		pl.PostBind(ctx, state, pod, nodeName)
	}
	f.observe(ExtPostBind, nil, start)
}
