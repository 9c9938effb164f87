package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
)

const otherSchedulers = "testdata/other-schedulers.yaml"

// TestRunsPodsWithoutConfig: pods for `run` (schedulerName kubectl-sched)
// are dry-run and explained without --config, as run would place them;
// pending pods of schedulers no profile serves get one warning per name.
func TestRunsPodsWithoutConfig(t *testing.T) {
	code, out, stderr := run(t, "", "dryrun", "-f", small, "-f", otherSchedulers, "-o", "json")
	if code != 0 {
		t.Fatalf("dryrun: exit %d: %s", code, stderr)
	}
	var rep report.DryRun
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	placed := map[string]string{}
	for _, p := range rep.Placements {
		placed[p.Pod] = p.Node
	}
	for _, pod := range []string{"shop/run-1", "shop/run-2"} {
		if placed[pod] == "" {
			t.Errorf("%s (schedulerName kubectl-sched) was not placed: %v", pod, placed)
		}
	}
	wantWarnings := []string{
		"warning: ../../testdata/clusters/small.yaml:1: skipping items[10] Deployment shop/web (kind apps/v1/Deployment is not used by the scheduler)",
		`warning: 1 pending pod for scheduler "my-scheduler" skipped: no profile of that name (profiles: default-scheduler, kubectl-sched)`,
		`warning: 2 pending pods for scheduler "volcano" skipped: no profile of that name (profiles: default-scheduler, kubectl-sched)`,
	}
	if d := cmp.Diff(wantWarnings, strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")); d != "" {
		t.Errorf("stderr (-want +got):\n%s", d)
	}

	code, out, stderr = run(t, "", "explain", "pod", "run-1", "-n", "shop", "--snapshot", small, "--snapshot", otherSchedulers, "-o", "json")
	if code != 0 {
		t.Fatalf("explain: exit %d: %s", code, stderr)
	}
	var ex report.Explanation
	if err := json.Unmarshal([]byte(out), &ex); err != nil {
		t.Fatal(err)
	}
	if ex.Profile != "kubectl-sched" || ex.Selected == "" {
		t.Errorf("explain: profile %q, selected %q; want kubectl-sched and a node", ex.Profile, ex.Selected)
	}

	// With --config, the profiles are the file's: run's pods are skipped
	// like any other scheduler's.
	code, _, stderr = run(t, "", "dryrun", "-f", small, "-f", otherSchedulers, "--config", "../../examples/sched-config.yaml")
	if code != 0 || !strings.Contains(stderr, `warning: 2 pending pods for scheduler "kubectl-sched" skipped`) {
		t.Errorf("dryrun --config: exit %d, stderr %q", code, stderr)
	}
}
