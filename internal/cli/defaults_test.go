package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// A pod file naming a RuntimeClass of the snapshot is explained with the
// class's overhead, as the RuntimeClass admission would have given it:
// examples/cluster.yaml's gvisor adds 250m of cpu, which keeps a 7800m pod
// off the 8-cpu general nodes.
func TestExplainPodFileGetsItsRuntimeClassOverhead(t *testing.T) {
	dir := t.TempDir()
	feasible := map[string]float64{}
	for name, class := range map[string]string{"with": "  runtimeClassName: gvisor\n", "without": ""} {
		path := filepath.Join(dir, name+".yaml")
		pod := "apiVersion: v1\nkind: Pod\nmetadata: {name: sandboxed, namespace: web}\nspec:\n" + class +
			"  containers: [{name: c, image: x, resources: {requests: {cpu: 7800m}}}]\n"
		if err := os.WriteFile(path, []byte(pod), 0o600); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := run(t, "", "explain", "pod", "-f", path, "--snapshot", "../../examples/cluster.yaml", "-o", "json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, stderr)
		}
		var out struct {
			NumFeasible float64 `json:"numFeasible"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		feasible[name] = out.NumFeasible
	}
	if feasible["with"] >= feasible["without"] {
		t.Errorf("feasible nodes %v: the class's overhead should leave fewer", feasible)
	}
}
