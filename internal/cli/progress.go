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

// progressInterval is how often the line is redrawn.
const progressInterval = 200 * time.Millisecond

// progress is one line on stderr, redrawn in place while long work runs,
// when stderr is a terminal (scripts and tests get nothing). The work sets
// what the line says; a ticker draws it once the work has taken a second.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	now     func() time.Time
	start   time.Time
	msg     string
	shown   bool
	stop    chan struct{}
	wg      sync.WaitGroup
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, enabled: isTTY(w), now: time.Now}
	p.start = p.now()
	if p.enabled {
		p.stop = make(chan struct{})
		p.wg.Add(1)
		go p.loop()
	}
	return p
}

func (p *progress) loop() {
	defer p.wg.Done()
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.draw()
		}
	}
}

// set says what the work is doing now.
func (p *progress) set(format string, args ...any) {
	if p == nil || !p.enabled {
		return
	}
	p.mu.Lock()
	p.msg = fmt.Sprintf(format, args...)
	p.mu.Unlock()
}

// draw redraws the line, once the work has taken progressDelay.
func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.msg == "" || p.now().Sub(p.start) < progressDelay {
		return
	}
	p.shown = true
	fmt.Fprintf(p.w, "\r\033[K%s (%ds)", p.msg, int(p.now().Sub(p.start).Seconds()))
}

// done stops the ticker and clears the line.
func (p *progress) done() {
	if p == nil {
		return
	}
	if p.stop != nil {
		close(p.stop)
		p.wg.Wait()
		p.stop = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}
