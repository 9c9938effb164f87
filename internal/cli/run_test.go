package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestRunBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unknownPlugin := write("cfg.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: s\n  plugins:\n    score:\n      enabled: [{name: NoSuchPlugin}]\n")
	badLease := write("lease.yaml", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection: {leaderElect: true, leaseDuration: 5s, renewDeadline: 10s, retryPeriod: 2s}\n")
	kubeconfig := write("kubeconfig", "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\ncontexts: [{name: c, context: {cluster: c}}]\ncurrent-context: c\n")
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantErr  string
	}{
		{"a metrics address without a port", []string{"run", "--metrics-bind-address", "127.0.0.1"}, 2, "--metrics-bind-address: address 127.0.0.1: missing port in address"},
		{"a metrics address with a bad port", []string{"run", "--metrics-bind-address", "127.0.0.1:99999"}, 2, `--metrics-bind-address: bad port "99999"`},
		{"a missing config file", []string{"run", "--config", filepath.Join(dir, "nope.yaml")}, 2, "nope.yaml"},
		{"an unknown plugin names the config file", []string{"run", "--config", unknownPlugin, "--kubeconfig", kubeconfig}, 2, unknownPlugin + ": "},
		{"a lease shorter than the renew deadline", []string{"run", "--config", badLease, "--kubeconfig", kubeconfig}, 2, badLease + ": leaderElection.leaseDuration: 5s must be greater than renewDeadline 10s"},
		{"the config is checked before the kubeconfig is read", []string{"run", "--config", unknownPlugin, "--kubeconfig", filepath.Join(dir, "nope")}, 2, unknownPlugin + ": "},
		{"a negative sync timeout", []string{"run", "--sync-timeout", "-1s"}, 2, "--sync-timeout: must not be negative"},
		{"a missing kubeconfig", []string{"run", "--kubeconfig", filepath.Join(dir, "nope")}, 2, "loading kubeconfig"},
		{"arguments", []string{"run", "extra"}, 2, `unknown command "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := run(t, "", tt.args...)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tt.wantCode, stderr)
			}
			if out != "" {
				t.Errorf("stdout not empty: %q", out)
			}
			lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, "error: ") || !strings.Contains(last, tt.wantErr) {
				t.Errorf("stderr last line = %q, want an error containing %q", last, tt.wantErr)
			}
		})
	}
}

// TestRunReportsAnUnreachableServer runs `run` against a port nobody
// listens on: the failure is logged at the default verbosity as it
// happens, and run gives up after --sync-timeout with exit code 1 and one
// line saying what failed.
func TestRunReportsAnUnreachableServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "https://" + l.Addr().String()
	l.Close()
	start := time.Now()
	code, out, stderr := run(t, "", "run", "--server", server, "--insecure-skip-tls-verify", "--sync-timeout", "2s", "--metrics-bind-address", "0")
	// Soon after the timeout: the informers asleep in client-go's retry
	// backoff are not waited for (live.unsyncedShutdownWait). The slack
	// covers the race detector on a busy machine; the e2e test
	// TestRunStartupAgainstAStoppedAPIServer holds the binary to a second.
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("run took %s to give up after a 2s --sync-timeout", took)
	}
	if code != ExitFailure || out != "" {
		t.Errorf("exit %d, stdout %q; want 1 and nothing", code, out)
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if !strings.Contains(stderr, `"Cannot reach the API server; client-go retries with backoff" err="GET `+server) ||
		!strings.Contains(stderr, "connect: connection refused") {
		t.Errorf("no report of the failed connection at the default verbosity:\n%s", stderr)
	}
	last := lines[len(lines)-1]
	want := "error: " + server + ": not ready after --sync-timeout 2s: informers not synced within 2s: "
	if !strings.HasPrefix(last, want) || !strings.Contains(last, "(last failure: GET "+server) || !strings.HasSuffix(last, "connect: connection refused)") {
		t.Errorf("last line = %q, want %q... with the last failure", last, want)
	}
}

// TestRunWithoutAKubeconfigSaysSo: with no kubeconfig anywhere and no
// --server, run (as snapshot and explain) says so in one line and exits 2
// instead of trying http://localhost:8080.
func TestRunWithoutAKubeconfigSaysSo(t *testing.T) {
	// client-go reads ~/.kube/config's path when the process starts, so the
	// test names a missing file in KUBECONFIG (as "no kubeconfig" looks).
	missing := filepath.Join(t.TempDir(), "nope")
	t.Setenv("KUBECONFIG", missing)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for _, args := range [][]string{{"run"}, {"snapshot"}, {"explain", "pod", "x"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, stderr := run(t, "", args...)
			want := "error: loading kubeconfig: no kubeconfig found (KUBECONFIG=" + missing +
				" names no kubeconfig with a cluster, and not in a pod): pass --kubeconfig FILE, set KUBECONFIG, or give --server URL\n"
			if code != ExitUsage || out != "" || stderr != want {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing and %q", code, out, stderr, want)
			}
		})
	}
}
