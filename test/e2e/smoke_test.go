package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// TestSmokeRealSchedulerBindsToAFittingNode checks the harness end to end:
// fake nodes created through the API are Ready and listable, and the real
// kube-scheduler binds a pod to a node with room for it and reports a pod
// that fits nowhere as Unschedulable.
func TestSmokeRealSchedulerBindsToAFittingNode(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := c.Client

	const group = "kubectl-sched.io/e2e-group"
	label := map[string]string{group: "smoke"}
	specs := []cluster.NodeSpec{
		{Name: "smoke-small", Zone: "zone-a", CPU: "1", Memory: "4Gi", Labels: label},
		{Name: "smoke-medium", Zone: "zone-b", CPU: "4", Memory: "16Gi", Labels: label},
		{Name: "smoke-large", Zone: "zone-c", CPU: "16", Memory: "64Gi", Labels: label},
	}
	if err := cluster.CreateNodes(ctx, client, cluster.Nodes(specs)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range specs {
			_ = client.CoreV1().Nodes().Delete(context.Background(), s.Name, metav1.DeleteOptions{})
		}
	})

	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: group + "=smoke"})
	if err != nil {
		t.Fatalf("listing nodes: %v", err)
	}
	var names []string
	for _, n := range nodes.Items {
		names = append(names, n.Name)
		if !nodeReady(&n) {
			t.Errorf("node %s is not Ready: %+v", n.Name, n.Status.Conditions)
		}
		if len(n.Spec.Taints) != 0 {
			t.Errorf("node %s has taints %v; nothing should add any", n.Name, n.Spec.Taints)
		}
		if n.Status.Allocatable.Cpu().IsZero() {
			t.Errorf("node %s has no allocatable cpu", n.Name)
		}
	}
	if diff := cmp.Diff([]string{"smoke-large", "smoke-medium", "smoke-small"}, names); diff != "" {
		t.Errorf("listed nodes (-want +got):\n%s", diff)
	}

	ns := createNamespace(ctx, t, client, "smoke")
	fits := makePod("fits", "3", label)
	tooBig := makePod("too-big", "32", label)
	for _, p := range []*v1.Pod{fits, tooBig} {
		if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %s: %v", p.Name, err)
		}
	}

	start := time.Now()
	sched, err := c.StartScheduler(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sched.Stop(10 * time.Second) })
	t.Logf("kube-scheduler ready in %v", time.Since(start).Round(time.Millisecond))

	bound := waitForPod(ctx, t, client, ns, fits.Name, func(p *v1.Pod) bool { return p.Spec.NodeName != "" })
	if got := bound.Spec.NodeName; got != "smoke-medium" && got != "smoke-large" {
		t.Errorf("pod %s bound to %q; want smoke-medium or smoke-large (3 CPU does not fit smoke-small)", fits.Name, got)
	}
	t.Logf("pod %s bound to %s %v after the scheduler started", fits.Name, bound.Spec.NodeName, time.Since(start).Round(time.Millisecond))

	pending := waitForPod(ctx, t, client, ns, tooBig.Name, func(p *v1.Pod) bool {
		cond := podCondition(p, v1.PodScheduled)
		return cond != nil && cond.Status == v1.ConditionFalse && cond.Reason == v1.PodReasonUnschedulable
	})
	if pending.Spec.NodeName != "" {
		t.Errorf("pod %s bound to %s; it fits no node", tooBig.Name, pending.Spec.NodeName)
	}
	t.Logf("pod %s unschedulable: %s", tooBig.Name, podCondition(pending, v1.PodScheduled).Message)

	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	if got := len(pods.Items); got != 2 {
		t.Errorf("listed %d pods in %s; want 2", got, ns)
	}
}

// makePod returns a pod for the default scheduler requesting cpu and
// selecting nodes by selector.
func makePod(name, cpu string, selector map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PodSpec{
			SchedulerName: v1.DefaultSchedulerName,
			NodeSelector:  selector,
			Containers: []v1.Container{{
				Name:  "app",
				Image: "registry.invalid/app:1", // never pulled: no kubelet
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    resource.MustParse(cpu),
					v1.ResourceMemory: resource.MustParse("1Gi"),
				}},
			}},
		},
	}
}

// createNamespace creates a namespace with a unique name and deletes it when
// the test ends.
func createNamespace(ctx context.Context, t *testing.T, client kubernetes.Interface, prefix string) string {
	t.Helper()
	ns, err := client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// waitForPod polls the pod until done holds, failing the test on timeout.
// Polling the API server is the synchronisation here: there is no clock to
// inject into another process.
func waitForPod(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, name string, done func(*v1.Pod) bool) *v1.Pod {
	t.Helper()
	var last *v1.Pod
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = p
		return done(p), nil
	})
	if err != nil {
		t.Fatalf("waiting for pod %s/%s: %v; last seen: %s", ns, name, err, describe(last))
	}
	return last
}

func describe(p *v1.Pod) string {
	if p == nil {
		return "never"
	}
	return fmt.Sprintf("phase=%s node=%q conditions=%+v", p.Status.Phase, p.Spec.NodeName, p.Status.Conditions)
}

func podCondition(p *v1.Pod, t v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
