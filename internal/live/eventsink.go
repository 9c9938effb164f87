package live

import (
	"context"
	"sync"
	"time"

	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
)

// eventBroadcaster is what the driver uses of an events broadcaster.
type eventBroadcaster interface {
	StartRecordingToSink(stopCh <-chan struct{})
	NewRecorder(name string) events.EventRecorderLogger
	Shutdown()
}

// newEventBroadcaster returns client-go's events/v1 broadcaster (as
// kube-scheduler's) writing through a boundedSink, or, when the server has
// no events.k8s.io/v1, client-go's adapter (core/v1 events).
func newEventBroadcaster(ctx context.Context, client kubernetes.Interface) (eventBroadcaster, *boundedSink) {
	if _, err := client.Discovery().ServerResourcesForGroupVersionWithContext(ctx, eventsv1.SchemeGroupVersion.String()); err != nil {
		return events.NewEventBroadcasterAdapterWithContext(ctx, client), nil
	}
	sink := newBoundedSink(&events.EventSinkImpl{Interface: client.EventsV1()})
	return v1Broadcaster{events.NewBroadcaster(sink)}, sink
}

type v1Broadcaster struct{ events.EventBroadcaster }

func (b v1Broadcaster) NewRecorder(name string) events.EventRecorderLogger {
	return b.EventBroadcaster.NewRecorder(scheme.Scheme, name)
}

// client-go's broadcaster writes each event from a goroutine of its own as
// soon as it is recorded, as kube-scheduler's does; the sink below bounds
// the writes in flight to eventWriters, as the binder bounds bindings, so
// that a burst of thousands of Scheduled events does not open more HTTP/2
// streams than the server allows on one connection. Holding events back
// while bindings are in flight (at most 10 s, 16 writers), as this sink did
// before, bound the pods sooner but wrote the last event later: at 5000
// nodes / 10000 pods, QPS 1000, on a loaded 2-core machine, the last pod
// was bound 28-38 s after the start and its last event written 40-51 s;
// written at once, the last event came within 0.6 s of the last binding,
// and the bindings were not slower (see docs/performance.md, Live). Every
// event is written, with the time it was recorded.
const eventWriters = maxBindingsInFlight

// boundedSink is an events.EventSink that waits for a writer slot before
// each write and counts the writes pending, for drain.
type boundedSink struct {
	inner   events.EventSink
	writers chan struct{}
	pending *flights
}

var _ events.EventSink = (*boundedSink)(nil)

func newBoundedSink(inner events.EventSink) *boundedSink {
	return &boundedSink{inner: inner, writers: make(chan struct{}, eventWriters), pending: newFlights()}
}

// turn takes a writer slot; release gives it back. It returns false if ctx
// ended first.
func (s *boundedSink) turn(ctx context.Context) bool {
	select {
	case s.writers <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *boundedSink) release() { <-s.writers }

func (s *boundedSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	return s.write(ctx, func() (*eventsv1.Event, error) { return s.inner.Create(ctx, ev) })
}

func (s *boundedSink) Update(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	return s.write(ctx, func() (*eventsv1.Event, error) { return s.inner.Update(ctx, ev) })
}

func (s *boundedSink) Patch(ctx context.Context, ev *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	return s.write(ctx, func() (*eventsv1.Event, error) { return s.inner.Patch(ctx, ev, data) })
}

// write runs w in a writer slot, counted as pending from the call on.
func (s *boundedSink) write(ctx context.Context, w func() (*eventsv1.Event, error)) (*eventsv1.Event, error) {
	s.pending.start()
	defer s.pending.done()
	if !s.turn(ctx) {
		return nil, ctx.Err()
	}
	defer s.release()
	return w()
}

// drain waits up to timeout for the events being written (on shutdown).
func (s *boundedSink) drain(timeout time.Duration) {
	if s == nil {
		return
	}
	deadline := time.After(timeout)
	for {
		busy, idle := s.pending.state()
		if !busy {
			return
		}
		select {
		case <-idle:
		case <-deadline:
			return
		}
	}
}

// flights counts requests in flight and tells waiters when there are none.
type flights struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0, then replaced
}

func newFlights() *flights { return &flights{idle: make(chan struct{})} }

func (f *flights) start() {
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
}

func (f *flights) done() {
	f.mu.Lock()
	f.n--
	if f.n == 0 {
		close(f.idle)
		f.idle = make(chan struct{})
	}
	f.mu.Unlock()
}

// state reports whether requests are in flight and a channel closed when
// they no longer are.
func (f *flights) state() (busy bool, idle <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n > 0, f.idle
}
