package cli

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/version"
)

// setVersion stands in for the -ldflags -X of the Makefile and goreleaser.
func setVersion(t *testing.T, v, commit, date string) {
	old := []string{version.Version, version.Commit, version.Date}
	version.Version, version.Commit, version.Date = v, commit, date
	t.Cleanup(func() { version.Version, version.Commit, version.Date = old[0], old[1], old[2] })
}

func TestVersion(t *testing.T) {
	setVersion(t, "v0.3.1", "1a2b3c4", "2026-12-01T10:00:00Z")
	code, out, _ := run(t, "", "version")
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	want := "kubectl-sched v0.3.1 (commit 1a2b3c4, built 2026-12-01T10:00:00Z, " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")\n" +
		"scheduling behaviour of kube-scheduler " + version.KubernetesVersion + "\n"
	if d := cmp.Diff(want, out); d != "" {
		t.Errorf("version (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(version.KubernetesVersion, "v1.37.") {
		t.Errorf("KubernetesVersion = %s, want v1.37.x", version.KubernetesVersion)
	}

	code, out, _ = run(t, "", "version", "-o", "json")
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	wantJSON := map[string]string{
		"version": "v0.3.1", "commit": "1a2b3c4", "date": "2026-12-01T10:00:00Z", "kubernetes": version.KubernetesVersion,
		"go": runtime.Version(), "platform": runtime.GOOS + "/" + runtime.GOARCH,
	}
	if d := cmp.Diff(wantJSON, got); d != "" {
		t.Errorf("version -o json (-want +got):\n%s", d)
	}

	code, out, _ = run(t, "", "version", "-o", "yaml")
	var gotYAML map[string]string
	if err := yaml.Unmarshal([]byte(out), &gotYAML); code != 0 || err != nil {
		t.Fatalf("version -o yaml: exit %d, %v", code, err)
	}
	if d := cmp.Diff(wantJSON, gotYAML); d != "" {
		t.Errorf("version -o yaml (-want +got):\n%s", d)
	}

	if code, _, stderr := run(t, "", "version", "-o", "table"); code != 2 || stderr != "error: --output: unknown format \"table\" (want json or yaml)\n" {
		t.Errorf("version -o table: exit %d, stderr %q; want 2 and the formats named", code, stderr)
	}
}
