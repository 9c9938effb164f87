package e2e

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/plugins/coscheduling"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

var (
	crdResource      = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	podGroupResource = schema.GroupVersionResource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups"}
)

// gangConfig runs Coscheduling as docs/config.md says: enabled at
// multiPoint, PrioritySort (the other QueueSort) disabled. A group that
// failed is backed off long enough for the test to see its room used.
const gangConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      enabled: [{name: Coscheduling}]
      disabled: [{name: PrioritySort}]
  pluginConfig:
  - name: Coscheduling
    args: {permitWaitingTimeSeconds: 10, podGroupBackoffSeconds: 30}
`

// installPodGroupCRD creates scheduler-plugins' PodGroup CRD from
// testdata, waits until the API serves it, and deletes it when the test
// ends.
func installPodGroupCRD(ctx context.Context, t *testing.T, c *cluster.Cluster) dynamic.Interface {
	t.Helper()
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/podgroup-crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	crd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(raw, &crd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(crdResource).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the PodGroup CRD: %v", err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(crdResource).Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{})
	})
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		res, err := c.Client.Discovery().ServerResourcesForGroupVersion(podGroupResource.GroupVersion().String())
		if err != nil {
			return false, nil
		}
		for _, r := range res.APIResources {
			if r.Name == podGroupResource.Resource {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("PodGroups not served: %v", err)
	}
	return dyn
}

func createPodGroup(ctx context.Context, t *testing.T, dyn dynamic.Interface, ns, name string, minMember, timeoutSeconds int64) {
	t.Helper()
	pg := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": coscheduling.PodGroupAPIVersion,
		"kind":       coscheduling.PodGroupKind,
		"metadata":   map[string]any{"name": name, "namespace": ns},
		"spec":       map[string]any{"minMember": minMember, "scheduleTimeoutSeconds": timeoutSeconds},
	}}
	if _, err := dyn.Resource(podGroupResource).Namespace(ns).Create(ctx, pg, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating PodGroup %s: %v", name, err)
	}
}

// gangPods are n pods of our profile in PodGroup pg, on the group's nodes.
func gangPods(pg string, n int, cpu, profile, group string) []*v1.Pod {
	var out []*v1.Pod
	for i := range n {
		p := ourPod(fmt.Sprintf("%s-%d", pg, i), cpu, profile, group)
		p.Labels = map[string]string{coscheduling.PodGroupLabel: pg}
		out = append(out, p)
	}
	return out
}

// TestRunGangBindsAllOrNone: with Coscheduling on and the PodGroup CRD
// installed, a PodGroup of minMember 4 binds all four pods when they fit,
// and none when the nodes hold only three: past the group's
// scheduleTimeoutSeconds none is bound, and the room the three held while
// they waited is given back, so a pod outside the group fits.
func TestRunGangBindsAllOrNone(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dyn := installPodGroupCRD(ctx, t, c)
	const profile = "kubectl-sched-gang"
	const fits, tight = "run-gang-fits", "run-gang-tight"
	groupNodes(ctx, t, c.Client, fits,
		cluster.NodeSpec{Name: "run-gang-fits-a", CPU: "4", Memory: "64Gi"},
		cluster.NodeSpec{Name: "run-gang-fits-b", CPU: "4", Memory: "64Gi"})
	// Three nodes of 900m allocatable: one 600m pod each.
	groupNodes(ctx, t, c.Client, tight,
		cluster.NodeSpec{Name: "run-gang-tight-a", CPU: "1", Memory: "64Gi"},
		cluster.NodeSpec{Name: "run-gang-tight-b", CPU: "1", Memory: "64Gi"},
		cluster.NodeSpec{Name: "run-gang-tight-c", CPU: "1", Memory: "64Gi"})
	ns := createNamespace(ctx, t, c.Client, "run-gang")
	s := startRun(t, c, runOptions{profile: profile, config: gangConfig})

	t.Run("four that fit are all bound", func(t *testing.T) {
		createPodGroup(ctx, t, dyn, ns, "fits", 4, 5)
		pods := gangPods("fits", 4, "1", profile, fits)
		createPods(ctx, t, c.Client, ns, pods...)
		for _, p := range pods {
			waitForPod(ctx, t, c.Client, ns, p.Name, bound)
		}
	})

	t.Run("four of which three fit are none bound", func(t *testing.T) {
		const timeout = 3
		createPodGroup(ctx, t, dyn, ns, "tight", 4, timeout)
		pods := gangPods("tight", 4, "600m", profile, tight)
		createPods(ctx, t, c.Client, ns, pods...)
		// Every member tried, then well past the group's timeout.
		for _, p := range pods {
			waitForEvent(ctx, t, c.Client, ns, p.Name, "FailedScheduling")
		}
		deadline := time.Now().Add(2 * timeout * time.Second)
		for time.Now().Before(deadline) {
			for _, p := range listPods(ctx, t, c.Client, ns) {
				if p.Labels[coscheduling.PodGroupLabel] == "tight" && bound(&p) {
					t.Fatalf("gang member %s bound to %s with the group incomplete", p.Name, p.Spec.NodeName)
				}
			}
			time.Sleep(250 * time.Millisecond)
		}
		// The members' reservations are gone: a pod outside the group
		// takes one of the nodes.
		createPods(ctx, t, c.Client, ns, ourPod("solo", "600m", profile, tight))
		if p := waitForPod(ctx, t, c.Client, ns, "solo", bound); p.Spec.NodeName == "" {
			t.Error("solo not bound")
		}
		for _, p := range listPods(ctx, t, c.Client, ns) {
			if p.Labels[coscheduling.PodGroupLabel] == "tight" && bound(&p) {
				t.Errorf("gang member %s bound to %s", p.Name, p.Spec.NodeName)
			}
		}
		for _, e := range podEvents(ctx, t, c.Client, ns, "tight-0") {
			t.Logf("tight-0: %s %s", e.Reason, e.Note)
		}
	})
	if got := value(s.scrape(t), "scheduler_schedule_attempts_total", map[string]string{"profile": profile, "result": "scheduled"}); got != 5 {
		t.Errorf("scheduled attempts = %v, want 5 (the four of the first group and solo)", got)
	}
}
