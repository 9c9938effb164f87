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
// kube-scheduler's) writing through a yieldingSink, or, when the server has
// no events.k8s.io/v1, client-go's adapter (core/v1 events).
func newEventBroadcaster(ctx context.Context, client kubernetes.Interface, busy *flights) (eventBroadcaster, *yieldingSink) {
	if _, err := client.Discovery().ServerResourcesForGroupVersionWithContext(ctx, eventsv1.SchemeGroupVersion.String()); err != nil {
		return events.NewEventBroadcasterAdapterWithContext(ctx, client), nil
	}
	sink := newYieldingSink(&events.EventSinkImpl{Interface: client.EventsV1()}, busy)
	return v1Broadcaster{events.NewBroadcaster(sink)}, sink
}

type v1Broadcaster struct{ events.EventBroadcaster }

func (b v1Broadcaster) NewRecorder(name string) events.EventRecorderLogger {
	return b.EventBroadcaster.NewRecorder(scheme.Scheme, name)
}

// Event writes yield to bindings. client-go's broadcaster writes each event
// from a goroutine of its own as soon as it is recorded; in a burst
// (thousands of pods bound at the client's QPS) the Scheduled events then
// double the API server's writes and slow the bindings they report, on a
// small control plane by 40%. The sink below holds an event back while
// bindings are in flight, until they are not or the event is
// maxEventDelay old, and writes at most eventWriters at a time. Every event
// is still written, with the time it was recorded; only when it reaches the
// server changes. The writers must keep up with the bindings: in a long
// burst the events come of age as fast as pods are bound, and each write
// waits on a busy server as long as a binding does. With 16 writers, 10000
// pods on 5000 nodes at QPS 1000 (on a loaded 2-core machine) were bound
// in 38 s and their last event written 13 s later; as many writers as
// bindings in flight keep the same pace as the bindings.
const (
	maxEventDelay = 10 * time.Second
	eventWriters  = maxBindingsInFlight
)

// yieldingSink is an events.EventSink that waits for its turn (see above)
// before each write.
type yieldingSink struct {
	inner    events.EventSink
	busy     *flights
	writers  chan struct{}
	maxDelay time.Duration
	pending  *flights
}

var _ events.EventSink = (*yieldingSink)(nil)

func newYieldingSink(inner events.EventSink, busy *flights) *yieldingSink {
	return &yieldingSink{inner: inner, busy: busy, writers: make(chan struct{}, eventWriters), maxDelay: maxEventDelay, pending: newFlights()}
}

// turn waits until the event may be written, then for a writer slot;
// release gives it back. It returns false if ctx ended first.
func (s *yieldingSink) turn(ctx context.Context, ev *eventsv1.Event) bool {
	recorded := ev.EventTime.Time
	if ev.Series != nil {
		recorded = ev.Series.LastObservedTime.Time
	}
	if recorded.IsZero() {
		recorded = time.Now()
	}
	var timer *time.Timer
wait:
	for {
		busy, idle := s.busy.state()
		wait := time.Until(recorded.Add(s.maxDelay))
		if !busy || wait <= 0 {
			break
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		}
		select {
		case <-idle:
		case <-timer.C:
			break wait
		case <-ctx.Done():
			return false
		}
	}
	select {
	case s.writers <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *yieldingSink) release() { <-s.writers }

func (s *yieldingSink) Create(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	s.pending.start()
	defer s.pending.done()
	if !s.turn(ctx, ev) {
		return nil, ctx.Err()
	}
	defer s.release()
	return s.inner.Create(ctx, ev)
}

func (s *yieldingSink) Update(ctx context.Context, ev *eventsv1.Event) (*eventsv1.Event, error) {
	s.pending.start()
	defer s.pending.done()
	if !s.turn(ctx, ev) {
		return nil, ctx.Err()
	}
	defer s.release()
	return s.inner.Update(ctx, ev)
}

func (s *yieldingSink) Patch(ctx context.Context, ev *eventsv1.Event, data []byte) (*eventsv1.Event, error) {
	s.pending.start()
	defer s.pending.done()
	if !s.turn(ctx, ev) {
		return nil, ctx.Err()
	}
	defer s.release()
	return s.inner.Patch(ctx, ev, data)
}

// drain waits up to timeout for the events being written (on shutdown,
// once no binding is in flight any more, so that none is held back).
func (s *yieldingSink) drain(timeout time.Duration) {
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
