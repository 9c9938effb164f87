package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// runProcess starts `kubectl-sched run` as a process of its own (so that it
// can be killed), with leader election on the lease ns/name and short
// durations, and waits until its /readyz passes.
func runProcess(ctx context.Context, t *testing.T, c *cluster.Cluster, bin, profile, ns, identity string, qps int) (*cluster.Process, *runningScheduler) {
	t.Helper()
	cfg := fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection: {qps: %d, burst: %d}
leaderElection:
  leaderElect: true
  leaseDuration: 4s
  renewDeadline: 3s
  retryPeriod: 500ms
  resourceNamespace: %s
  resourceName: %s
profiles:
- schedulerName: %s
`, qps, qps, ns, profile, profile)
	path := filepath.Join(t.TempDir(), identity+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	p, err := c.StartProgram("kubectl-sched-"+identity, bin, []string{
		"run", "--config", path, "--kubeconfig", c.Kubeconfig, "--metrics-bind-address", addr, "-v", "2",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	s := &runningScheduler{addr: addr}
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		select {
		case <-p.Exited():
			return false, fmt.Errorf("%s exited", identity)
		default:
		}
		code, _ := s.get("/readyz")
		return code == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("%s not ready: %v", identity, err)
	}
	return p, s
}

// TestRunStandbyFinishesThePodsOfAKilledLeader: two `kubectl sched run`
// processes on one Lease; the leader is killed with SIGKILL (no lease
// release, bindings cut off) while it binds; the standby takes the lease
// once it expires and binds the rest. The node holds one pod less than
// there are, so every pod ends bound exactly once or pending, none lost:
// the standby counts the pods the leader bound.
func TestRunStandbyFinishesThePodsOfAKilledLeader(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const group, profile, capacity = "run-kill", "kubectl-sched-kill", 40
	groupNodes(ctx, t, c.Client, group, cluster.NodeSpec{Name: "run-kill-a", CPU: "16", Memory: "128Gi", Pods: capacity})
	ns := createNamespace(ctx, t, c.Client, "run-kill")
	bin := buildBinary(t)

	// The leader binds 5 pods a second, so it is killed mid-way.
	leader, a := runProcess(ctx, t, c, bin, profile, ns, "a", 5)
	holderA := a.holder(ctx, t, c, ns, profile) // alone, so the leader
	_, b := runProcess(ctx, t, c, bin, profile, ns, "b", 100)
	for i := range capacity + 1 {
		createPods(ctx, t, c.Client, ns, ourPod(fmt.Sprintf("p-%02d", i), "100m", profile, group))
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		return sum(podsPerNode(listPods(ctx, t, c.Client, ns))) >= 10, nil
	})
	if err != nil {
		t.Fatalf("leader not binding: %v", err)
	}
	if got := value(b.scrape(t), "scheduler_schedule_attempts_total", map[string]string{"profile": profile, "result": "scheduled"}); got != 0 {
		t.Errorf("standby scheduled %v pods while the leader held the lease", got)
	}
	leader.Kill()
	killed := time.Now()
	atKill := sum(podsPerNode(listPods(ctx, t, c.Client, ns)))
	l, err := c.Client.CoordinationV1().Leases(ns).Get(ctx, profile, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := l.Spec.HolderIdentity; h == nil || *h != holderA {
		t.Fatalf("lease held by %v right after the kill, want the dead leader %q (a kill releases nothing)", h, holderA)
	}

	pods := waitForBoundCount(ctx, t, c.Client, ns, capacity, 2*time.Minute)
	t.Logf("%d of %d pods bound when the leader was killed; the standby bound the rest %v later", atKill, capacity+1, time.Since(killed).Round(time.Millisecond))
	if got := podsPerNode(pods)["run-kill-a"]; got != capacity {
		t.Errorf("node holds %d pods, want its capacity %d", got, capacity)
	}
	time.Sleep(2 * time.Second)
	if got := sum(podsPerNode(listPods(ctx, t, c.Client, ns))); got != capacity {
		t.Errorf("%d pods bound, want %d", got, capacity)
	}
	checkScheduledOnce(ctx, t, c.Client, ns, listPods(ctx, t, c.Client, ns))
	byB := value(b.scrape(t), "scheduler_schedule_attempts_total", map[string]string{"profile": profile, "result": "scheduled"})
	if int(byB) < capacity-atKill-5 || int(byB) > capacity-atKill+5 {
		// Loose: a few bindings in flight at the kill may have landed.
		t.Errorf("standby scheduled %v pods, want about %d (those the leader left)", byB, capacity-atKill)
	}
	if h := b.holder(ctx, t, c, ns, profile); h == holderA || h == "" {
		t.Errorf("lease held by %q, want the standby", h)
	}
}

// holder returns the lease's holder identity.
func (s *runningScheduler) holder(ctx context.Context, t *testing.T, c *cluster.Cluster, ns, name string) string {
	t.Helper()
	var h string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := c.Client.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false, nil
		}
		h = *l.Spec.HolderIdentity
		return h != "", nil
	})
	if err != nil {
		t.Fatalf("lease %s/%s has no holder: %v", ns, name, err)
	}
	return h
}
