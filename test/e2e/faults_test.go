package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// gated is ourPod held by the gate in PreBind.
func gated(p *v1.Pod) *v1.Pod {
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[gateLabel] = "hold"
	return p
}

// listPods lists the namespace's pods.
func listPods(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string) []v1.Pod {
	t.Helper()
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing pods: %v", err)
	}
	return pods.Items
}

// podsPerNode counts the namespace's bound pods by node.
func podsPerNode(pods []v1.Pod) map[string]int {
	out := map[string]int{}
	for i := range pods {
		if bound(&pods[i]) {
			out[pods[i].Spec.NodeName]++
		}
	}
	return out
}

// waitForBoundCount polls until exactly n of the namespace's pods are
// bound and the rest are marked unschedulable, or fails.
func waitForBoundCount(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, n int, timeout time.Duration) []v1.Pod {
	t.Helper()
	return waitForBound(ctx, t, client, ns, n, timeout, true)
}

// waitForBound polls until exactly n of the namespace's pods are bound and,
// if markedRest, the rest are marked unschedulable.
func waitForBound(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, n int, timeout time.Duration, markedRest bool) []v1.Pod {
	t.Helper()
	var last []v1.Pod
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		last = pods.Items
		b, u := 0, 0
		for i := range last {
			switch {
			case bound(&last[i]):
				b++
			case unschedulable(&last[i]):
				u++
			}
		}
		return b == n && (!markedRest || b+u == len(last)), nil
	})
	if err != nil {
		b := 0
		for i := range last {
			if bound(&last[i]) {
				b++
			}
		}
		t.Fatalf("want %d of %d pods bound and the rest unschedulable: %v (%d bound)", n, len(last), err, b)
	}
	return last
}

// checkScheduledOnce checks that no pod has more than one Scheduled event
// and that each names the node the pod is bound to.
func checkScheduledOnce(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, pods []v1.Pod) (withEvent int) {
	t.Helper()
	list, err := client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	events := map[string][]string{}
	for _, e := range list.Items {
		if e.Regarding.Kind == "Pod" && e.Reason == "Scheduled" {
			events[e.Regarding.Name] = append(events[e.Regarding.Name], e.Note)
		}
	}
	for i := range pods {
		p := &pods[i]
		evs := events[p.Name]
		if len(evs) > 1 {
			t.Errorf("pod %s has %d Scheduled events, want at most 1: %q", p.Name, len(evs), evs)
		}
		if len(evs) == 1 {
			withEvent++
			if want := fmt.Sprintf("Successfully assigned %s/%s to %s", ns, p.Name, p.Spec.NodeName); evs[0] != want {
				t.Errorf("pod %s: Scheduled event %q, want %q", p.Name, evs[0], want)
			}
		}
	}
	return withEvent
}

// bindPod binds a pod through pods/binding, as another scheduler would.
func bindPod(ctx context.Context, client kubernetes.Interface, ns, pod, node string) error {
	return client.CoreV1().Pods(ns).Bind(ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: pod, Namespace: ns},
		Target:     v1.ObjectReference{Kind: "Node", Name: node},
	}, metav1.CreateOptions{})
}

// TestRunForgetsAPodDeletedBeforeItsBinding: a pod deleted while it is
// assumed on its node (held in PreBind) gives the node back at once: a pod
// waiting for that node binds there while the deleted pod's binding cycle
// is still held, and once that cycle fails on the missing pod nothing of it
// stays reserved, so the node, which fits one pod, takes the next ones.
func TestRunForgetsAPodDeletedBeforeItsBinding(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group, profile = "run-del", "kubectl-sched-del"
	groupNodes(ctx, t, c.Client, group, cluster.NodeSpec{Name: "run-del-a", CPU: "1", Memory: "64Gi"})
	ns := createNamespace(ctx, t, c.Client, "run-del")
	g := newGate()
	s := startRun(t, c, runOptions{profile: profile, config: gateConfig, plugins: g.registry()})

	// 600m of the node's 900m: one pod at a time.
	createPods(ctx, t, c.Client, ns, gated(ourPod("held", "600m", profile, group)))
	if node := g.wait(t, "held"); node != "run-del-a" {
		t.Fatalf("held assumed on %q, want run-del-a", node)
	}
	createPods(ctx, t, c.Client, ns, ourPod("waiting", "600m", profile, group))
	waitForPod(ctx, t, c.Client, ns, "waiting", unschedulable)

	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitForPod(ctx, t, c.Client, ns, "waiting", bound)
	if p.Spec.NodeName != "run-del-a" {
		t.Errorf("waiting bound to %q, want run-del-a", p.Spec.NodeName)
	}

	// The held binding cycle now binds a pod that is gone: it fails and
	// must leave nothing reserved.
	g.open("held")
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return value(s.scrape(t), "scheduler_schedule_attempts_total", map[string]string{"profile": profile, "result": "error"}) >= 1, nil
	})
	if err != nil {
		t.Fatalf("the deleted pod's binding never failed: %v", err)
	}
	for i := range 2 {
		if err := c.Client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			t.Fatal(err)
		}
		next := fmt.Sprintf("next-%d", i)
		createPods(ctx, t, c.Client, ns, ourPod(next, "600m", profile, group))
		p = waitForPod(ctx, t, c.Client, ns, next, bound)
	}
	mfs := s.scrape(t)
	if got := value(mfs, "scheduler_schedule_attempts_total", map[string]string{"profile": profile, "result": "scheduled"}); got != 3 {
		t.Errorf("scheduled attempts = %v, want 3 (waiting, next-0, next-1)", got)
	}
}

// TestRunHandlesABindingConflict: a pod bound by someone else while our
// scheduler has it assumed (held in PreBind) fails our binding with a
// conflict. The scheduler survives, does not bind it again, tells why in a
// FailedScheduling event, and its cache ends with the pod where the other
// binder put it and nothing on the node it had picked: of two pods that
// each need a whole node, one binds to the node ours had picked, the other
// stays pending.
func TestRunHandlesABindingConflict(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group, profile = "run-conflict", "kubectl-sched-conflict"
	groupNodes(ctx, t, c.Client, group,
		cluster.NodeSpec{Name: "run-conflict-a", CPU: "1", Memory: "64Gi"},
		cluster.NodeSpec{Name: "run-conflict-b", CPU: "1", Memory: "64Gi"})
	ns := createNamespace(ctx, t, c.Client, "run-conflict")
	g := newGate()
	s := startRun(t, c, runOptions{profile: profile, config: gateConfig, plugins: g.registry()})

	createPods(ctx, t, c.Client, ns, gated(ourPod("contested", "600m", profile, group)))
	ours := g.wait(t, "contested")
	other := map[string]string{"run-conflict-a": "run-conflict-b", "run-conflict-b": "run-conflict-a"}[ours]
	if other == "" {
		t.Fatalf("contested assumed on %q, want a group node", ours)
	}
	if err := bindPod(ctx, c.Client, ns, "contested", other); err != nil {
		t.Fatalf("binding it ourselves: %v", err)
	}
	g.open("contested")
	ev := waitForEvent(ctx, t, c.Client, ns, "contested", "FailedScheduling")
	if !strings.Contains(ev.Note, "already assigned") && !strings.Contains(ev.Note, "already bound") {
		t.Errorf("FailedScheduling note %q does not say the pod was bound already", ev.Note)
	}
	if got := waitForPod(ctx, t, c.Client, ns, "contested", bound).Spec.NodeName; got != other {
		t.Errorf("contested bound to %q, want %q (where the other binder put it)", got, other)
	}

	createPods(ctx, t, c.Client, ns, ourPod("first", "600m", profile, group), ourPod("second", "600m", profile, group))
	pods := waitForBoundCount(ctx, t, c.Client, ns, 2, 60*time.Second)
	for _, p := range pods {
		if p.Name != "contested" && bound(&p) && p.Spec.NodeName != ours {
			t.Errorf("pod %s bound to %s, the node the contested pod took: the cache lost it", p.Name, p.Spec.NodeName)
		}
	}
	// Still pending a little later: nothing of the failed binding frees
	// room that does not exist.
	time.Sleep(2 * time.Second)
	if got := podsPerNode(listPods(ctx, t, c.Client, ns)); got[ours] != 1 || got[other] != 1 {
		t.Errorf("pods per node %v, want one on each", got)
	}
	checkScheduledOnce(ctx, t, c.Client, ns, listPods(ctx, t, c.Client, ns))
	select {
	case err := <-s.done:
		t.Fatalf("run ended: %v", err)
	default:
	}
}

// TestRunRecoversFromAnAPIServerRestart: kube-apiserver is stopped while
// pods are being bound and started again on the same port and etcd data.
// The scheduler rides it out (informers relist, failed bindings are retried)
// and every pod ends bound exactly once: the nodes hold exactly as many
// pods as there are, so a pod lost from the cache or counted twice would
// show as one too many bound or one too few.
func TestRunRecoversFromAnAPIServerRestart(t *testing.T) {
	// Its own control plane: the shared one must not go away under the
	// other tests.
	c := cluster.StartForTest(t, cluster.Options{})
	for _, tc := range []struct {
		name string
		// qps is the client limit (burst the same); killAt is how many
		// pods are bound when the apiserver is killed.
		qps, killAt int
	}{
		// The client's rate limiter queues the retries of the bindings
		// refused during the outage behind the others, past its end.
		{name: "bindings held back by the client limit", qps: 30, killAt: 50},
		// Bindings in flight are cut off (connection reset, outcome
		// unknown: resolved by reading the pod) or refused and retried.
		{name: "bindings cut off mid-request", qps: 100, killAt: 20},
	} {
		t.Run(tc.name, func(t *testing.T) { testAPIServerRestart(t, c, tc.qps, tc.killAt) })
	}
}

func testAPIServerRestart(t *testing.T, c *cluster.Cluster, qps, killAt int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	group, profile := fmt.Sprintf("run-restart-%d", qps), fmt.Sprintf("kubectl-sched-restart-%d", qps)
	const nodes, perNode = 15, 20
	var specs []cluster.NodeSpec
	for i := range nodes {
		specs = append(specs, cluster.NodeSpec{Name: fmt.Sprintf("%s-%d", group, i), CPU: "8", Memory: "64Gi", Pods: perNode})
	}
	groupNodes(ctx, t, c.Client, group, specs...)
	ns := createNamespace(ctx, t, c.Client, "run-restart")
	// One pod more than the nodes hold.
	const total = nodes*perNode + 1
	for i := range total {
		createPods(ctx, t, c.Client, ns, ourPod(fmt.Sprintf("p-%03d", i), "100m", profile, group))
	}
	s := startRun(t, c, runOptions{profile: profile, qps: float32(qps), burst: int32(qps)})

	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		n := 0
		for i := range pods.Items {
			if bound(&pods.Items[i]) {
				n++
			}
		}
		return n >= killAt, nil
	})
	if err != nil {
		t.Fatalf("pods not being bound: %v", err)
	}
	// Killed, as a crash or an OOM kill would: in-flight requests break.
	if err := c.StopAPIServer(0); err != nil {
		t.Fatal(err)
	}
	killed := s.scrape(t)
	t.Logf("apiserver killed after %v scheduled attempts", value(killed, "scheduler_schedule_attempts_total", map[string]string{"profile": profile, "result": "scheduled"}))
	time.Sleep(5 * time.Second)
	if err := c.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	t.Logf("%d of %d pods bound when the apiserver came back", sum(podsPerNode(listPods(ctx, t, c.Client, ns))), total)

	// The pod left over may not be marked: its PodScheduled patch may have
	// failed during the outage (kube retries it as briefly) and nothing
	// that happens afterwards makes it schedulable. It must still be in
	// the queue.
	pods := waitForBound(ctx, t, c.Client, ns, nodes*perNode, 3*time.Minute, false)
	t.Logf("all bound %v after the restart", time.Since(restarted).Round(time.Millisecond))
	mfs := s.scrape(t)
	var queued float64
	for _, q := range []string{"active", "backoff", "unschedulable", "gated"} {
		queued += value(mfs, "scheduler_pending_pods", map[string]string{"queue": q})
	}
	if queued != total-nodes*perNode {
		t.Errorf("%v pods in the queue, want %d (the one that fits nowhere)", queued, total-nodes*perNode)
	}
	for node, n := range podsPerNode(pods) {
		if n > perNode {
			t.Errorf("node %s has %d pods, capacity %d", node, n, perNode)
		}
	}
	// The pending pod stays pending: no room was freed by mistake.
	time.Sleep(2 * time.Second)
	if got := podsPerNode(listPods(ctx, t, c.Client, ns)); sum(got) != nodes*perNode {
		t.Errorf("%d pods bound, want %d", sum(got), nodes*perNode)
	}
	withEvent := checkScheduledOnce(ctx, t, c.Client, ns, pods)
	scheduled := value(s.scrape(t), "scheduler_schedule_attempts_total", map[string]string{"profile": profile, "result": "scheduled"})
	errs := value(s.scrape(t), "scheduler_schedule_attempts_total", map[string]string{"profile": profile, "result": "error"})
	t.Logf("scheduled attempts %v, errors %v, pods with a Scheduled event %d", scheduled, errs, withEvent)
	if scheduled > nodes*perNode {
		t.Errorf("scheduled attempts %v > %d pods bound: a pod was bound twice", scheduled, nodes*perNode)
	}
	select {
	case err := <-s.done:
		t.Fatalf("run ended: %v", err)
	default:
	}
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
