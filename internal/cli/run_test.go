package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"a lease shorter than the renew deadline", []string{"run", "--config", badLease, "--kubeconfig", kubeconfig}, 1, "leaderElection.leaseDuration: 5s must be greater than renewDeadline 10s"},
		{"a missing kubeconfig", []string{"run", "--kubeconfig", filepath.Join(dir, "nope")}, 1, "loading kubeconfig"},
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
