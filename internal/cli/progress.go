package cli

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progressDelay is how long work runs before progress shows: quick runs
// print nothing.
const progressDelay = time.Second

// progressInterval is the least time between two updates.
const progressInterval = 100 * time.Millisecond

// progress is one line on stderr, rewritten in place, for long work, when
// stderr is a terminal (scripts and tests get nothing).
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	now     func() time.Time
	start   time.Time
	last    time.Time
	shown   bool
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, enabled: isTTY(w), now: time.Now}
	p.start = p.now()
	return p
}

// update shows the line, at most every progressInterval and only after
// progressDelay.
func (p *progress) update(format string, args ...any) {
	if p == nil || !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if now.Sub(p.start) < progressDelay || now.Sub(p.last) < progressInterval {
		return
	}
	p.last, p.shown = now, true
	fmt.Fprintf(p.w, "\r\033[K"+format, args...)
}

// done clears the line.
func (p *progress) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}
