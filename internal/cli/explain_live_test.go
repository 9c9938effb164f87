package cli

import (
	"testing"
)

// Live, a pod whose template claim the controller has not made yet is held
// by DynamicResources' PreEnqueue, as kubectl sched run's queue holds it;
// a new pod from -f gets its claim made as the controller would, and an
// answer. From a dump, the dry-run's view: missing claims are made.
func TestExplainTemplateClaimsLiveAndFromFile(t *testing.T) {
	const draExample = "../../examples/dra.yaml"
	live := fakeCluster(t, draExample)
	tests := []struct {
		name     string
		settings Settings
		args     []string
	}{
		{"explain-live-dra-claim-not-created-table", live, []string{"explain", "pod", "trainer", "-n", "ml"}},
		{"explain-live-dra-claim-not-created-json", live, []string{"explain", "pod", "trainer", "-n", "ml", "-o", "json"}},
		{"explain-live-dra-file-table", live, []string{"explain", "pod", "-f", "../../examples/new-gpu-pod.yaml"}},
		{"explain-dra-file-table", Settings{}, []string{"explain", "pod", "-f", "../../examples/new-gpu-pod.yaml", "--snapshot", draExample}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, stderr := runWith(t, tt.settings, tt.args...)
			if code != 0 {
				t.Fatalf("exit code %d: %s", code, stderr)
			}
			golden(t, tt.name, out)
		})
	}
}
