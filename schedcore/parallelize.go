package schedcore

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// DefaultParallelism is kube-scheduler's default worker count.
const DefaultParallelism = 16

// Parallelizer runs pieces of work over a fixed number of workers.
type Parallelizer struct {
	workers int
}

// NewParallelizer returns a parallelizer with n workers (at least 1).
func NewParallelizer(n int) Parallelizer {
	if n < 1 {
		n = 1
	}
	return Parallelizer{workers: n}
}

// Workers returns the worker count.
func (p Parallelizer) Workers() int { return p.workers }

// Until calls do(i) for i in [0, pieces), in parallel, and returns when all
// are done or ctx is cancelled. Pieces are handed out in chunks so that the
// per-piece overhead is an atomic add. No more workers run than the
// process has CPUs (GOMAXPROCS): more would only wait for a CPU, at the
// cost of their start and of the switches between them; the calling
// goroutine is one of them. Which pieces a worker gets is not fixed, so
// callers never depend on it (each piece writes its own slots).
func (p Parallelizer) Until(ctx context.Context, pieces int, do func(i int)) {
	p.UntilAtLeast(ctx, pieces, 4, do)
}

// UntilAtLeast is Until, in parallel only when there are at least atLeast
// pieces: a parallel step costs a goroutine's start and, when it ends, the
// idle worker's search for more work (some microseconds of CPU in all),
// which a few pieces of light work do not repay. Below atLeast the pieces run
// in order on the calling goroutine, which changes nothing for callers
// that, as Until's must, do not depend on which goroutine runs a piece.
func (p Parallelizer) UntilAtLeast(ctx context.Context, pieces, atLeast int, do func(i int)) {
	if pieces <= 0 {
		return
	}
	workers := min(p.workers, pieces, runtime.GOMAXPROCS(0))
	if workers <= 1 || pieces < max(atLeast, 4) {
		for i := 0; i < pieces; i++ {
			if ctx.Err() != nil {
				return
			}
			do(i)
		}
		return
	}
	w := &untilWork{ctx: ctx, pieces: pieces, chunk: chunkSize(pieces, workers), do: do}
	w.wg.Add(workers - 1)
	for range workers - 1 {
		go w.worker()
	}
	w.run()
	w.wg.Wait()
}

// untilWork is one Until call's pieces, shared by its workers.
type untilWork struct {
	ctx           context.Context
	next          atomic.Int64
	pieces, chunk int
	do            func(i int)
	wg            sync.WaitGroup
}

func (w *untilWork) worker() {
	defer w.wg.Done()
	w.run()
}

// run takes chunks of pieces until none is left or ctx is cancelled.
func (w *untilWork) run() {
	for {
		if w.ctx.Err() != nil {
			return
		}
		start := int(w.next.Add(int64(w.chunk))) - w.chunk
		if start >= w.pieces {
			return
		}
		for i := start; i < min(start+w.chunk, w.pieces); i++ {
			w.do(i)
		}
	}
}

// chunkSize follows kube's rule: about sqrt(pieces), at most pieces/workers.
func chunkSize(pieces, workers int) int {
	s := 1
	for s*s < pieces {
		s++
	}
	if r := pieces/workers + 1; r < s {
		s = r
	}
	if s < 1 {
		s = 1
	}
	return s
}
