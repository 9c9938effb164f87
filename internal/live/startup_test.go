package live

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
)

// TestStartupWaitSaysWhatItWaitsFor: the wait for the first list logs the
// kinds not yet listed every interval, and ends with ErrSyncTimeout at the
// timeout or ErrStartupInterrupted (with the context's cause) when its
// context ends first; once every kind is synced it returns nil.
func TestStartupWaitSaysWhatItWaitsFor(t *testing.T) {
	stopped := errors.New("interrupted (SIGINT)")
	tests := []struct {
		name string
		// rounds is after how many calls everything is synced (0: never).
		rounds    int
		interrupt bool
		wantErr   []error
		wantText  string
	}{
		{name: "a sync within the timeout ends the wait", rounds: 3},
		{name: "the timeout ends it with ErrSyncTimeout", wantErr: []error{ErrSyncTimeout}, wantText: "informers not synced within 1h0m0s: none of the 2 kinds listed"},
		{name: "a signal ends it with ErrStartupInterrupted and the cause", interrupt: true, wantErr: []error{ErrStartupInterrupted, stopped},
			wantText: "stopped before the informers synced: interrupted (SIGINT), while waiting for none of the 2 kinds listed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var lines []string
			logger := funcr.New(func(prefix, args string) {
				mu.Lock()
				defer mu.Unlock()
				lines = append(lines, args)
			}, funcr.Options{})
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			syncCtx, cancelSync := context.WithCancel(ctx)
			defer cancelSync()
			d := &driver{o: Options{SyncTimeout: time.Hour}, logger: logger}
			w := &startupWait{d: d, ctx: ctx, syncCtx: syncCtx, start: time.Now(), interval: time.Millisecond}
			calls := 0
			err := w.wait("listed", func(tick context.Context) map[string]bool {
				calls++
				done := tt.rounds > 0 && calls >= tt.rounds
				if !done && calls == 3 {
					// The third round ends the wait: a signal, or the timeout.
					if tt.interrupt {
						cancel(stopped)
					} else {
						cancelSync()
					}
				}
				if !done {
					<-tick.Done()
				}
				return map[string]bool{"v1.Node": done, "v1.Pod": done}
			})
			for _, want := range tt.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("error %v, want it to be %v", err, want)
				}
			}
			if tt.wantErr == nil && err != nil {
				t.Errorf("error %v, want none", err)
			}
			if err != nil && err.Error() != tt.wantText {
				t.Errorf("error %q, want %q", err, tt.wantText)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(lines) != 2 {
				t.Fatalf("%d lines logged, want one per round before the last:\n%s", len(lines), strings.Join(lines, "\n"))
			}
			for _, l := range lines {
				if !strings.Contains(l, `"msg"="Waiting for the informers' first list of the cluster" "kinds"=["v1.Node" "v1.Pod"]`) {
					t.Errorf("line %s does not say which kinds it waits for", l)
				}
			}
		})
	}
}

// TestDescribeMissing words what a wait that ended still lacked.
func TestDescribeMissing(t *testing.T) {
	got := []string{
		describeMissing("listed", []string{"v1.Node", "v1.Pod"}, 2),
		describeMissing("listed", []string{"v1.Pod"}, 2),
		describeMissing("delivered", []string{"event handlers"}, 1),
	}
	want := []string{"none of the 2 kinds listed", "v1.Pod", "event handlers"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
