package snapshot

import (
	"encoding/json"
	"os"
	"testing"

	v1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"sigs.k8s.io/yaml"
)

// TestExampleClusterIsAValidList checks examples/cluster.yaml, the file
// `make demo` dry-runs: every item decodes strictly (no misspelled field is
// silently dropped) into its v1 type, and the loader reads the counts its
// header comment promises.
func TestExampleClusterIsAValidList(t *testing.T) {
	const path = "../../examples/cluster.yaml"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := yaml.UnmarshalStrict(data, &l); err != nil {
		t.Fatal(err)
	}
	if l.APIVersion != "v1" || l.Kind != "List" {
		t.Fatalf("got %s %s, want v1 List", l.APIVersion, l.Kind)
	}
	for i, raw := range l.Items {
		var tm struct{ Kind string }
		if err := json.Unmarshal(raw, &tm); err != nil {
			t.Fatal(err)
		}
		var into any
		switch tm.Kind {
		case "Namespace":
			into = &v1.Namespace{}
		case "Node":
			into = &v1.Node{}
		case "Pod":
			into = &v1.Pod{}
		case "Service":
			into = &v1.Service{}
		case "PodDisruptionBudget":
			into = &policyv1.PodDisruptionBudget{}
		case "RuntimeClass":
			into = &nodev1.RuntimeClass{}
		case "PriorityClass":
			into = &schedulingv1.PriorityClass{}
		default:
			t.Fatalf("items[%d]: kind %q, want only Namespaces, Nodes, Pods, Services, PodDisruptionBudgets, PriorityClasses and RuntimeClasses", i, tm.Kind)
		}
		if err := yaml.UnmarshalStrict(raw, into); err != nil {
			t.Errorf("items[%d] (%s): %v", i, tm.Kind, err)
		}
	}

	c, err := LoadPaths([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	pending, running := 0, 0
	for _, p := range c.Pods {
		switch {
		case p.Spec.NodeName == "":
			pending++
		case p.Status.Phase == v1.PodRunning:
			running++
		}
	}
	if len(c.Nodes) != 33 || pending != 40 || running != 26 || len(c.Warnings) != 0 {
		t.Errorf("got %d nodes, %d pending and %d running pods, warnings %q; want 33, 40, 26 and none",
			len(c.Nodes), pending, running, c.Warnings)
	}
}
