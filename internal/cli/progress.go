package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
	"k8s.io/utils/clock"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/memusage"
)

// progressEvery is how often the progress line is redrawn at most.
const progressEvery = 200 * time.Millisecond

// progressDelay is how long work runs before its progress shows: work that
// ends sooner prints nothing.
const progressDelay = time.Second

// progress shows long work on one line of stderr, redrawn in place, when
// stderr is a terminal: what is being done, how far, how fast and how long
// is left. It is cleared when the work ends, so the output that follows
// (and anything piped) never contains it. A nil *progress does nothing.
type progress struct {
	w     io.Writer
	clock clock.PassiveClock
	// what is being done ("placing pods").
	what string
	// width is the terminal's: a longer line would wrap, and \r would
	// redraw only its last row. 0: no limit.
	width int

	// memory, when set, is read as the line is drawn and shown at its
	// end ("1.2 GiB resident"): a long replay says how much it holds.
	memory func() uint64

	mu sync.Mutex
	// start is when the work began, first when the first unit was
	// counted (the rate and the time left are measured from there, not
	// from the set-up before it), last when the line was drawn.
	start, first, last time.Time
	shown              bool
}

// newProgress returns a progress line on w for a verb, nil unless w is a
// terminal.
func newProgress(w io.Writer, what string) *progress {
	if !isTTY(w) {
		return nil
	}
	p := newProgressOn(w, clock.RealClock{}, what)
	p.width = 80
	if cols, _, err := term.GetSize(int(w.(*os.File).Fd())); err == nil && cols > 0 {
		p.width = cols
	}
	return p
}

// newProgressOn returns a progress line on any w (tests give a buffer and a
// fake clock).
func newProgressOn(w io.Writer, c clock.PassiveClock, what string) *progress {
	return &progress{w: w, clock: c, what: what, start: c.Now()}
}

// withMemory makes the line end with the process's memory, read by
// memory when the line is drawn (memusage.Resident for a verb).
func (p *progress) withMemory(memory func() uint64) *progress {
	if p != nil {
		p.memory = memory
	}
	return p
}

// note shows a phase without a count ("parsing cluster.json").
func (p *progress) note(text string) { p.set("%s", text) }

// set shows a phase or a free-form count ("35 template nodes, web: 392/400
// placed"), formatted only when the line is drawn.
func (p *progress) set(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.due() {
		p.show(p.what + ": " + fmt.Sprintf(format, args...))
	}
}

// due reports whether the line may be drawn now: a second into the work,
// and not twice within progressEvery.
func (p *progress) due() bool {
	now := p.clock.Now()
	if now.Sub(p.start) < progressDelay || now.Sub(p.last) < progressEvery {
		return false
	}
	p.last = now
	return true
}

// show draws the line: \r and erase, so the new text replaces the old
// whatever its length.
func (p *progress) show(line string) {
	if r := []rune(line); p.width > 1 && len(r) > p.width-1 {
		line = string(r[:p.width-2]) + "…"
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
	p.shown = true
}

// update reports done of total units (total 0: unknown) and a detail.
func (p *progress) update(done, total int, unit, detail string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first.IsZero() {
		p.first = p.clock.Now()
	}
	if !p.due() {
		return
	}
	elapsed := p.clock.Now().Sub(p.first)
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", p.what, count(done))
	if total > 0 {
		fmt.Fprintf(&b, "/%s %s (%d%%)", count(total), unit, done*100/total)
	} else {
		fmt.Fprintf(&b, " %s", unit)
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done) / elapsed.Seconds()
	}
	if rate < 10 {
		fmt.Fprintf(&b, " · %.1f %s/s", rate, unit)
	} else {
		fmt.Fprintf(&b, " · %s %s/s", count(int(rate)), unit)
	}
	if total > 0 && rate > 0 && done < total {
		left := time.Duration(float64(total-done) / rate * float64(time.Second))
		fmt.Fprintf(&b, " · ~%s left", roundLeft(left))
	}
	if detail != "" {
		fmt.Fprintf(&b, " · %s", detail)
	}
	if p.memory != nil {
		fmt.Fprintf(&b, " · %s resident", memusage.Format(p.memory()))
	}
	p.show(b.String())
}

// steps and runs report a replay's trace steps and a comparison's runs.
func (p *progress) steps(done, total int) { p.update(done, total, "events", "") }

// runs are counted from the start: the first is done only after a whole
// run, not at once as pods and events are.
func (p *progress) runs(done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.first.IsZero() {
		p.first = p.start
	}
	p.mu.Unlock()
	p.update(done, total, "runs", "")
}

// cells are a sweep's cells, counted from the start as runs are, with the
// time elapsed.
func (p *progress) cells(done, total int) {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.first.IsZero() {
		p.first = p.start
	}
	elapsed := p.clock.Now().Sub(p.start).Round(time.Second)
	p.mu.Unlock()
	p.update(done, total, "cells", elapsed.String()+" elapsed")
}

// done clears the line, if it was shown.
func (p *progress) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// count renders n with thousands separators: 50,000.
func count(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + count(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// roundLeft rounds a time left as a person would say it: 45s, 3m10s, 1h5m.
func roundLeft(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(10 * time.Second).String()
	default:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	}
}

// listProgress returns ctx with a progress line on errOut for
// kube.ListCluster when errOut is a terminal, and the func that clears it.
func listProgress(ctx context.Context, errOut io.Writer) (context.Context, func()) {
	p := newProgress(errOut, "listing the cluster")
	if p == nil {
		return ctx, func() {}
	}
	listed := 0
	return kube.WithListProgress(ctx, func(n int) {
		listed += n
		p.update(listed, 0, "objects", "")
	}), p.done
}
