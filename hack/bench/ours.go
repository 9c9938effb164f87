package main

import (
	"fmt"
	"os"
	"runtime"
	"time"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// oursOptions are the flags that shape our side of a workload's row.
type oursOptions struct {
	repeat      int
	limit       int
	allocs      bool
	liveprofile string
	// preemption runs DefaultPreemption for pods that do not fit.
	preemption bool
	features   schedcore.Features
}

// oursFigures are our dry-run's figures on one workload: the fastest of
// opts.repeat runs (its wall and CPU time), the last run's counts.
type oursFigures struct {
	nodes, pending, scheduled int
	best, cpu                 time.Duration
	// load is the best run's time to build the engine from the cluster
	// (from the dry-run's start to the loaded engine).
	load time.Duration
	heap heapFigures
	// allocBytes and gcs are averaged over the runs (-allocs).
	allocBytes, gcs float64
	// bound is the last run's placements, pod ("ns/name") to node, for
	// the comparison with kube's (-kube run on a gang workload).
	bound map[string]string
}

func (o oursFigures) perCPU() float64 { return float64(o.pending) / o.cpu.Seconds() }

// measureOurs runs our dry-run on w opts.repeat times.
func measureOurs(w workload, cfg *configv1.KubeSchedulerConfiguration, reg schedcore.Registry, opts oursOptions) oursFigures {
	out := oursFigures{best: time.Duration(1<<63 - 1)}
	// Bytes allocated and collections while scheduling, summed over the
	// runs (-allocs).
	var allocBytes, gcs uint64
	for r := 0; r < opts.repeat; r++ {
		// Each run has a cluster of its own, handed over: the engine fills
		// in the pods' UIDs in place and the bench keeps nothing of it (the
		// pods the engine no longer uses are freed, as in the CLI's
		// dry-run, which reads its snapshot once).
		cl, err := w.load()
		if err != nil {
			fatal(w.name, err)
		}
		if opts.limit > 0 {
			limitPending(cl, opts.limit)
		}
		out.nodes = len(cl.Nodes)
		runtime.GC()
		peak := watchPeak()
		var measuring time.Duration
		// CPU time counts from the loaded engine, as kubebench's counts
		// from kube's synced cache (the loading is apart).
		var c0, load time.Duration
		var ms0, ms1 runtime.MemStats
		t0 := time.Now()
		rep, err := run(cl, cfg, reg, opts.features, opts.preemption, func() {
			load = time.Since(t0)
			if opts.allocs {
				runtime.ReadMemStats(&ms0)
			}
			c0 = cpuTime()
		}, func() {
			// The live heap after the last pod, the engine still in use;
			// the collections' CPU time is not the run's.
			m0 := cpuTime()
			if opts.allocs {
				runtime.ReadMemStats(&ms1)
				allocBytes += ms1.TotalAlloc - ms0.TotalAlloc
				gcs += uint64(ms1.NumGC - ms0.NumGC)
			}
			out.heap.live = liveHeap()
			if opts.liveprofile != "" {
				writeHeapProfile(opts.liveprofile)
			}
			measuring = cpuTime() - m0
		})
		c := cpuTime() - c0 - measuring
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", w.name, err)
			os.Exit(1)
		}
		out.heap.peak = peak.stop(out.heap.live)
		d := time.Duration(rep.Summary.DurationSeconds * float64(time.Second))
		if d < out.best {
			out.best, out.cpu, out.load = d, c, load
		}
		out.scheduled, out.pending = rep.Summary.Scheduled, rep.Summary.Pending
		out.bound = make(map[string]string, len(rep.Placements))
		for _, pl := range rep.Placements {
			out.bound[pl.Pod] = pl.Node
		}
	}
	out.allocBytes = float64(allocBytes) / float64(opts.repeat)
	out.gcs = float64(gcs) / float64(opts.repeat)
	return out
}
