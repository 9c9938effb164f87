package main

import (
	"runtime"
	"runtime/metrics"
	"sync"
)

// The live heap, measured the same way here and in hack/bench (heap.go,
// the same code): HeapAlloc right after forced collections, while the
// caller keeps the scheduler and its state reachable, and the largest
// live heap a collection found during the run. HeapAlloc read without a
// collection moves with the GC's timing (garbage not yet swept counts).

// liveHeap is the heap in use now: HeapAlloc after two collections (the
// second frees what the first's finalizers released).
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// peakWatch keeps the largest live heap marked by a collection
// (/gc/heap/live:bytes), sampled once per GC cycle from a finalizer that
// re-arms itself: a few microseconds per cycle. A cycle whose finalizers
// run after the next one started is not sampled.
type peakWatch struct {
	mu     sync.Mutex
	peak   uint64
	done   bool
	sample []metrics.Sample
}

// gcSentinel is the object whose finalizer samples (a pointer field: not
// tiny-allocated, so it is freed by the first collection that finds it
// unreachable).
type gcSentinel struct{ _ *byte }

func watchPeak() *peakWatch {
	w := &peakWatch{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	w.arm()
	return w
}

func (w *peakWatch) arm() {
	runtime.SetFinalizer(new(gcSentinel), func(*gcSentinel) {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.done {
			return
		}
		w.read()
		w.arm()
	})
}

// read samples the live heap (w.mu held).
func (w *peakWatch) read() {
	metrics.Read(w.sample)
	if w.sample[0].Value.Kind() == metrics.KindUint64 {
		if v := w.sample[0].Value.Uint64(); v > w.peak {
			w.peak = v
		}
	}
}

// stop ends the watch and returns the peak, at least live (the live heap
// measured at the end).
func (w *peakWatch) stop(live uint64) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	return max(w.peak, live)
}
