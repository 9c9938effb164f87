package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// EnvBench turns TestRunThroughput on (it takes minutes at QPS 50).
const EnvBench = "KUBECTL_SCHED_E2E_BENCH"

// TestRunThroughput measures pods/s of `kubectl sched run` and of the real
// kube-scheduler v1.37.2, one after the other, on the same nodes with the
// same client limits: the time from starting the scheduler to the last of
// the pending pods bound (counted from a watch, so that measuring costs the
// apiserver nothing). Off unless KUBECTL_SCHED_E2E_BENCH=1; sizes from
// KUBECTL_SCHED_E2E_BENCH_NODES / _PODS (default 100 / 500). `make
// bench-live` runs it at 1000 / 3000. With _CPUPROFILE=prefix, our runs
// write CPU profiles (the whole test process: our scheduler and the
// watch) to prefix-<qps>.pprof.
func TestRunThroughput(t *testing.T) {
	if os.Getenv(EnvBench) != "1" {
		t.Skipf("%s=1 runs it", EnvBench)
	}
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	nNodes, nPods := envInt(EnvBench+"_NODES", 100), envInt(EnvBench+"_PODS", 500)
	const group = "run-bench"
	specs := cluster.GenerateNodes(nNodes, cluster.GenerateOptions{Prefix: "bench-", Seed: 1})
	groupNodes(ctx, t, c.Client, group, specs...)

	type result struct {
		qps, burst int
		// rates are the rounds' pods/s per scheduler.
		rates map[string][]float64
	}
	// Rounds at QPS 1000 (each scheduler in turn; the median counts): on a
	// shared machine one run says little. QPS 50 runs are client-bound and
	// long, one round each.
	rounds := envInt(EnvBench+"_ROUNDS", 1)
	var results []result
	settings := [][2]int{{50, 100}, {1000, 1000}}
	if v := os.Getenv(EnvBench + "_QPS"); v != "" {
		// One setting, "qps/burst" (for profiling runs).
		var q, b int
		if _, err := fmt.Sscanf(v, "%d/%d", &q, &b); err != nil {
			t.Fatalf("%s_QPS=%q: want qps/burst", EnvBench, v)
		}
		settings = [][2]int{{q, b}}
	}
	for _, limits := range settings {
		r := result{qps: limits[0], burst: limits[1], rates: map[string][]float64{}}
		var order []string
		for range max(1, map[bool]int{true: rounds}[limits[0] >= 1000]) {
			order = append(order, "kubectl-sched", "kube-scheduler")
		}
		for _, who := range order {
			ns := createNamespace(ctx, t, c.Client, "bench")
			profile := v1.DefaultSchedulerName
			if who == "kubectl-sched" {
				profile = "kubectl-sched-bench"
			}
			for i := 0; i < nPods; i++ {
				createPods(ctx, t, c.Client, ns, ourPod(fmt.Sprintf("p-%04d", i), "100m", profile, group))
			}
			boundCount, stopWatch := watchBound(ctx, t, c, ns)
			if prefix := os.Getenv(EnvBench + "_CPUPROFILE"); prefix != "" && who == "kubectl-sched" {
				f, err := os.Create(fmt.Sprintf("%s-%d.pprof", prefix, limits[0]))
				if err != nil {
					t.Fatal(err)
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					t.Fatal(err)
				}
				defer f.Close()
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
			err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Minute, true, func(context.Context) (bool, error) {
				return boundCount() == nPods, nil
			})
			took := time.Since(start)
			if who == "kubectl-sched" && os.Getenv(EnvBench+"_CPUPROFILE") != "" {
				pprof.StopCPUProfile()
			}
			stop()
			stopWatch()
			if err != nil {
				t.Fatalf("%s: %d of %d pods bound: %v", who, boundCount(), nPods, err)
			}
			rate := float64(nPods) / took.Seconds()
			r.rates[who] = append(r.rates[who], rate)
			t.Logf("%s, QPS %d burst %d: %d pods on %d nodes in %v = %.1f pods/s", who, limits[0], limits[1], nPods, nNodes, took.Round(time.Millisecond), rate)
			// Free the nodes for the next run: without a kubelet only a
			// zero grace period removes bound pods.
			if err := c.Client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		results = append(results, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d nodes, %d pending pods (pods/s from scheduler start to the last pod bound; median of the rounds):\n", nNodes, nPods)
	fmt.Fprintf(&b, "%-12s %15s %15s %7s %7s\n", "QPS/burst", "kubectl-sched", "kube-scheduler", "ratio", "rounds")
	for _, r := range results {
		ours, theirs := median(r.rates["kubectl-sched"]), median(r.rates["kube-scheduler"])
		fmt.Fprintf(&b, "%-12s %15.1f %15.1f %6.2fx %7d\n", fmt.Sprintf("%d/%d", r.qps, r.burst), ours, theirs, ours/theirs, len(r.rates["kubectl-sched"]))
	}
	t.Log(b.String())
}

// watchBound counts the namespace's pods with a node, from an informer.
func watchBound(ctx context.Context, t *testing.T, c *cluster.Cluster, ns string) (count func() int, stop func()) {
	t.Helper()
	f := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, informers.WithNamespace(ns))
	inf := f.Core().V1().Pods().Informer()
	var n atomic.Int64
	seen := sync.Map{}
	note := func(obj any) {
		if p, ok := obj.(*v1.Pod); ok && p.Spec.NodeName != "" {
			if _, dup := seen.LoadOrStore(p.Name, true); !dup {
				n.Add(1)
			}
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    note,
		UpdateFunc: func(_, obj any) { note(obj) },
	}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	f.Start(wctx.Done())
	f.WaitForCacheSync(wctx.Done())
	return func() int { return int(n.Load()) }, func() { cancel(); f.Shutdown() }
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err != nil || n <= 0 {
		return def
	}
	return n
}
