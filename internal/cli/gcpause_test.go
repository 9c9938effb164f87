package cli

import (
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's percentage.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

// TestPauseGCPutsThePercentageBackOnce: nested pauses keep the collector
// off until the last resume, which puts back what the first pause found.
func TestPauseGCPutsThePercentageBackOnce(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(77))
	first, second := pauseGC(), pauseGC()
	if got := gcPercent(); got != -1 {
		t.Fatalf("paused twice: percentage %d, want -1", got)
	}
	first()
	if got := gcPercent(); got != -1 {
		t.Fatalf("one of two resumed: percentage %d, want -1", got)
	}
	second()
	if got := gcPercent(); got != 77 {
		t.Fatalf("both resumed: percentage %d, want 77", got)
	}
}
