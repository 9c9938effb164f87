package e2e

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-sched/kubectl-sched/internal/cli"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// syncBuffer is a bytes.Buffer safe for a verb writing while a test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunCLIRefusedByTheAPIServer: `kubectl sched run` as a user who may
// list nothing logs the refusals at the default verbosity, then gives up
// after --sync-timeout with exit code 1 and one line naming the last one.
func TestRunCLIRefusedByTheAPIServer(t *testing.T) {
	c := requireCluster(t)
	code, out, stderr := sched(t, c, "run", "--as", "e2e-nobody", "--sync-timeout", "3s", "--metrics-bind-address", "0")
	if code != cli.ExitFailure || out != "" {
		t.Errorf("exit %d, stdout %q; want 1 and nothing", code, out)
	}
	if !strings.Contains(stderr, `"The API server refuses requests; client-go retries with backoff"`) || !strings.Contains(stderr, "403 Forbidden") {
		t.Errorf("no report of the refusals at the default verbosity:\n%s", stderr)
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	last := lines[len(lines)-1]
	if want := "error: " + c.Host + ": not ready after --sync-timeout 3s: informers not synced within 3s: "; !strings.HasPrefix(last, want) || !strings.HasSuffix(last, "403 Forbidden)") {
		t.Errorf("last line %q, want %q... ending in the last failure (403 Forbidden)", last, want)
	}
}

// TestRunCLIReportsAnAPIServerOutage: `kubectl sched run` against a real
// kube-apiserver that goes away and comes back says so in its log at the
// default verbosity, both ways, and goes on.
func TestRunCLIReportsAnAPIServerOutage(t *testing.T) {
	c := cluster.StartForTest(t, cluster.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &stderr}
		done <- cli.ExecuteContext(ctx, streams, cli.Settings{}, []string{"run", "--kubeconfig", c.Kubeconfig, "--metrics-bind-address", "0"})
	}()
	waitLog := func(what string, timeout time.Duration) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
			return strings.Contains(stderr.String(), what), nil
		})
		if err != nil {
			t.Fatalf("no %q in run's log within %s:\n%s", what, timeout, stderr.String())
		}
	}
	waitLog(`"Informers synced"`, time.Minute)
	if err := c.StopAPIServer(0); err != nil {
		t.Fatal(err)
	}
	// What failed: a request cut off (connection reset) or refused.
	waitLog(`"Cannot reach the API server; client-go retries with backoff" err="GET `+c.Host+`/`, time.Minute)
	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	waitLog(`"The API server is reachable again"`, time.Minute)
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit %d after SIGINT-like cancel:\n%s", code, stderr.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not stop within a minute of its context ending")
	}
}
