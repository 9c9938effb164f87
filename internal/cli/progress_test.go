package cli

import (
	"bytes"
	"testing"
	"time"
)

// Progress shows only after a second of work, at most every 100ms, and is
// cleared at the end; when stderr is not a terminal it shows nothing.
func TestProgressShowsLongWorkOnly(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	p := &progress{w: &buf, enabled: true, now: func() time.Time { return now }, start: now}
	p.update("step %d", 1)
	if buf.Len() != 0 {
		t.Fatalf("shown before a second: %q", buf.String())
	}
	now = now.Add(1100 * time.Millisecond)
	p.update("step %d", 2)
	now = now.Add(50 * time.Millisecond)
	p.update("step %d", 3)
	now = now.Add(100 * time.Millisecond)
	p.update("step %d", 4)
	p.done()
	if want := "\r\033[Kstep 2\r\033[Kstep 4\r\033[K"; buf.String() != want {
		t.Errorf("progress wrote %q, want %q", buf.String(), want)
	}
	var quiet bytes.Buffer
	q := newProgress(&quiet)
	q.start = time.Unix(0, 0)
	q.update("x")
	q.done()
	if quiet.Len() != 0 {
		t.Errorf("progress on a buffer (not a terminal): %q", quiet.String())
	}
}
