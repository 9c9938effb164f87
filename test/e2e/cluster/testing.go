package cluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// EnvE2E turns the end-to-end tests off when set to "0". They run by default,
// building the binaries on first use.
const EnvE2E = "KUBECTL_SCHED_E2E"

// Disabled reports whether KUBECTL_SCHED_E2E=0 turns the end-to-end tests off.
func Disabled() bool { return os.Getenv(EnvE2E) == "0" }

// StartForTest starts a cluster for one test (or benchmark) and registers its
// teardown with t.Cleanup, so it is stopped whether the test passes, fails or
// calls t.FailNow; on failure the tail of each log goes to the test output
// first. It skips the test when KUBECTL_SCHED_E2E=0.
func StartForTest(t testing.TB, opts Options) *Cluster {
	t.Helper()
	if Disabled() {
		t.Skipf("%s=0", EnvE2E)
	}
	if opts.Progress == nil {
		opts.Progress = testWriter{t}
	}
	c, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("starting test cluster: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			var b strings.Builder
			c.DumpLogs(&b, 40)
			t.Log(b.String())
		}
		c.Stop()
	})
	return c
}

// testWriter sends progress lines to t.Log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// RunMain is a TestMain for a package whose tests share one cluster: it
// starts the cluster (unless KUBECTL_SCHED_E2E=0, when setup gets nil and the
// tests are expected to skip), runs the tests, dumps the logs if any failed,
// stops the cluster and returns the exit code for os.Exit.
func RunMain(m *testing.M, opts Options, setup func(*Cluster)) int {
	if Disabled() {
		setup(nil)
		return m.Run()
	}
	if opts.Progress == nil {
		opts.Progress = os.Stderr
	}
	c, err := Start(context.Background(), opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting test cluster: %v\n", err)
		return 1
	}
	// A panicking test exits the binary without running this: the children
	// then die with it (Pdeathsig) and the next Start removes the stale state.
	defer c.Stop()
	setup(c)
	code := m.Run()
	if code != 0 {
		c.DumpLogs(os.Stderr, 60)
	}
	return code
}
