package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// EnvBench turns TestRunThroughput on (it takes minutes at QPS 50).
const EnvBench = "KUBECTL_SCHED_E2E_BENCH"

// TestRunThroughput measures pods/s of `kubectl sched run` and of the real
// kube-scheduler v1.37.2, one after the other, on the same nodes with the
// same client limits: the time from starting the scheduler to the last of
// the pending pods bound. Off unless KUBECTL_SCHED_E2E_BENCH=1; sizes from
// KUBECTL_SCHED_E2E_BENCH_NODES / _PODS (default 100 / 500).
func TestRunThroughput(t *testing.T) {
	if os.Getenv(EnvBench) != "1" {
		t.Skipf("%s=1 runs it", EnvBench)
	}
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	nNodes, nPods := envInt(EnvBench+"_NODES", 100), envInt(EnvBench+"_PODS", 500)
	const group = "run-bench"
	specs := cluster.GenerateNodes(nNodes, cluster.GenerateOptions{Prefix: "bench-", Seed: 1})
	groupNodes(ctx, t, c.Client, group, specs...)

	for _, limits := range [][2]int{{50, 100}, {1000, 1000}} {
		for _, who := range []string{"kubectl-sched", "kube-scheduler"} {
			ns := createNamespace(ctx, t, c.Client, "bench")
			profile := v1.DefaultSchedulerName
			if who == "kubectl-sched" {
				profile = "kubectl-sched-bench"
			}
			for i := 0; i < nPods; i++ {
				createPods(ctx, t, c.Client, ns, ourPod(fmt.Sprintf("p-%04d", i), "100m", profile, group))
			}
			start := time.Now()
			var stop func()
			if who == "kubectl-sched" {
				s := startRun(t, c, runOptions{profile: profile, qps: float32(limits[0]), burst: int32(limits[1])})
				stop = func() { _ = s.stop(t) }
			} else {
				cfg := filepath.Join(t.TempDir(), "sched.yaml")
				body := fmt.Sprintf("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nclientConnection: {qps: %d, burst: %d}\n", limits[0], limits[1])
				if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
				p, err := c.StartScheduler(ctx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				stop = func() { p.Stop(10 * time.Second) }
			}
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 20*time.Minute, true, func(ctx context.Context) (bool, error) {
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
				return n == nPods, nil
			})
			took := time.Since(start)
			stop()
			if err != nil {
				t.Fatalf("%s: not all %d pods bound: %v", who, nPods, err)
			}
			t.Logf("%s, QPS %d burst %d: %d pods on %d nodes in %v = %.1f pods/s", who, limits[0], limits[1], nPods, nNodes, took.Round(time.Millisecond), float64(nPods)/took.Seconds())
			// Free the nodes for the next run: without a kubelet only a
			// zero grace period removes bound pods.
			if err := c.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err != nil || n <= 0 {
		return def
	}
	return n
}
