package fgd

import (
	"context"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/openb"
	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// collect runs the collector twice: what a sync.Pool holds survives one
// collection in its victim cache.
func collect() {
	runtime.GC()
	runtime.GC()
}

// TestReplayLeavesNothingBehind replays the small trace with the DRA row
// and a GpuShare row and checks that, once the replay has returned and
// its result alone is kept, the engine's snapshot, its DRA manager (every
// claim, slice and allocation) and the GpuShare plugin are garbage:
// nothing package-level (a cache, a pool, a goroutine left running) holds
// on to a replay's state, so replays one after the other do not pile up.
func TestReplayLeavesNothingBehind(t *testing.T) {
	tr, policies, _ := smallTrace(t)
	for _, p := range policies {
		if !p.DRA && p.Name != KubeDefaultName {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			w := openb.TunedWorkload(tr.Nodes, tr.Pods, tr.CapacityMilli, 1.3, 42, openb.Epoch)
			pr, err := prepare(tr, w, replayTrace(w), p, 42, 1)
			if err != nil {
				t.Fatal(err)
			}
			var snap weak.Pointer[schedcore.Snapshot]
			pr.options.Probes = append(pr.options.Probes, replay.Probe{Name: "watch", Fn: func(_ time.Time, s *schedcore.Snapshot) float64 {
				snap = weak.Make(s)
				return 0
			}})
			res, err := replay.Run(context.Background(), pr.trace, pr.options)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pr.finish(res); err != nil {
				t.Fatal(err)
			}
			dra, share := weak.Make(pr.books.dra), weak.Make(pr.books.share)
			if dra.Value() == nil && share.Value() == nil || snap.Value() == nil {
				t.Fatal("the replay has no snapshot, DRA manager or GpuShare to watch")
			}
			pr = nil
			collect()
			if snap.Value() != nil {
				t.Error("the replay's snapshot outlives it")
			}
			if dra.Value() != nil {
				t.Error("the replay's DRA manager outlives it")
			}
			if share.Value() != nil {
				t.Error("the replay's GpuShare plugin outlives it")
			}
			runtime.KeepAlive(res)
		})
	}
}

// TestSweepLetsGoOfEndedReplays runs a sweep of the DRA row and a GpuShare
// row on three seeds, one replay at a time, and checks at the end of each
// replay that what every ended replay prepared (its trace, its books and,
// through them, its engine's DRA manager or GpuShare plugin) is garbage:
// a sweep holds the runs' results, not their replays, however many
// replays it has.
func TestSweepLetsGoOfEndedReplays(t *testing.T) {
	tr, policies, _ := smallTrace(t)
	var sel []Policy
	for _, p := range policies {
		if p.DRA || p.Name == KubeDefaultName {
			sel = append(sel, p)
		}
	}
	var (
		preps  []weak.Pointer[prepared]
		books  []weak.Pointer[gpuBooks]
		traces []weak.Pointer[replay.Trace]
	)
	sweepPrepare = func(t *Trace, w openb.Workload, tr *replay.Trace, p Policy, seed int64, parallelism int) (*prepared, error) {
		pr, err := prepare(t, w, tr, p, seed, parallelism)
		if err == nil {
			preps, books = append(preps, weak.Make(pr)), append(books, weak.Make(pr.books))
			if p.DRA {
				traces = append(traces, weak.Make(pr.trace))
			}
		}
		return pr, err
	}
	defer func() { sweepPrepare = prepare }()
	jobs := Jobs(sel, 3)
	checked := 0
	// One worker: when a replay ends, every replay prepared so far has.
	runs, err := Sweep(context.Background(), tr, jobs, 1.3, 1, func(done, total int) {
		collect()
		if len(preps) != done {
			t.Errorf("after %d of %d replays: %d prepared", done, total, len(preps))
		}
		for i := range preps {
			if preps[i].Value() != nil || books[i].Value() != nil {
				t.Errorf("after %d of %d replays: the %d-th replay's run and books are still held", done, total, i+1)
			}
		}
		for _, tr := range traces {
			if tr.Value() != nil {
				t.Errorf("after %d of %d replays: the DRA trace of an ended replay is still held", done, total)
			}
		}
		checked++
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked != len(jobs) || len(preps) != len(jobs) {
		t.Fatalf("%d replays checked, %d prepared; want %d", checked, len(preps), len(jobs))
	}
	for i, r := range runs {
		if r == nil || r.Policy != jobs[i].Policy.Name || r.Seed != jobs[i].Seed {
			t.Fatalf("run %d is %+v; want %s on seed %d", i, r, jobs[i].Policy.Name, jobs[i].Seed)
		}
	}
}

// TestSweepOrderTakesSeedBySeedDRAFirst checks the order Sweep takes its
// jobs in: seed by seed, so that only a seed's workload is in memory, and
// the DRA row, the longest, first within each.
func TestSweepOrderTakesSeedBySeedDRAFirst(t *testing.T) {
	a, d := Policy{Name: "A"}, Policy{Name: "D", DRA: true}
	jobs := Jobs([]Policy{a, d}, 2)
	var got []string
	for _, i := range sweepOrder(jobs) {
		got = append(got, jobs[i].Policy.Name+"/"+string(rune('0'+jobs[i].Seed-42)))
	}
	want := []string{"D/0", "A/0", "D/1", "A/1"}
	if len(got) != len(want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}
