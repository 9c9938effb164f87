package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
	"github.com/kubectl-sched/kubectl-sched/internal/gen/workload"
)

// reProgress is the progress line of a dry-run: how many of how many
// pods, how fast, how long left, what became of them (cut at the pane's
// width).
var reProgress = regexp.MustCompile(`dryrun: [0-9,]+/30,000 pods \(\d+%\) · [0-9,]+ pods/s · ~\S+ left · [0-9,]+ placed`)

// TestDryRunShowsProgressOnATerminal drives the real binary in an 80x24
// tmux pane: a dry-run of 30,000 pending pods (about 5 s: 6,000 ended
// within the progress line's first second), its output redirected to a
// file, shows on the terminal (stderr) how far it is, how fast and how long
// is left, on one row that fits the pane; the row is gone when it ends,
// and the file holds only the report.
func TestDryRunShowsProgressOnATerminal(t *testing.T) {
	tmux := ensureTmux(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	w, err := workload.Generate("Mixed", workload.Params{Nodes: 300, MeasurePods: 30000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := v1list.Marshal("json", w.Objects()...)
	if err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(dir, "cluster.json")
	if err := os.WriteFile(dump, b, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.json")
	pane := &tmuxPane{t: t, tmux: tmux, sock: filepath.Join(dir, "tmux.sock")}
	cmdline := fmt.Sprintf("%s dryrun -f %s -o json > %s; echo EXITED $?; sleep 300", bin, dump, out)
	if o, err := pane.cmd("new-session", "-d", "-s", "top", "-x", "80", "-y", "24", cmdline); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, o)
	}
	t.Cleanup(func() { _, _ = pane.cmd("kill-server") })

	s := pane.waitScreen("the progress line", 3*time.Minute, func(s string) bool {
		return reProgress.MatchString(s) || strings.Contains(s, "EXITED")
	})
	if !reProgress.MatchString(s) {
		t.Fatalf("the dry-run ended without showing its progress:\n%s", s)
	}
	t.Logf("progress:\n%s", strings.TrimRight(s, "\n"))
	if rows := strings.Count(strings.TrimRight(s, "\n"), "\n") + 1; rows != 1 {
		t.Errorf("the progress takes %d rows of the pane, want 1:\n%s", rows, s)
	}
	s = pane.waitScreen("the dry-run's end", 5*time.Minute, func(s string) bool { return strings.Contains(s, "EXITED") })
	if strings.TrimSpace(s) != "EXITED 0" {
		t.Errorf("after the dry-run, the screen shows more than its exit code 0 (the progress was not cleared?):\n%s", s)
	}
	report, err := os.ReadFile(out)
	if err != nil || !strings.HasPrefix(string(report), "{") || strings.Contains(string(report), "pods/s") {
		t.Errorf("the report file holds more than the report (%v):\n%.200s", err, report)
	}
}
