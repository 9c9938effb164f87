package queue

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNextFlushAndFlushMovePodsWhenRunWould(t *testing.T) {
	tests := []struct {
		name string
		// setup leaves pod p somewhere after one failed attempt at epoch.
		rejectors []string
		toBackoff bool
		gated     bool
		opts      []Option
		// want is NextFlush's offset from epoch; where is p's sub-queue
		// after Flush just before and at that instant.
		want          time.Duration
		before, after string
	}{
		{
			name: "an error backs off 1s, aligned to whole seconds, and is taken on the next whole second",
			want: 1500 * time.Millisecond, before: QueueBackoff, after: QueueActive,
		},
		{
			name:      "without SchedulerPopFromBackoffQ the flush ticks a second apart from Run and takes the pod once its backoff has passed",
			toBackoff: true, rejectors: []string{"A"}, opts: []Option{WithPopFromBackoffQ(false)},
			want: 2 * time.Second, before: QueueBackoff, after: QueueActive,
		},
		{
			name:      "a pod left in the unschedulable pool is retried on the first 30s tick more than five minutes later",
			rejectors: []string{"A"},
			want:      5*time.Minute + 30*time.Second, before: QueueUnschedulable, after: QueueActive,
		},
		{
			name:      "a shorter maximum stay is honoured on the same ticks",
			rejectors: []string{"A"}, opts: []Option{WithPodMaxInUnschedulablePodsDuration(time.Minute)},
			want: 90 * time.Second, before: QueueUnschedulable, after: QueueActive,
		},
		{
			name:  "a gated pod is re-evaluated by the leftover flush and stays gated",
			gated: true,
			want:  5*time.Minute + 30*time.Second, before: QueueGated, after: QueueGated,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := schedulingGates()
			q, clk := newQueue(t, newFramework(t, defaultFilters(), gate), tt.opts...)
			origin := clk.Now()
			pw := pod("p")
			if tt.gated {
				pw = pw.SchedulingGates("g")
			}
			p := pw.Obj()
			q.Add(logger, p)
			if !tt.gated {
				qpi := popAndReject(t, q, "p", tt.rejectors, nil)
				if err := q.AddUnschedulableIfNotPresent(logger, qpi, q.SchedulingCycle()); err != nil {
					t.Fatal(err)
				}
				if tt.toBackoff {
					q.MoveAllToActiveOrBackoffQueue(logger, nodeLabel, nil, nil, nil)
				}
			}
			next, ok := q.NextFlush(origin)
			if !ok || next.Sub(origin) != tt.want {
				t.Fatalf("NextFlush = %v (ok %v), want origin+%v", next.Sub(origin), ok, tt.want)
			}
			clk.SetTime(next.Add(-time.Millisecond))
			q.Flush(logger, origin)
			clk.SetTime(next.Add(-500 * time.Millisecond))
			q.Flush(logger, origin)
			before := where(q, p)
			clk.SetTime(next)
			q.Flush(logger, origin)
			if diff := cmp.Diff([]string{tt.before, tt.after}, []string{before, where(q, p)}); diff != "" {
				t.Errorf("sub-queue before and at NextFlush (-want +got):\n%s", diff)
			}
			if tt.gated {
				// Flushed at next: the following flush is a full stay later.
				if again, ok := q.NextFlush(origin); !ok || again.Sub(next) != 5*time.Minute+30*time.Second {
					t.Errorf("after the flush NextFlush = next+%v (ok %v), want next+5m30s", again.Sub(next), ok)
				}
			}
		})
	}
}

func TestNextFlushIsFalseWhenOnlyAnEventCanMovePods(t *testing.T) {
	q, clk := newQueue(t, newFramework(t, defaultFilters()), WithPodMaxInUnschedulablePodsDuration(time.Minute))
	if _, ok := q.NextFlush(clk.Now()); ok {
		t.Error("an empty queue has a next flush")
	}
	q.Add(logger, pod("p").Obj())
	if _, ok := q.NextFlush(clk.Now()); ok {
		t.Error("a pod in activeQ needs no flush, but NextFlush is set")
	}
}

func TestTickAfter(t *testing.T) {
	o := epoch
	tests := []struct {
		t    time.Time
		want time.Time
	}{
		{o.Add(-time.Hour), o},
		{o, o.Add(30 * time.Second)},
		{o.Add(29 * time.Second), o.Add(30 * time.Second)},
		{o.Add(30 * time.Second), o.Add(60 * time.Second)},
	}
	for _, tt := range tests {
		if got := tickAfter(o, 30*time.Second, tt.t); !got.Equal(tt.want) {
			t.Errorf("tickAfter(origin, 30s, origin+%v) = origin+%v, want origin+%v", tt.t.Sub(o), got.Sub(o), tt.want.Sub(o))
		}
	}
}
