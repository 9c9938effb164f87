package replay

import (
	"context"
	"runtime"
	"sync"
)

// Job is one replay of a sweep.
type Job struct {
	// Name labels the job in errors.
	Name    string
	Trace   *Trace
	Options Options
}

// Sweep replays every job, workers at a time (0: one per core), and
// returns the results in job order. Each replay runs its cycles on one
// goroutine unless its options set Parallelism: the cores are used by
// running replays side by side, which is faster than splitting each cycle.
// Jobs may share a trace. The first error cancels the other jobs.
func Sweep(ctx context.Context, jobs []Job, workers int, progress func(done, total int)) ([]*Result, error) {
	out := make([]*Result, len(jobs))
	err := Parallel(ctx, len(jobs), workers, progress, func(ctx context.Context, i int) error {
		o := jobs[i].Options
		if o.Parallelism == 0 {
			o.Parallelism = 1
		}
		res, err := Run(ctx, jobs[i].Trace, o)
		if err != nil {
			if jobs[i].Name != "" {
				return &JobError{Name: jobs[i].Name, Err: err}
			}
			return err
		}
		out[i] = res
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// JobError names the job of a sweep that failed.
type JobError struct {
	Name string
	Err  error
}

func (e *JobError) Error() string { return e.Name + ": " + e.Err.Error() }
func (e *JobError) Unwrap() error { return e.Err }

// Parallel calls run(ctx, i) for i in [0, n), workers at a time (0: one per
// core), and returns the first error (cancelling ctx for the calls not
// started or still running). progress, if set, is called after each call
// that ends, with the number done, from one goroutine at a time.
func Parallel(ctx context.Context, n, workers int, progress func(done, total int), run func(ctx context.Context, i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		mu       sync.Mutex
		firstErr error
		done     int
		wg       sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				err := run(ctx, i)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				done++
				if progress != nil && firstErr == nil {
					progress(done, n)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}
