package top

import (
	"testing"
	"time"
)

func TestDrainETA(t *testing.T) {
	q := func(name string, history ...float64) QueueStat {
		return QueueStat{Name: name, Pending: history[len(history)-1], History: history}
	}
	tests := []struct {
		name   string
		queues []QueueStat
		want   time.Duration
		ok     bool
	}{
		{"active and backoff shrink: their time, not the waiting pods'",
			[]QueueStat{q("active", 40, 20), q("backoff", 10, 10), q("unschedulable", 5, 5), q("gated", 0, 0)}, 30 * time.Second, true},
		{"only pods no node fits are left: no time, though pending shrank",
			[]QueueStat{q("active", 2, 0), q("backoff", 0, 0), q("unschedulable", 5, 5)}, 0, false},
		{"pods that left the active queue for the unschedulable pool do not make it empty",
			[]QueueStat{q("active", 10, 10), q("backoff", 0, 0), q("unschedulable", 5, 0)}, 0, false},
		{"growing: no time", []QueueStat{q("active", 1, 5), q("backoff", 0, 0)}, 0, false},
		{"nothing pending", []QueueStat{q("active", 0, 0), q("backoff", 0, 0)}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Stats{WindowSeconds: 20, Queues: tt.queues}
			got, ok := s.DrainETA()
			if ok != tt.ok || got != tt.want {
				t.Errorf("DrainETA() = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
	if _, ok := (&Stats{}).DrainETA(); ok {
		t.Error("a single sample (no window) gave a time")
	}
}
