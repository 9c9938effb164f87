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
	mu          sync.Mutex
	writes, cur int
	maxCur      int
	block       chan struct{} // nil: writes return at once
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

func (r *recordingSink) inFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cur
}

func (r *recordingSink) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.writes
}

func event(name string, at time.Time) *eventsv1.Event {
	return &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, EventTime: metav1.NewMicroTime(at)}
}

func TestBoundedSinkBoundsConcurrentWritesAndDrains(t *testing.T) {
	inner := &recordingSink{block: make(chan struct{})}
	s := newBoundedSink(inner)
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

func TestBoundedSinkGivesUpWhenTheContextEnds(t *testing.T) {
	inner := &recordingSink{block: make(chan struct{})}
	s := newBoundedSink(inner)
	var wg sync.WaitGroup
	for range eventWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = s.Create(context.Background(), event("busy", time.Now()))
		}()
	}
	for inner.inFlight() < eventWriters {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := s.Create(ctx, event("e", time.Now())); err == nil {
		t.Error("Create succeeded after its context ended, with every writer busy")
	}
	close(inner.block)
	wg.Wait()
	// The writers' slots were given back.
	if _, err := s.Create(context.Background(), event("e", time.Now())); err != nil {
		t.Error(err)
	}
	if n := inner.count(); n != eventWriters+1 {
		t.Errorf("%d events written, want %d", n, eventWriters+1)
	}
}
