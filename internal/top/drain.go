package top

import "time"

// Draining are the queues whose pods are being worked on: they leave by
// themselves, scheduled or moved to the unschedulable pool. Pods in the
// unschedulable pool and gated pods wait for a change of the cluster (or
// of their gates) and may never leave.
var Draining = []string{"active", "backoff"}

// DrainETA estimates when the draining queues (active and backoff) will
// be empty, from how fast they shrank over the window; ok is false when
// they are empty or not shrinking. The pods of the other queues are left
// out: a queue that holds pods no node fits never empties, so an "empty
// in" for every pending pod would be wrong.
func (s *Stats) DrainETA() (eta time.Duration, ok bool) {
	if s == nil || s.WindowSeconds <= 0 {
		return 0, false
	}
	var now, then float64
	for _, q := range s.Queues {
		if !contains(Draining, q.Name) {
			continue
		}
		now += q.Pending
		if len(q.History) > 0 {
			then += q.History[0]
		}
	}
	rate := (now - then) / s.WindowSeconds
	if now <= 0 || rate >= 0 {
		return 0, false
	}
	return time.Duration(now / -rate * float64(time.Second)), true
}
