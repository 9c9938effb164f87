package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestProgress(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var out bytes.Buffer
	p := newProgressOn(&out, clk, "dryrun")
	var lines []string
	step := func(d time.Duration, done, total int, detail string) {
		clk.Step(d)
		before := out.Len()
		p.update(done, total, "pods", detail)
		if out.Len() > before {
			lines = append(lines, strings.TrimPrefix(out.String()[before:], "\r\x1b[K"))
		}
	}
	step(500*time.Millisecond, 500, 50000, "") // under a second: nothing yet; the rate counts from here
	step(500*time.Millisecond, 1000, 50000, "1,000 placed, 0 unschedulable")
	step(100*time.Millisecond, 1100, 50000, "") // too soon after the last line
	step(time.Second, 12000, 50000, "11,000 placed, 1,000 unschedulable")
	step(4*time.Minute, 49999, 50000, "")
	// A line longer than the terminal would wrap, and \r redraw only its
	// last row: it is cut to fit.
	p.width = 40
	step(time.Second, 50000, 50000, "")
	want := []string{
		"dryrun: 1,000/50,000 pods (2%) · 2,000 pods/s · ~25s left · 1,000 placed, 0 unschedulable",
		"dryrun: 12,000/50,000 pods (24%) · 7,500 pods/s · ~5s left · 11,000 placed, 1,000 unschedulable",
		"dryrun: 49,999/50,000 pods (99%) · 206 pods/s · ~0s left",
		"dryrun: 50,000/50,000 pods (100%) · 20…",
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("lines (-want +got):\n%s", d)
	}
	p.done()
	if !strings.HasSuffix(out.String(), "\r\x1b[K") {
		t.Errorf("done did not clear the line: %q", out.String())
	}
	// Work that ends within a second prints nothing, not even the clearing.
	out.Reset()
	q := newProgressOn(&out, clk, "reading")
	q.update(10, 100, "objects", "")
	q.note("parsing x")
	q.done()
	if out.Len() != 0 {
		t.Errorf("short work printed %q", out.String())
	}
	// A nil progress (stderr not a terminal) does nothing.
	var none *progress
	none.update(1, 2, "pods", "")
	none.note("x")
	none.done()
	if newProgress(&out, "x") != nil {
		t.Error("a progress line on a buffer, which is no terminal")
	}
}

// A replay's line ends with the memory the process holds, read when the
// line is drawn, not at every step.
func TestProgressWithMemory(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var out bytes.Buffer
	reads := 0
	p := newProgressOn(&out, clk, "replaying").withMemory(func() uint64 { reads++; return 3<<30 + 400<<20 })
	p.steps(0, 10000)
	for i := 1; i <= 100; i++ {
		clk.Step(15 * time.Millisecond)
		p.steps(i*100, 10000)
	}
	want := "replaying: 9,500/10,000 events (95%) · 6,666 events/s · ~0s left · 3.4 GiB resident"
	if got := strings.TrimPrefix(out.String()[strings.LastIndex(out.String(), "\r"):], "\r\x1b[K"); got != want {
		t.Errorf("last line %q, want %q", got, want)
	}
	if drawn := strings.Count(out.String(), "\r"); reads != drawn {
		t.Errorf("memory read %d times for %d lines drawn", reads, drawn)
	}
	var none *progress
	if none.withMemory(func() uint64 { return 1 }) != nil {
		t.Error("withMemory on no progress line made one")
	}
}

// Runs of a comparison take seconds each: the rate counts from the start
// and keeps a decimal.
func TestProgressOfRuns(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var out bytes.Buffer
	p := newProgressOn(&out, clk, "comparing")
	clk.Step(4 * time.Second)
	p.runs(1, 3)
	if want := "\r\x1b[Kcomparing: 1/3 runs (33%) · 0.2 runs/s · ~8s left"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 50000: "50,000", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}

// A phase set before a second into the work is not drawn; one set later is,
// after the verb's name; done clears it.
func TestProgressSet(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var out bytes.Buffer
	p := newProgressOn(&out, clk, "capacity")
	p.set("loading the cluster")
	clk.Step(1500 * time.Millisecond)
	p.set("%s: %d/%d placed", "default/web", 392, 400)
	p.done()
	if want := "\r\x1b[Kcapacity: default/web: 392/400 placed\r\x1b[K"; out.String() != want {
		t.Errorf("progress wrote %q, want %q", out.String(), want)
	}
	var nilp *progress
	nilp.set("x")
	nilp.done()
}

func TestProgressOfSweepCellsShowsTheTimeElapsed(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var out bytes.Buffer
	p := newProgressOn(&out, clk, "sweeping")
	clk.Step(90 * time.Second)
	p.cells(3, 4)
	if want := "\r\x1b[Ksweeping: 3/4 cells (75%) · 0.0 cells/s · ~30s left · 1m30s elapsed"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}
