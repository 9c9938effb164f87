package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// listSpreadConfig gives PodTopologySpread a hard default constraint, so
// that its queueing hints build the pod's default selector (from the
// Services) on the informers' goroutine while scheduling cycles refresh the
// snapshot they read it from.
const listSpreadConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}
`

// TestRunDefaultSpreadingWhileHintsRun: pods selected by a Service, under
// hard default spreading, wait in the unschedulable pool rejected by
// PodTopologySpread (a tainted node they cannot use still counts as a
// domain with none of them, so a second one on the free node breaks the
// skew), while other pods are scheduled: each binding runs the plugin's
// queueing hints for the waiting pods, which build their default selector
// from the Services, on the informers' goroutine, as the next cycles
// refresh the snapshot they read it from. Under -race this checks that
// read; without, the spreading outcome.
func TestRunDefaultSpreadingWhileHintsRun(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group, profile, others = "run-spread", "kubectl-sched-spread", 60
	groupNodes(ctx, t, c.Client, group,
		cluster.NodeSpec{Name: "run-spread-free", CPU: "32", Memory: "256Gi", Pods: 200},
		cluster.NodeSpec{Name: "run-spread-tainted", CPU: "32", Memory: "256Gi",
			Taints: []v1.Taint{{Key: "e2e/no", Effect: v1.TaintEffectNoSchedule}}})
	ns := createNamespace(ctx, t, c.Client, "run-spread")
	if _, err := c.Client.CoreV1().Services(ns).Create(ctx, &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec:       v1.ServiceSpec{Selector: map[string]string{"app": "web"}, Ports: []v1.ServicePort{{Port: 80}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	web := func(p *v1.Pod) *v1.Pod { p.Labels = map[string]string{"app": "web"}; return p }
	s := startRun(t, c, runOptions{profile: profile, config: listSpreadConfig})
	for i := range 5 {
		createPods(ctx, t, c.Client, ns, web(ourPod(fmt.Sprintf("web-%d", i), "100m", profile, group)))
	}
	// One web pod fits; the others wait, rejected by PodTopologySpread.
	waitForBoundCount(ctx, t, c.Client, ns, 1, time.Minute)
	for i := range others {
		createPods(ctx, t, c.Client, ns, ourPod(fmt.Sprintf("other-%02d", i), "100m", profile, group))
	}
	pods := waitForBoundCount(ctx, t, c.Client, ns, 1+others, 2*time.Minute)
	for _, p := range pods {
		if bound(&p) && p.Spec.NodeName != "run-spread-free" {
			t.Errorf("pod %s bound to %s", p.Name, p.Spec.NodeName)
		}
		if !bound(&p) && p.Labels["app"] != "web" {
			t.Errorf("pod %s not bound", p.Name)
		}
	}
	mfs := s.scrape(t)
	if got := value(mfs, "scheduler_unschedulable_pods", map[string]string{"profile": profile, "plugin": "PodTopologySpread"}); got != 4 {
		t.Errorf("scheduler_unschedulable_pods{plugin=PodTopologySpread} = %v, want 4", got)
	}
}
