package cli

import (
	"runtime/debug"
	"sync"
)

// gcPause counts the callers that have the collector off (explains run
// side by side in one process: tests, an embedding program), so that the
// last one puts back the percentage the first one found.
var gcPause struct {
	sync.Mutex
	n, percent int
}

// pauseGC turns the collector off (after a cycle in progress finishes)
// until the returned resume is called.
func pauseGC() (resume func()) {
	gcPause.Lock()
	if gcPause.n == 0 {
		gcPause.percent = debug.SetGCPercent(-1)
	}
	gcPause.n++
	gcPause.Unlock()
	return func() {
		gcPause.Lock()
		if gcPause.n--; gcPause.n == 0 {
			debug.SetGCPercent(gcPause.percent)
		}
		gcPause.Unlock()
	}
}
