package cli

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-sched/kubectl-sched/internal/kube"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// fakeDRACluster serves a cluster file's nodes, pods and DRA objects
// through a fake clientset, as a live API server without the resourceclaim
// controller would: template claims the file lacks do not exist.
func fakeDRACluster(t *testing.T, file string) Settings {
	t.Helper()
	cl, err := snapshot.LoadPaths([]string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var objs []runtime.Object
	for _, n := range cl.Nodes {
		objs = append(objs, n)
	}
	for _, p := range cl.Pods {
		objs = append(objs, p)
	}
	d := cl.DRA
	for _, o := range d.DeviceClasses {
		objs = append(objs, o)
	}
	for _, o := range d.ResourceSlices {
		objs = append(objs, o)
	}
	for _, o := range d.ResourceClaims {
		objs = append(objs, o)
	}
	for _, o := range d.ResourceClaimTemplates {
		objs = append(objs, o)
	}
	kc := fake.NewClientset(objs...)
	return Settings{NewClients: func(*genericclioptions.ConfigFlags) (*kube.Clients, error) {
		return &kube.Clients{Kube: kc, Discovery: kc.Discovery()}, nil
	}}
}

// Live, a pod whose template claim the controller has not made yet is held
// by DynamicResources' PreEnqueue, as kubectl sched run's queue holds it;
// a new pod from -f gets its claim made as the controller would, and an
// answer. From a dump, the dry-run's view: missing claims are made.
func TestExplainTemplateClaimsLiveAndFromFile(t *testing.T) {
	const draExample = "../../examples/dra.yaml"
	live := fakeDRACluster(t, draExample)
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
