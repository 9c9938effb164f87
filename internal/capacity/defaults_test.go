package capacity

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A container with limits and no requests requests its limits once the
// API server has defaulted its pods: examples/web.yaml written with limits
// counts as many copies as with requests (issue #33: 180, not 2511).
func TestLimitsOnlyCountAsRequests(t *testing.T) {
	web, err := os.ReadFile("../../examples/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const requests = `resources: {requests: {cpu: "1", memory: 2Gi}}`
	if !strings.Contains(string(web), requests) {
		t.Fatalf("examples/web.yaml no longer has %s", requests)
	}
	counts := map[string]int{}
	for name, res := range map[string]string{
		"requests":            requests,
		"limits":              `resources: {limits: {cpu: "1", memory: 2Gi}}`,
		"requests and limits": `resources: {requests: {cpu: "1", memory: 2Gi}, limits: {cpu: "1", memory: 2Gi}}`,
	} {
		cl, err := snapshot.LoadPaths([]string{"../../examples/cluster.yaml"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		path := writeFile(t, "web.yaml", strings.Replace(string(web), requests, res, 1))
		specs, err := LoadSpecs([]string{path}, nil, "", cl)
		if err != nil {
			t.Fatal(err)
		}
		counts[name] = count(t, cl, specs, Options{}).Specs[0].Count
	}
	if counts["requests"] == 0 || counts["limits"] != counts["requests"] || counts["requests and limits"] != counts["requests"] {
		t.Errorf("counts %v, want the same for each", counts)
	}
}

func TestSpecsGetTheAPIServersDefaultsAndValidation(t *testing.T) {
	tests := []struct {
		name, manifest, want string
	}{{
		name: "a Deployment whose template asks more than its limit is refused as the API server refuses it",
		manifest: `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "2"}, limits: {cpu: "1"}}}]
`,
		want: `The Deployment "web" is invalid: spec.template.spec.containers[0].resources.requests: Invalid value: "2": must be less than or equal to cpu limit of 1`,
	}, {
		name: "a Pod asking an extended resource without its limit is refused",
		manifest: `apiVersion: v1
kind: Pod
metadata: {name: gpu}
spec:
  containers: [{name: c, image: x, resources: {requests: {example.com/gpu: "1"}}}]
`,
		want: `The Pod "gpu" is invalid: spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, "w.yaml", tc.manifest)
			_, err := LoadSpecs([]string{path}, nil, "", nil)
			if err == nil || err.Error() != path+":1: "+tc.want {
				t.Errorf("error %v\nwant %s:1: %s", err, path, tc.want)
			}
			if !errors.Is(err, snapshot.ErrInvalid) {
				t.Errorf("error %v is not snapshot.ErrInvalid (exit 2)", err)
			}
		})
	}
}

func TestSpecPodsOfAHostNetworkTemplateTakeTheirPorts(t *testing.T) {
	path := writeFile(t, "ds.yaml", `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      hostNetwork: true
      containers: [{name: c, image: x, ports: [{containerPort: 5432}]}]
`)
	specs, err := LoadSpecs([]string{path}, nil, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := specs[0].Pod.Spec.Containers[0].Ports[0]; got.HostPort != 5432 || got.Protocol != v1.ProtocolTCP {
		t.Errorf("port %+v, want hostPort 5432, protocol TCP", got)
	}
}

func TestANodeTemplateWithCapacityOnlyOffersItsCapacity(t *testing.T) {
	path := writeFile(t, "node.yaml", `apiVersion: v1
kind: Node
metadata: {name: m6i}
status: {capacity: {cpu: "4", memory: 16Gi, pods: "110"}}
`)
	n, err := LoadNodeTemplate(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.Status.Allocatable.Cpu().String() + "," + n.Status.Allocatable.Memory().String() + "," + n.Status.Allocatable.Pods().String(); got != "4,16Gi,110" {
		t.Errorf("allocatable %s, want the capacity 4,16Gi,110", got)
	}
}
