package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// TestLiveExplainHoldsAPodWhoseClaimIsNotCreated: on the real API server,
// without the resourceclaim controller (no controller-manager runs), a pod
// whose ResourceClaimTemplate's claim is never made is held by
// DynamicResources' PreEnqueue: live explain says so with kube's message,
// and `run` keeps it gated (scheduler_pending_pods{queue="gated"}),
// unbound. The same pod given with -f, a new pod, gets its claim made as
// the controller would and an answer: the GPU node.
func TestLiveExplainHoldsAPodWhoseClaimIsNotCreated(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const group, profile = "dra-gated", "kubectl-sched-dra-gated"
	groupNodes(ctx, t, c.Client, group, cluster.NodeSpec{Name: "dra-gated-gpu", CPU: "8", Memory: "32Gi"})
	ns := createNamespace(ctx, t, c.Client, "dra-gated")
	driver, class := draDriver(ns), "gpu-"+ns
	createDRA(ctx, t, c.Client, driver, class, map[string]string{"dra-gated-gpu": "80Gi"})
	tmpl := &resourceapi.ResourceClaimTemplate{ObjectMeta: metav1.ObjectMeta{Name: "one-gpu"}, Spec: resourceapi.ResourceClaimTemplateSpec{
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{Requests: []resourceapi.DeviceRequest{{Name: "gpu",
			Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: class, AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}}}},
	}}
	if _, err := c.Client.ResourceV1().ResourceClaimTemplates(ns).Create(ctx, tmpl, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating ResourceClaimTemplate: %v", err)
	}
	pod := ourPod("waiting", "1", profile, group)
	pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("one-gpu")}}
	pod.Spec.Containers[0].Resources.Claims = []v1.ResourceClaim{{Name: "gpu"}}
	createPods(ctx, t, c.Client, ns, pod)

	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: "+profile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := explainJSON(t, c, pod.Name, "-n", ns, "--config", cfg)
	want := &report.PreFilterOutcome{Code: "UnschedulableAndUnresolvable", Plugin: "DynamicResources", Reason: `pod "` + ns + `/waiting": ResourceClaim not created yet`}
	if diff := cmp.Diff(want, e.PreEnqueue); diff != "" || e.Selected != "" {
		t.Errorf("live explain: selected %q, preEnqueue (-want +got):\n%s", e.Selected, diff)
	}

	// A new pod from a file: its claim is made for the explanation.
	newPod := pod.DeepCopy()
	newPod.Name = "new"
	body, err := yaml.Marshal(newPod)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "new.yaml")
	if err := os.WriteFile(file, append([]byte("apiVersion: v1\nkind: Pod\n"), body...), 0o600); err != nil {
		t.Fatal(err)
	}
	if f := explainJSON(t, c, "-f", file, "-n", ns, "--config", cfg); f.PreEnqueue != nil || f.Selected != "dra-gated-gpu" {
		t.Errorf("explain -f: preEnqueue %+v, selected %q; want none, dra-gated-gpu", f.PreEnqueue, f.Selected)
	}

	s := startRun(t, c, runOptions{profile: profile})
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return value(s.scrape(t), "scheduler_pending_pods", map[string]string{"queue": "gated"}) == 1, nil
	})
	if err != nil {
		t.Errorf("run: scheduler_pending_pods{queue=\"gated\"} never 1: %v", err)
	}
	p, err := c.Client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "" {
		t.Errorf("pod %s bound to %q; want it held, unbound", pod.Name, p.Spec.NodeName)
	}
}
