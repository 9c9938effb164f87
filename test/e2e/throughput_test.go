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
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// EnvBench turns TestRunThroughput on (it takes minutes at QPS 50).
const EnvBench = "KUBECTL_SCHED_E2E_BENCH"

// TestRunThroughput measures pods/s of `kubectl sched run` and of the real
// kube-scheduler v1.37.2, one after the other, on the same nodes with the
// same client limits: the time from starting the scheduler to the last of
// the pending pods bound, and to the last of their Scheduled events
// written (both counted from watches, so that measuring costs the
// apiserver little). Each run also logs the CPU-seconds the scheduler, the
// apiserver and etcd used, and the load average. Off unless
// KUBECTL_SCHED_E2E_BENCH=1; sizes from KUBECTL_SCHED_E2E_BENCH_NODES /
// _PODS (default 100 / 500), rounds at QPS 1000 from _ROUNDS, one
// "qps/burst" setting from _QPS (default both 50/100 and 1000/1000), the
// schedulers from _SCHEDULERS (see bindOnly). `make
// bench-live` runs it at 1000 / 3000. With _CPUPROFILE=prefix, our runs
// write CPU profiles (the whole test process: our scheduler and the
// watches, until the last pod is bound) to prefix-<qps>-<round>.pprof.
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
		// rates are the rounds' pods/s per scheduler, to the last pod
		// bound; withEvents to the last Scheduled event written.
		rates, withEvents map[string][]float64
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
	// The schedulers of each round, in turn; _SCHEDULERS=a,b,... picks
	// them (kubectl-sched, kube-scheduler, bind-only).
	scheds := []string{"kubectl-sched", "kube-scheduler"}
	if v := os.Getenv(EnvBench + "_SCHEDULERS"); v != "" {
		scheds = strings.Split(v, ",")
		for _, w := range scheds {
			if w != "kubectl-sched" && w != "kube-scheduler" && w != bindOnly {
				t.Fatalf("%s_SCHEDULERS: unknown scheduler %q", EnvBench, w)
			}
		}
	}
	for _, limits := range settings {
		r := result{qps: limits[0], burst: limits[1], rates: map[string][]float64{}, withEvents: map[string][]float64{}}
		var order []string
		for range max(1, map[bool]int{true: rounds}[limits[0] >= 1000]) {
			order = append(order, scheds...)
		}
		for _, who := range order {
			ns := createNamespace(ctx, t, c.Client, "bench")
			profile := v1.DefaultSchedulerName
			switch who {
			case "kubectl-sched":
				profile = "kubectl-sched-bench"
			case bindOnly:
				profile = bindOnly
			}
			pods := make([]*v1.Pod, nPods)
			for i := range pods {
				pods[i] = ourPod(fmt.Sprintf("p-%05d", i), "100m", profile, group)
			}
			createPodsConcurrently(ctx, t, c.Client, ns, pods)
			w := watchRun(ctx, t, c, ns)
			if prefix := os.Getenv(EnvBench + "_CPUPROFILE"); prefix != "" && who == "kubectl-sched" {
				f, err := os.Create(fmt.Sprintf("%s-%d-%d.pprof", prefix, limits[0], len(r.rates[who])+1))
				if err != nil {
					t.Fatal(err)
				}
				if err := pprof.StartCPUProfile(f); err != nil {
					t.Fatal(err)
				}
				defer f.Close()
			}
			counts := readServerCounts(ctx, c.Client)
			before := sampleCPU(c)
			start := time.Now()
			var stop func()
			var schedCPU func() float64
			switch who {
			case "kubectl-sched":
				s := startRun(t, c, runOptions{profile: profile, qps: float32(limits[0]), burst: int32(limits[1])})
				stop = func() { _ = s.stop(t) }
				// In process: the test's own CPU (the watches are a small
				// part of it).
				schedCPU = selfCPU
			case bindOnly:
				done := make(chan struct{})
				go func() {
					defer close(done)
					bindAll(ctx, t, restConfig(c, runOptions{qps: float32(limits[0]), burst: int32(limits[1])}), ns, pods, specs)
				}()
				stop = func() { <-done }
				schedCPU = selfCPU
			default:
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
				schedCPU = func() float64 { return procCPU(p.Pid()) }
			}
			schedBefore := schedCPU()
			if who == "kube-scheduler" {
				schedBefore = 0 // its CPU from its start
			}
			err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 20*time.Minute, true, func(context.Context) (bool, error) {
				return w.bound() == nPods, nil
			})
			took := time.Since(start)
			if who == "kubectl-sched" && os.Getenv(EnvBench+"_CPUPROFILE") != "" {
				pprof.StopCPUProfile()
			}
			if err != nil {
				stop()
				w.stop()
				t.Fatalf("%s: %d of %d pods bound: %v", who, w.bound(), nPods, err)
			}
			// Every pod's Scheduled event must reach the server too: the
			// run is over when the last one has.
			err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Minute, true, func(context.Context) (bool, error) {
				return w.events() >= nPods, nil
			})
			all := time.Since(start)
			cpu := sampleCPU(c).minus(before)
			cpu.sched = schedCPU() - schedBefore
			added := readServerCounts(ctx, c.Client).minus(counts)
			stop()
			w.stop()
			if err != nil {
				t.Fatalf("%s: %d of %d Scheduled events written: %v", who, w.events(), nPods, err)
			}
			rate, rateEvents := float64(nPods)/took.Seconds(), float64(nPods)/all.Seconds()
			r.rates[who] = append(r.rates[who], rate)
			r.withEvents[who] = append(r.withEvents[who], rateEvents)
			t.Logf("%s, QPS %d burst %d: %d pods on %d nodes bound in %v = %.1f pods/s, events written in %v = %.1f pods/s; CPU s: scheduler %.1f, apiserver %.1f, etcd %.1f; load %s",
				who, limits[0], limits[1], nPods, nNodes, took.Round(time.Millisecond), rate, all.Round(time.Millisecond), rateEvents,
				cpu.sched, cpu.apiserver, cpu.etcd, loadAverage())
			if added != "" {
				t.Logf("%s: API server: %s", who, added)
			}
			// Free the nodes for the next run: without a kubelet only a
			// zero grace period removes bound pods.
			if err := deleteAllPods(ctx, t, c.Client, ns); err != nil {
				t.Fatal(err)
			}
		}
		results = append(results, r)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%d nodes, %d pending pods (pods/s from scheduler start to the last pod bound, and to the last Scheduled event written; median of the rounds):\n", nNodes, nPods)
	fmt.Fprintf(&b, "%-12s %15s %15s %7s %15s %15s %7s %7s\n", "QPS/burst", "kubectl-sched", "kube-scheduler", "ratio", "+events ours", "+events kube", "ratio", "rounds")
	for _, r := range results {
		if floor := r.withEvents[bindOnly]; len(floor) > 0 {
			fmt.Fprintf(&b, "(%s, QPS %d: %.1f pods/s bound, %.1f with events: what the API server allows)\n", bindOnly, r.qps, median(r.rates[bindOnly]), median(floor))
		}
		ours, theirs := median(r.rates["kubectl-sched"]), median(r.rates["kube-scheduler"])
		oursEv, theirsEv := median(r.withEvents["kubectl-sched"]), median(r.withEvents["kube-scheduler"])
		ratio := func(a, b float64) string {
			if a == 0 || b == 0 {
				return "-"
			}
			return fmt.Sprintf("%.2fx", a/b)
		}
		fmt.Fprintf(&b, "%-12s %15.1f %15.1f %7s %15.1f %15.1f %7s %7d\n", fmt.Sprintf("%d/%d", r.qps, r.burst),
			ours, theirs, ratio(ours, theirs), oursEv, theirsEv, ratio(oursEv, theirsEv), max(len(r.rates["kubectl-sched"]), len(r.rates["kube-scheduler"])))
	}
	t.Log(b.String())
}

// bindOnly is a scheduler that decides nothing: it binds pod i to node
// i mod n and writes its Scheduled event, 128 pods at a time, with the
// client limits of the run (KUBECTL_SCHED_E2E_BENCH_SCHEDULERS lists it
// to run it). Its rate is what the API server allows a scheduler on this
// machine: the writes every scheduler must make, and nothing else.
const bindOnly = "bind-only"

func bindAll(ctx context.Context, t *testing.T, cfg *rest.Config, ns string, pods []*v1.Pod, nodes []cluster.NodeSpec) {
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Error(err)
		return
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range 128 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				p, node := pods[i], nodes[i%len(nodes)].Name
				b := &v1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name, UID: p.UID}, Target: v1.ObjectReference{Kind: "Node", Name: node}}
				if err := client.CoreV1().Pods(ns).Bind(ctx, b, metav1.CreateOptions{}); err != nil {
					t.Error(err)
					continue
				}
				ev := &eventsv1.Event{
					ObjectMeta:          metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s.%x", p.Name, time.Now().UnixNano())},
					EventTime:           metav1.NowMicro(),
					ReportingController: bindOnly, ReportingInstance: bindOnly,
					Action: "Binding", Reason: "Scheduled", Type: v1.EventTypeNormal,
					Regarding: v1.ObjectReference{Kind: "Pod", Namespace: ns, Name: p.Name, UID: p.UID, APIVersion: "v1"},
					Note:      fmt.Sprintf("Successfully assigned %s/%s to %s", ns, p.Name, node),
				}
				if _, err := client.EventsV1().Events(ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for i := range pods {
		work <- i
	}
	close(work)
	wg.Wait()
}

// createPodsConcurrently creates the pods, 16 requests at a time, so that
// setting up 10000 pending pods takes seconds rather than a minute; each
// pods[i] becomes the created pod.
func createPodsConcurrently(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, pods []*v1.Pod) {
	t.Helper()
	work := make(chan int)
	errs := make(chan error, 16)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				created, err := client.CoreV1().Pods(ns).Create(ctx, pods[i], metav1.CreateOptions{})
				if err != nil {
					select {
					case errs <- fmt.Errorf("creating pod %s: %w", pods[i].Name, err):
					default:
					}
					continue
				}
				pods[i] = created
			}
		}()
	}
	for i := range pods {
		work <- i
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}
}

// runWatch counts, from informers, the namespace's pods with a node and
// the pods with a Scheduled event (events.k8s.io/v1).
type runWatch struct {
	bound, events func() int
	stop          func()
}

func watchRun(ctx context.Context, t *testing.T, c *cluster.Cluster, ns string) runWatch {
	t.Helper()
	f := informers.NewSharedInformerFactoryWithOptions(c.Client, 0, informers.WithNamespace(ns))
	bound := countDistinct(t, f.Core().V1().Pods().Informer(), func(obj any) (string, bool) {
		if p, ok := obj.(*v1.Pod); ok && p.Spec.NodeName != "" {
			return p.Name, true
		}
		return "", false
	})
	events := countDistinct(t, f.Events().V1().Events().Informer(), func(obj any) (string, bool) {
		if e, ok := obj.(*eventsv1.Event); ok && e.Reason == "Scheduled" && e.Regarding.Kind == "Pod" {
			return e.Regarding.Name, true
		}
		return "", false
	})
	wctx, cancel := context.WithCancel(ctx)
	f.Start(wctx.Done())
	f.WaitForCacheSync(wctx.Done())
	return runWatch{bound: bound, events: events, stop: func() { cancel(); f.Shutdown() }}
}

// countDistinct counts the distinct keys of the informer's objects that
// count (added or updated).
func countDistinct(t *testing.T, inf cache.SharedIndexInformer, key func(obj any) (string, bool)) func() int {
	t.Helper()
	var n atomic.Int64
	seen := sync.Map{}
	note := func(obj any) {
		if k, ok := key(obj); ok {
			if _, dup := seen.LoadOrStore(k, true); !dup {
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
	return func() int { return int(n.Load()) }
}

// cpuSample is CPU-seconds used so far by the control plane.
type cpuSample struct{ apiserver, etcd, sched float64 }

func sampleCPU(c *cluster.Cluster) cpuSample {
	var s cpuSample
	for _, p := range c.Processes() {
		switch p.Name {
		case cluster.APIServerBinary:
			s.apiserver += procCPU(p.Pid())
		case cluster.EtcdBinary:
			s.etcd += procCPU(p.Pid())
		}
	}
	return s
}

func (s cpuSample) minus(o cpuSample) cpuSample {
	return cpuSample{apiserver: s.apiserver - o.apiserver, etcd: s.etcd - o.etcd, sched: s.sched - o.sched}
}

// procCPU is a process's user+system CPU-seconds (/proc/PID/stat; 0 if
// unreadable).
func procCPU(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces).
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	var user, sys float64
	fmt.Sscan(f[11], &user)
	fmt.Sscan(f[12], &sys)
	return (user + sys) / 100 // USER_HZ
}

// selfCPU is this process's CPU-seconds.
func selfCPU() float64 { return procCPU(os.Getpid()) }

// loadAverage is /proc/loadavg's first three fields.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
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

// deleteAllPods deletes every pod of namespace ns and waits until none is
// left. On a slow machine one DeleteCollection of 10000 pods outlives the
// API server's request timeout (the server goes on deleting after it
// answers "may still be processing" or resets the stream), so a failed
// call is logged and repeated until the namespace is empty.
func deleteAllPods(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns string) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		left, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			last = err
			return false, nil
		}
		if len(left.Items) == 0 {
			return true, nil
		}
		if err := cs.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, metav1.ListOptions{}); err != nil {
			t.Logf("deleting the pods of %s (retried until none is left): %v", ns, err)
			last = err
		}
		return false, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("pods of %s not all deleted: %w (last error: %v)", ns, err, last)
	}
	return err
}
