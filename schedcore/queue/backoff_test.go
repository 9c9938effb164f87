package queue

import (
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestBackoffDuration(t *testing.T) {
	tests := []struct {
		name         string
		initial, max time.Duration
		counts       []int
		want         []time.Duration
	}{
		{
			name:    "the backoff doubles from the initial value up to the cap",
			initial: time.Second, max: 10 * time.Second,
			counts: []int{0, 1, 2, 3, 4, 5, 6, 100},
			want:   []time.Duration{0, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second, 10 * time.Second},
		},
		{
			name:    "an initial backoff above the cap is capped at once",
			initial: 20 * time.Second, max: 10 * time.Second,
			counts: []int{1, 2},
			want:   []time.Duration{10 * time.Second, 10 * time.Second},
		},
		{
			name:    "a cap that is not a power of two of the initial is still reached",
			initial: 3 * time.Second, max: 20 * time.Second,
			counts: []int{1, 2, 3, 4},
			want:   []time.Duration{3 * time.Second, 6 * time.Second, 12 * time.Second, 20 * time.Second},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bq := newBackoffQueue(nil, tt.initial, tt.max, less, true, NopMetrics{})
			var got []time.Duration
			for _, c := range tt.counts {
				got = append(got, bq.backoffDuration(c, 1))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// TestBackoffDurationEntitySize transcribes kube's
// TestBackoffQueue_calculateBackoffDuration: an entity of more than one
// pod (a pod group's queued members) has its cap multiplied by √size.
func TestBackoffDurationEntitySize(t *testing.T) {
	tests := []struct {
		name         string
		initial, max time.Duration
		count, size  int
		want         time.Duration
	}{
		{name: "no backoff", initial: 1, max: 32, count: 0, size: 1, want: 0},
		{name: "normal", initial: 3, max: 1000, count: 5, size: 1, want: 48},
		{name: "hitting max backoff duration", initial: 1, max: 32, count: 16, size: 1, want: 32},
		{name: "overflow_32bit", initial: 1, max: math.MaxInt32, count: 32, size: 1, want: math.MaxInt32},
		{name: "overflow_64bit", initial: 1, max: math.MaxInt64, count: 64, size: 1, want: math.MaxInt64},
		{name: "larger entity size", initial: 1, max: 32, count: 7, size: 10, want: 64},
		{name: "hitting max backoff duration with larger entity size", initial: 1, max: 32, count: 16, size: 10, want: 101},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bq := newBackoffQueue(nil, tt.initial, tt.max, less, true, NopMetrics{})
			if got := bq.backoffDuration(tt.count, tt.size); got != tt.want {
				t.Errorf("backoffDuration(%d, %d) = %v, want %v", tt.count, tt.size, got, tt.want)
			}
		})
	}
}

func TestBackoffTime(t *testing.T) {
	ts := epoch.Add(200 * time.Millisecond) // .7s past the second
	tests := []struct {
		name            string
		popFromBackoffQ bool
		max             time.Duration
		unschedulable   int
		errors          int
		want            time.Time
	}{
		{name: "a pod that never failed has no backoff", popFromBackoffQ: true, max: 10 * time.Second, want: time.Time{}},
		{name: "the expiry is aligned down to the whole second with SchedulerPopFromBackoffQ", popFromBackoffQ: true, max: 10 * time.Second, unschedulable: 1, want: epoch.Add(-500 * time.Millisecond).Add(time.Second)},
		{name: "the expiry is exact without SchedulerPopFromBackoffQ", max: 10 * time.Second, unschedulable: 1, want: ts.Add(time.Second)},
		{name: "consecutive errors count instead of unschedulable attempts", max: 10 * time.Second, unschedulable: 1, errors: 3, want: ts.Add(4 * time.Second)},
		{name: "a max backoff of zero disables backoff", max: 0, unschedulable: 3, want: time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bq := newBackoffQueue(nil, time.Second, tt.max, less, tt.popFromBackoffQ, NopMetrics{})
			q := &schedcore.QueuedPodInfo{PodInfo: schedcore.NewPodInfo(pod("p").Obj()), Timestamp: ts, UnschedulableCount: tt.unschedulable, ConsecutiveErrorsCount: tt.errors}
			if got := bq.backoffTime(q); !got.Equal(tt.want) {
				t.Errorf("backoffTime = %v, want %v", got, tt.want)
			}
			if !q.BackoffExpiration.Equal(tt.want) {
				t.Errorf("cached BackoffExpiration = %v, want %v", q.BackoffExpiration, tt.want)
			}
		})
	}
}

// TestBackoffFlushTimings fails a pod at epoch (x.5s), wakes it with an
// event so that it lands in backoffQ, then steps the fake clock and flushes.
func TestBackoffFlushTimings(t *testing.T) {
	tests := []struct {
		name            string
		popFromBackoffQ bool
		failures        int
		// steps are offsets from the failure; want is where the pod is after
		// a flush at each.
		steps []time.Duration
		want  []string
	}{
		{
			name:            "with SchedulerPopFromBackoffQ a backoff ending at 1.5s is released with its window at 2s",
			popFromBackoffQ: true, failures: 1,
			steps: []time.Duration{0, 500 * time.Millisecond, 1400 * time.Millisecond, 1500 * time.Millisecond},
			want:  []string{QueueBackoff, QueueBackoff, QueueBackoff, QueueActive},
		},
		{
			name:     "without it the backoff ends just after 1.5s",
			failures: 1,
			steps:    []time.Duration{0, time.Second, 1001 * time.Millisecond},
			want:     []string{QueueBackoff, QueueBackoff, QueueActive},
		},
		{
			name:     "the third failure waits four seconds",
			failures: 3,
			steps:    []time.Duration{3 * time.Second, 4 * time.Second, 4001 * time.Millisecond},
			want:     []string{QueueBackoff, QueueBackoff, QueueActive},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue(t, newFramework(t, defaultFilters()), WithPopFromBackoffQ(tt.popFromBackoffQ))
			p := pod("p").Obj()
			q.Add(logger, p)
			qpi := popAndReject(t, q, "p", []string{"A"}, nil)
			qpi.UnschedulableCount = tt.failures - 1
			if err := q.AddUnschedulableIfNotPresent(logger, qpi, q.SchedulingCycle()); err != nil {
				t.Fatal(err)
			}
			if got := where(q, p); got != QueueUnschedulable {
				t.Fatalf("after the failure the pod is in %s", got)
			}
			q.MoveAllToActiveOrBackoffQueue(logger, nodeLabel, nil, nil, nil)
			start := clk.Now()
			var got []string
			for _, s := range tt.steps {
				clk.SetTime(start.Add(s))
				q.flushBackoffQCompleted(logger)
				got = append(got, where(q, p))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestPopFromBackoffQ(t *testing.T) {
	tests := []struct {
		name            string
		popFromBackoffQ bool
		// rejectors nil: the pod failed with an error (error backoff heap).
		rejectors []string
		wantPop   bool
	}{
		{name: "with SchedulerPopFromBackoffQ a backing-off pod is popped when activeQ is empty", popFromBackoffQ: true, rejectors: []string{"A"}, wantPop: true},
		{name: "a pod backing off after an error is not popped early", popFromBackoffQ: true, wantPop: false},
		{name: "without SchedulerPopFromBackoffQ nothing is popped before the backoff ends", rejectors: []string{"A"}, wantPop: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newRecordingMetrics()
			q, _ := newQueue(t, newFramework(t, defaultFilters()), WithPopFromBackoffQ(tt.popFromBackoffQ), WithMetrics(m))
			q.Add(logger, pod("p").Obj())
			qpi := popAndReject(t, q, "p", tt.rejectors, nil)
			if err := q.AddUnschedulableIfNotPresent(logger, qpi, 1); err != nil {
				t.Fatal(err)
			}
			if tt.rejectors != nil {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeLabel, nil, nil, nil)
			}
			if l := q.Lengths(); l.Backoff != 1 {
				t.Fatalf("lengths %+v, want the pod in backoffQ", l)
			}
			got, ok := q.TryPop(logger)
			if ok != tt.wantPop {
				t.Fatalf("TryPop ok = %v, want %v", ok, tt.wantPop)
			}
			if ok {
				if got.Attempts != 2 {
					t.Errorf("Attempts = %d, want 2", got.Attempts)
				}
				if n := m.incoming[[2]string{QueueActive, EventPopFromBackoffQ}]; n != 1 {
					t.Errorf("incoming{active,PopFromBackoffQ} = %d, want 1", n)
				}
			}
		})
	}
}

func TestBackoffQOrdersByPriorityWithinAWindow(t *testing.T) {
	tests := []struct {
		name            string
		popFromBackoffQ bool
		want            []string
	}{
		{name: "with SchedulerPopFromBackoffQ pods whose backoff ends in the same second pop by priority", popFromBackoffQ: true, want: []string{"high", "low"}},
		{name: "without it they pop by backoff expiry", want: []string{"low", "high"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, clk := newQueue(t, newFramework(t, defaultFilters()), WithPopFromBackoffQ(tt.popFromBackoffQ))
			q.Add(logger, pod("low").Obj())
			low := popAndReject(t, q, "low", []string{"A"}, nil)
			if err := q.AddUnschedulableIfNotPresent(logger, low, 1); err != nil {
				t.Fatal(err)
			}
			clk.Step(100 * time.Millisecond)
			q.Add(logger, pod("high").Priority(10).Obj())
			high := popAndReject(t, q, "high", []string{"A"}, nil)
			if err := q.AddUnschedulableIfNotPresent(logger, high, 2); err != nil {
				t.Fatal(err)
			}
			q.MoveAllToActiveOrBackoffQueue(logger, nodeLabel, nil, nil, nil)
			clk.Step(5 * time.Second)
			var got []string
			// Pop straight from backoffQ: without the gate, flush first.
			q.backoffQ.lock.Lock()
			for q.backoffQ.podBackoffQ.Len() > 0 {
				qpi, _ := q.backoffQ.podBackoffQ.Pop()
				got = append(got, qpi.Pod.Name)
			}
			q.backoffQ.lock.Unlock()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

// waitForWaiters yields until the Run goroutines wait on the fake clock.
func waitForWaiters(clk interface{ HasWaiters() bool }) {
	for !clk.HasWaiters() {
		runtime.Gosched()
	}
}

func TestRunFlushesOnTheClock(t *testing.T) {
	tests := []struct {
		name string
		// toBackoff: wake the pod into backoffQ; otherwise it stays in the
		// unschedulable pool until the leftover flush.
		toBackoff bool
		// earliest is the clock offset before which Pop must not return.
		earliest time.Duration
	}{
		{name: "the backoff flush moves the pod once its backoff ends", toBackoff: true, earliest: time.Second},
		{name: "the leftover flush retries a pod left in the pool for more than five minutes", earliest: 5 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Without SchedulerPopFromBackoffQ, Pop waits for the flush.
			q, clk := newQueue(t, newFramework(t, defaultFilters()), WithPopFromBackoffQ(false))
			q.Add(logger, pod("p").Obj())
			qpi := popAndReject(t, q, "p", []string{"A"}, nil)
			if err := q.AddUnschedulableIfNotPresent(logger, qpi, 1); err != nil {
				t.Fatal(err)
			}
			if tt.toBackoff {
				q.MoveAllToActiveOrBackoffQueue(logger, nodeLabel, nil, nil, nil)
			}
			start := clk.Now()
			q.Run(logger)
			// Both flush goroutines must wait on the clock (the backoff
			// flush's first timer, the leftover flush's ticker) before it
			// moves: a step taken before one of them starts is lost to it.
			for clk.Waiters() < 2 {
				runtime.Gosched()
			}
			popped := make(chan *schedcore.QueuedPodInfo, 1)
			go func() {
				got, _ := q.Pop(logger)
				popped <- got
			}()
			step := 100 * time.Millisecond
			if !tt.toBackoff {
				step = 5 * time.Second
			}
			for {
				// Once the pod is in flight Pop has it: wait for the result.
				if len(q.InFlightPods()) > 0 {
					got := <-popped
					if got == nil || got.Pod.Name != "p" {
						t.Fatalf("Pop = %v", got)
					}
					if since := clk.Since(start); since < tt.earliest {
						t.Errorf("popped %v after the failure, want at least %v", since, tt.earliest)
					}
					return
				}
				if clk.Since(start) > tt.earliest+2*time.Minute {
					t.Fatalf("not popped %v after the failure; %+v", clk.Since(start), q.Lengths())
				}
				waitForWaiters(clk)
				clk.Step(step)
				// Give the flush goroutines real time to take the tick: a
				// tick they have not taken when the next one comes is lost,
				// and on a loaded machine Gosched alone may not run them.
				for deadline := time.Now().Add(20 * time.Millisecond); time.Now().Before(deadline) && len(q.InFlightPods()) == 0; {
					time.Sleep(200 * time.Microsecond)
				}
			}
		})
	}
}
