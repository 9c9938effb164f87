package live

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
)

// ErrStartupInterrupted is returned when Run's context ends (SIGINT or
// SIGTERM in the CLI) before the informers have listed the cluster; the
// error says what was still awaited, and wraps the context's cause.
var ErrStartupInterrupted = errors.New("stopped before the informers synced")

// unsyncedShutdownWait bounds how long a start-up that never synced waits
// for the informers' goroutines once they are told to stop. client-go's
// watch-list reflector sleeps its retry backoff (jittered, up to 30s)
// without watching its context (tools/cache/reflector.go, watchList:
// `<-r.clock.After(r.delayHandler())`), so SharedInformerFactory.Shutdown
// waits out that sleep against an unreachable server. Such a start-up ends
// the process, and the sleeping goroutines, once awake, see the stop and
// return (logging only at -v 3 and up, "Stopping reflector"), so nothing
// is lost by not waiting for them. After a sync, Shutdown is waited for in
// full.
const unsyncedShutdownWait = 200 * time.Millisecond

// startupWait is what the wait for the first sync reports about itself.
type startupWait struct {
	d *driver
	// ctx is Run's context; syncCtx ends with it or at --sync-timeout.
	ctx, syncCtx context.Context
	start        time.Time
	// interval between "still waiting" lines.
	interval time.Duration
}

// wait waits until every kind wait reports is synced, saying every
// interval which kinds it still waits for. It returns nil once all are,
// else the error of the wait's end.
func (w *startupWait) wait(what string, synced func(context.Context) map[string]bool) error {
	for {
		tick, cancel := context.WithTimeout(w.syncCtx, w.interval)
		got := synced(tick)
		cancel()
		var missing []string
		for kind, ok := range got {
			if !ok {
				missing = append(missing, kind)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		sort.Strings(missing)
		if w.syncCtx.Err() != nil {
			return w.notSynced(describeMissing(what, missing, len(got)))
		}
		w.d.logger.Info("Waiting for the informers' first list of the cluster", "kinds", missing,
			"waited", time.Since(w.start).Round(time.Second).String(), "syncTimeout", w.d.o.SyncTimeout.String())
	}
}

// notSynced is the error of a wait that ended before the sync: ctx ended
// (a signal), or the sync timeout did.
func (w *startupWait) notSynced(what string) error {
	if w.ctx.Err() != nil {
		return fmt.Errorf("%w: %w, while waiting for %s", ErrStartupInterrupted, context.Cause(w.ctx), what)
	}
	return fmt.Errorf("%w within %s: %s", ErrSyncTimeout, w.d.o.SyncTimeout, what)
}

// describeMissing names the kinds not synced of all n.
func describeMissing(what string, missing []string, n int) string {
	if len(missing) == n && n > 1 {
		return fmt.Sprintf("none of the %d kinds %s", n, what)
	}
	return strings.Join(missing, ", ")
}

// waitForSync waits for the informers' first list (and their event
// handlers' first delivery), within the sync timeout.
func (d *driver) waitForSync(w *startupWait) error {
	if d.dynFactory != nil {
		err := w.wait("listed", func(ctx context.Context) map[string]bool {
			got := map[string]bool{}
			for gvr, ok := range d.dynFactory.WaitForCacheSync(ctx.Done()) {
				got[gvrName(gvr)] = ok
			}
			return got
		})
		if err != nil {
			return err
		}
	}
	err := w.wait("listed", func(ctx context.Context) map[string]bool {
		got := map[string]bool{}
		for typ, ok := range d.factory.WaitForCacheSync(ctx.Done()) {
			got[typeName(typ)] = ok
		}
		return got
	})
	if err != nil {
		return err
	}
	return w.wait("delivered to the event handlers", func(ctx context.Context) map[string]bool {
		ok := cache.WaitForCacheSync(ctx.Done(), func() bool {
			for _, r := range d.regs {
				if !r.HasSynced() {
					return false
				}
			}
			return true
		})
		return map[string]bool{"event handlers": ok}
	})
}

func typeName(t reflect.Type) string { return strings.TrimPrefix(t.String(), "*") }

func gvrName(gvr schema.GroupVersionResource) string { return gvr.String() }

// shutdownInformers stops the informers and waits for their goroutines:
// in full once they have synced, else for at most unsyncedShutdownWait
// (see there why).
func (d *driver) shutdownInformers(stop context.CancelFunc) {
	stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.factory.Shutdown()
		if d.dynFactory != nil {
			d.dynFactory.Shutdown()
		}
	}()
	if d.ready.isSet() {
		<-done
		return
	}
	t := time.NewTimer(unsyncedShutdownWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		d.logger.V(2).Info("Not waiting for the informers in client-go's retry backoff to stop")
	}
}

// waitInterval is how often the start-up says what it still waits for.
func (d *driver) waitInterval() time.Duration {
	if d.o.waitInterval > 0 {
		return d.o.waitInterval
	}
	return kube.DefaultReportInterval
}
