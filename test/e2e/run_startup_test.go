package e2e

import (
	"bufio"
	"errors"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// startupRun is the kubectl-sched binary running `run`, its stderr read
// line by line as it comes.
type startupRun struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	lines []string
	// seen gets each line's text and the time it was read.
	seen chan stampedLine
	done chan struct{}
}

type stampedLine struct {
	text string
	at   time.Time
}

func startRunProcess(t *testing.T, bin string, args ...string) *startupRun {
	t.Helper()
	r := &startupRun{cmd: exec.Command(bin, append([]string{"run"}, args...)...), seen: make(chan stampedLine, 1000), done: make(chan struct{})}
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.cmd.Process.Kill(); <-r.done })
	go func() {
		defer close(r.done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			r.mu.Lock()
			r.lines = append(r.lines, sc.Text())
			r.mu.Unlock()
			select { // a full buffer drops lines for waitLine, never blocks run
			case r.seen <- stampedLine{sc.Text(), time.Now()}:
			default:
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
	}()
	return r
}

// waitLine waits for a line containing s and returns when it was read.
func (r *startupRun) waitLine(t *testing.T, s string, timeout time.Duration) time.Time {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l := <-r.seen:
			if strings.Contains(l.text, s) {
				return l.at
			}
		case <-deadline:
			t.Fatalf("no line with %q within %s:\n%s", s, timeout, r.stderr())
		}
	}
}

// wait waits for the process and returns its exit code and when it ended.
func (r *startupRun) wait(t *testing.T) (int, time.Time) {
	t.Helper()
	err := r.cmd.Wait()
	at := time.Now()
	<-r.done
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, at
	case errors.As(err, &ee):
		return ee.ExitCode(), at
	}
	t.Fatalf("waiting for run: %v", err)
	return 0, at
}

func (r *startupRun) stderr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.lines, "\n")
}

func (r *startupRun) lastLine() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.lines) == 0 {
		return ""
	}
	return r.lines[len(r.lines)-1]
}

// TestRunStartupAgainstAStoppedAPIServer: `kubectl sched run` (the binary)
// against a cluster whose kube-apiserver is down logs the failure at once
// and, every 10s, the kinds it waits for; it exits 1 within a second of
// --sync-timeout, and 130 or 143 within a second of SIGINT or SIGTERM,
// each with one line saying what it was waiting for.
func TestRunStartupAgainstAStoppedAPIServer(t *testing.T) {
	c := cluster.StartForTest(t, cluster.Options{})
	if err := c.StopAPIServer(0); err != nil {
		t.Fatal(err)
	}
	bin := buildBinary(t)
	base := []string{"--kubeconfig", c.Kubeconfig, "--metrics-bind-address", "0"}
	const failing = `"Cannot reach the API server; client-go retries with backoff" err="GET ` // then the URL

	t.Run("the sync timeout", func(t *testing.T) {
		r := startRunProcess(t, bin, append(base, "--sync-timeout", "11s")...)
		start := r.waitLine(t, `"Connecting to the API server"`, time.Minute)
		r.waitLine(t, failing+c.Host, 5*time.Second)
		r.waitLine(t, `"Waiting for the informers' first list of the cluster" kinds=["v1.CSIDriver",`, 11*time.Second)
		code, end := r.wait(t)
		if took := end.Sub(start); took < 11*time.Second || took > 12*time.Second {
			t.Errorf("run exited %s after it began connecting, want within a second of --sync-timeout 11s", took)
		}
		want := "error: " + c.Host + ": not ready after --sync-timeout 11s: informers not synced within 11s: none of the 14 kinds listed (last failure: GET " + c.Host
		if last := r.lastLine(); code != 1 || !strings.HasPrefix(last, want) || !strings.HasSuffix(last, "connect: connection refused)") {
			t.Errorf("exit %d, last line %q; want 1 and %q...connection refused)\n%s", code, last, want, r.stderr())
		}
	})

	for _, sig := range []struct {
		sig  syscall.Signal
		code int
		says string
	}{
		{syscall.SIGINT, 130, "interrupted (SIGINT)"},
		{syscall.SIGTERM, 143, "terminated (SIGTERM)"},
	} {
		t.Run(sig.says, func(t *testing.T) {
			r := startRunProcess(t, bin, append(base, "--sync-timeout", "0")...)
			r.waitLine(t, failing+c.Host, time.Minute)
			// The informers are now in client-go's retry backoff.
			r.waitLine(t, `"Reading the server version"`, 5*time.Second)
			sent := time.Now()
			if err := r.cmd.Process.Signal(sig.sig); err != nil {
				t.Fatal(err)
			}
			code, end := r.wait(t)
			if took := end.Sub(sent); took > time.Second {
				t.Errorf("run exited %s after %s, want within a second", took, sig.says)
			}
			want := "error: " + c.Host + ": stopped before the informers synced: " + sig.says + ", while waiting for none of the 14 kinds listed (last failure: GET " + c.Host
			if last := r.lastLine(); code != sig.code || !strings.HasPrefix(last, want) {
				t.Errorf("exit %d, last line %q; want %d and %q...\n%s", code, last, sig.code, want, r.stderr())
			}
		})
	}
}
