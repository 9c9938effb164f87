package schedcore

import (
	"context"
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
// per-piece overhead is an atomic add.
func (p Parallelizer) Until(ctx context.Context, pieces int, do func(i int)) {
	if pieces <= 0 {
		return
	}
	workers := min(p.workers, pieces)
	if workers == 1 || pieces < 4 {
		for i := 0; i < pieces; i++ {
			if ctx.Err() != nil {
				return
			}
			do(i)
		}
		return
	}
	chunk := chunkSize(pieces, workers)
	var next atomic.Int64
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := 0; w < workers; w++ {
		go func() {
			defer wg.Done()
			for {
				if ctx.Err() != nil {
					return
				}
				start := int(next.Add(int64(chunk))) - chunk
				if start >= pieces {
					return
				}
				end := min(start+chunk, pieces)
				for i := start; i < end; i++ {
					do(i)
				}
			}
		}()
	}
	wg.Wait()
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
