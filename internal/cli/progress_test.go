package cli

import (
	"bytes"
	"testing"
	"time"
)

// The line is drawn only once the work has taken a second, says what the
// work set last, and is cleared at the end; when stderr is not a terminal
// nothing is drawn at all.
func TestProgressShowsLongWorkOnly(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	p := &progress{w: &buf, enabled: true, now: func() time.Time { return now }, start: now}
	p.set("loading the cluster")
	p.draw()
	if buf.Len() != 0 {
		t.Fatalf("drawn before a second: %q", buf.String())
	}
	now = now.Add(1500 * time.Millisecond)
	p.draw()
	p.set("%s: %d placed", "web", 40)
	now = now.Add(time.Second)
	p.draw()
	p.done()
	if want := "\r\033[Kloading the cluster (1s)\r\033[Kweb: 40 placed (2s)\r\033[K"; buf.String() != want {
		t.Errorf("progress wrote %q, want %q", buf.String(), want)
	}

	var quiet bytes.Buffer
	q := newProgress(&quiet)
	q.set("x")
	q.start = time.Unix(0, 0)
	q.draw()
	q.done()
	if quiet.Len() != 0 {
		t.Errorf("progress on a buffer (not a terminal): %q", quiet.String())
	}
}
