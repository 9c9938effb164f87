package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAnUnusableKubeconfigIsBadInput: a kubeconfig that is missing or
// malformed, or a context it lacks, is bad input to every verb that reads
// one: one line naming it, exit code 2, nothing on stdout, whichever path
// reads it first (the namespace, the clients, top's optional pods panel).
func TestAnUnusableKubeconfigIsBadInput(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "nope.yaml")
	malformed := filepath.Join(dir, "malformed.yaml")
	if err := os.WriteFile(malformed, []byte("garbage: [\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	valid := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(valid, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
contexts: [{name: ctx, context: {cluster: c, user: u}}]
users: [{name: u, user: {}}]
current-context: ctx
`), 0o600); err != nil {
		t.Fatal(err)
	}
	kubeconfigs := []struct {
		name    string
		flags   []string
		wantErr []string // each in the line
	}{
		{"a missing file", []string{"--kubeconfig", missing}, []string{"loading kubeconfig: stat " + missing + ": no such file or directory"}},
		{"a malformed file", []string{"--kubeconfig", malformed}, []string{"loading kubeconfig: error loading config file \"" + malformed + "\""}},
		// client-go words it two ways, depending on the path.
		{"an unknown context", []string{"--kubeconfig", valid, "--context", "nope"}, []string{"loading kubeconfig: ", "context", "nope"}},
	}
	verbs := [][]string{
		{"snapshot"},
		{"snapshot", "-A"},
		{"explain", "pod", "x"},
		{"explain", "pod", "x", "-n", "ns"},
		{"run"},
		{"top", "--once"},
		{"top", "--once", "--scheduler-pod", "kube-system/kube-scheduler-x"},
	}
	for _, kc := range kubeconfigs {
		for _, verb := range verbs {
			args := append(append([]string{}, verb...), kc.flags...)
			t.Run(kc.name+"/"+strings.Join(verb, " "), func(t *testing.T) {
				code, out, stderr := run(t, "", args...)
				if code != 2 || out != "" {
					t.Errorf("exit code %d, stdout %q; want 2 and nothing (stderr %q)", code, out, stderr)
				}
				lines := strings.Split(strings.TrimSpace(stderr), "\n")
				if len(lines) != 1 || !strings.HasPrefix(lines[0], "error: ") {
					t.Errorf("stderr %q, want one error line", stderr)
				}
				for _, want := range kc.wantErr {
					if !strings.Contains(stderr, want) {
						t.Errorf("stderr %q, want it to contain %q", stderr, want)
					}
				}
			})
		}
	}
}
