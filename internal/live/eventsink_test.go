package live

import (
	"context"
	"sync"
	"testing"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recordingSink counts writes and the most in progress at once.
type recordingSink struct {
	mu           sync.Mutex
	writes, cur  int
	maxCur       int
	block        chan struct{} // nil: writes return at once
	writtenNames []string
}

func (r *recordingSink) write(ev *eventsv1.Event) (*eventsv1.Event, error) {
	r.mu.Lock()
	r.cur++
	r.maxCur = max(r.maxCur, r.cur)
	r.mu.Unlock()
	if r.block != nil {
		<-r.block
	}
	r.mu.Lock()
	r.cur--
	r.writes++
	r.writtenNames = append(r.writtenNames, ev.Name)
	r.mu.Unlock()
	return ev, nil
}

func (r *recordingSink) Create(_ context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	return r.write(ev)
}
func (r *recordingSink) Update(_ context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	return r.write(ev)
}
func (r *recordingSink) Patch(_ context.Context, ev *eventsv1.Event, _ []byte) (*eventsv1.Event, error) {
	return r.write(ev)
}

func (r *recordingSink) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes
}

func event(name string, at time.Time) *eventsv1.Event {
	return &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, EventTime: metav1.NewMicroTime(at)}
}

func TestYieldingSinkHoldsEventsBackWhileBindingsAreInFlight(t *testing.T) {
	inner := &recordingSink{}
	busy := newFlights()
	s := newYieldingSink(inner, busy)
	s.maxDelay = time.Hour
	busy.start()
	busy.start()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := s.Create(context.Background(), event("e1", time.Now())); err != nil {
			t.Error(err)
		}
	}()
	time.Sleep(50 * time.Millisecond)
	if n := inner.count(); n != 0 {
		t.Fatalf("%d events written while bindings are in flight, want 0", n)
	}
	busy.done()
	time.Sleep(20 * time.Millisecond)
	if n := inner.count(); n != 0 {
		t.Fatalf("%d events written with one binding still in flight, want 0", n)
	}
	busy.done()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("event not written once no binding was in flight")
	}
	if n := inner.count(); n != 1 {
		t.Errorf("%d events written, want 1", n)
	}
}

func TestYieldingSinkWritesAnEventThatWaitedMaxDelay(t *testing.T) {
	inner := &recordingSink{}
	busy := newFlights()
	busy.start() // never done
	s := newYieldingSink(inner, busy)
	s.maxDelay = 100 * time.Millisecond
	start := time.Now()
	if _, err := s.Create(context.Background(), event("old", start.Add(-time.Second))); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("an event older than maxDelay waited %v", d)
	}
	if _, err := s.Patch(context.Background(), event("new", time.Now()), nil); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Errorf("a new event was written after %v, before maxDelay", d)
	}
	if n := inner.count(); n != 2 {
		t.Errorf("%d events written, want 2", n)
	}
}

func TestYieldingSinkBoundsConcurrentWritesAndDrains(t *testing.T) {
	inner := &recordingSink{block: make(chan struct{})}
	s := newYieldingSink(inner, newFlights())
	var wg sync.WaitGroup
	for range 3 * eventWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.Create(context.Background(), event("e", time.Now()))
		}()
	}
	time.Sleep(50 * time.Millisecond)
	close(inner.block)
	s.drain(5 * time.Second)
	if n := inner.count(); n != 3*eventWriters {
		t.Errorf("drain returned with %d of %d events written", n, 3*eventWriters)
	}
	wg.Wait()
	if inner.maxCur > eventWriters {
		t.Errorf("%d writes at once, want at most %d", inner.maxCur, eventWriters)
	}
}

func TestYieldingSinkGivesUpWhenTheContextEnds(t *testing.T) {
	busy := newFlights()
	busy.start()
	s := newYieldingSink(&recordingSink{}, busy)
	s.maxDelay = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Create(ctx, event("e", time.Now())); err == nil {
		t.Error("Create succeeded after its context ended")
	}
	// Its writer slot was given back.
	busy.done()
	if _, err := s.Create(context.Background(), event("e", time.Now())); err != nil {
		t.Error(err)
	}
}
