package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-sched/kubectl-sched/internal/cli"
	"github.com/kubectl-sched/kubectl-sched/internal/top"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// envRecordTop names a directory: the top tests then write the raw /metrics
// texts they scrape there (internal/tui/testdata is recorded this way).
const envRecordTop = "KUBECTL_SCHED_RECORD_TOP"

func recordTop(t *testing.T, name string, body []byte) {
	t.Helper()
	dir := os.Getenv(envRecordTop)
	if dir == "" {
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), schedulerFamilies(body), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %s", filepath.Join(dir, name))
}

// schedulerFamilies keeps the lines of the scheduler_* families and
// process_start_time_seconds (what top reads), so recordings stay small.
func schedulerFamilies(body []byte) []byte {
	var out bytes.Buffer
	for _, line := range strings.SplitAfter(string(body), "\n") {
		name := line
		if strings.HasPrefix(line, "# ") {
			if f := strings.Fields(line); len(f) >= 3 {
				name = f[2]
			}
		}
		if strings.HasPrefix(name, "scheduler_") || strings.HasPrefix(name, "process_start_time_seconds") {
			out.WriteString(line)
		}
	}
	return out.Bytes()
}

// runTop runs `kubectl sched top ARGS...` in-process and decodes its
// --once -o json document.
func runTop(ctx context.Context, t *testing.T, args ...string) *top.Stats {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	if code := cli.ExecuteContext(ctx, streams, cli.Settings{}, append([]string{"top"}, args...)); code != 0 {
		t.Fatalf("kubectl sched top %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	var st top.Stats
	if err := json.Unmarshal(out.Bytes(), &st); err != nil {
		t.Fatalf("decoding top's JSON: %v\n%s", err, out.String())
	}
	return &st
}

func attempts(st *top.Stats, result string) float64 {
	for _, a := range st.Attempts {
		if a.Result == result {
			return a.Total
		}
	}
	return 0
}

func queuePending(st *top.Stats, q string) float64 {
	for _, x := range st.Queues {
		if x.Name == q {
			return x.Pending
		}
	}
	return -1
}

func unschedulableBy(st *top.Stats, plugin string) float64 {
	for _, u := range st.Unschedulable {
		if u.Plugin == plugin {
			return u.Pods
		}
	}
	return 0
}

// checkTopStats checks what `top --once` says after the scenario of both
// tests: `fit` pods bound and `tooBig` pods waiting for cpu.
//
// others is how many pending pods outside the scenario the scheduler may
// also hold (a stock kube-scheduler sees every default-scheduler pod of the
// shared test cluster, other tests' unschedulable ones included): its
// unschedulable queue and rejections may count up to that many more.
func checkTopStats(t *testing.T, st *top.Stats, profile string, fit, tooBig, others int) {
	t.Helper()
	if !st.Scheduler || st.Samples != 2 || st.IntervalSeconds <= 0 {
		t.Errorf("top: scheduler %v, %d samples, interval %vs; want scheduler metrics in two samples", st.Scheduler, st.Samples, st.IntervalSeconds)
	}
	if got := attempts(st, "scheduled"); got < float64(fit) {
		t.Errorf("top: %v scheduled attempts, want at least %d", got, fit)
	}
	if got := attempts(st, "unschedulable"); got < float64(tooBig) {
		t.Errorf("top: %v unschedulable attempts, want at least %d", got, tooBig)
	}
	if got := queuePending(st, "unschedulable"); got < float64(tooBig) || got > float64(tooBig+others) {
		t.Errorf("top: unschedulable queue %v, want %d (up to %d more pending elsewhere)", got, tooBig, others)
	}
	if got := unschedulableBy(st, "NodeResourcesFit"); got < float64(tooBig) || got > float64(tooBig+others) {
		t.Errorf("top: scheduler_unschedulable_pods{plugin=NodeResourcesFit} %v, want %d (up to %d more pending elsewhere) (%+v)", got, tooBig, others, st.Unschedulable)
	}
	found := false
	for _, p := range st.Profiles {
		found = found || p == profile
	}
	if !found {
		t.Errorf("top: profiles %v, want %s among them", st.Profiles, profile)
	}
}

// topScenario creates the group's nodes (3 × 1900m allocatable cpu) and `first` pods of 900m
// cpu, waits for them to bind, calls between, then creates `second` pods
// more (of which 6-first fit) and waits until every one is bound or
// unschedulable.
func topScenario(ctx context.Context, t *testing.T, c *cluster.Cluster, group, profile string, first, second int, between func()) {
	t.Helper()
	groupNodes(ctx, t, c.Client, group,
		cluster.NodeSpec{Name: group + "-a", Zone: "zone-a", CPU: "2", Memory: "16Gi"},
		cluster.NodeSpec{Name: group + "-b", Zone: "zone-b", CPU: "2", Memory: "16Gi"},
		cluster.NodeSpec{Name: group + "-c", Zone: "zone-c", CPU: "2", Memory: "16Gi"},
	)
	ns := createNamespace(ctx, t, c.Client, group)
	mk := func(from, n int) []*v1.Pod {
		var out []*v1.Pod
		for i := from; i < from+n; i++ {
			out = append(out, ourPod(fmt.Sprintf("p-%02d", i), "900m", profile, group))
		}
		return out
	}
	pods := mk(0, first)
	createPods(ctx, t, c.Client, ns, pods...)
	for _, p := range pods {
		waitForPod(ctx, t, c.Client, ns, p.Name, bound)
	}
	between()
	more := mk(first, second)
	createPods(ctx, t, c.Client, ns, more...)
	for _, p := range more {
		waitForPod(ctx, t, c.Client, ns, p.Name, func(p *v1.Pod) bool { return bound(p) || unschedulable(p) })
	}
}

// TestTopOnceReadsRun: `top --once -o json` against an in-process `run`
// reports the attempts, queues and reasons the scenario produced.
func TestTopOnceReadsRun(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group, profile = "top-run", "kubectl-sched-top-run"
	s := startRun(t, c, runOptions{profile: profile})
	topScenario(ctx, t, c, group, profile, 4, 8, func() {
		_, body := s.get("/metrics")
		recordTop(t, "run-0.txt", []byte(body))
	})
	// The unschedulable pods' gauges settle once their attempts are done.
	time.Sleep(500 * time.Millisecond)
	_, body := s.get("/metrics")
	recordTop(t, "run-1.txt", []byte(body))
	st := runTop(ctx, t, "--once", "-o", "json", "--interval", "300ms", "--metrics-url", "http://"+s.addr+"/metrics")
	checkTopStats(t, st, profile, 6, 6, 0)
}

// TestTopOnceReadsAStockKubeScheduler: the same against the real
// kube-scheduler v1.37.2 over https, authenticated with the kubeconfig's
// client certificate.
func TestTopOnceReadsAStockKubeScheduler(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group = "top-kube"
	sched, err := c.StartScheduler(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sched.Stop(10 * time.Second) })
	url := fmt.Sprintf("https://127.0.0.1:%d/metrics", sched.Port)
	scrape := func(name string) {
		cfg := rest.CopyConfig(c.Config)
		cfg.Insecure, cfg.CAData, cfg.CAFile = true, nil, ""
		rt, err := rest.TransportFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := (&http.Client{Transport: rt, Timeout: 10 * time.Second}).Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
		}
		recordTop(t, name, body)
	}
	topScenario(ctx, t, c, group, v1.DefaultSchedulerName, 4, 8, func() { scrape("kube-scheduler-0.txt") })
	time.Sleep(500 * time.Millisecond)
	scrape("kube-scheduler-1.txt")
	st := runTop(ctx, t, "--once", "-o", "json", "--interval", "300ms", "--metrics-url", url,
		"--kubeconfig", c.Kubeconfig, "--metrics-insecure-skip-tls-verify")
	checkTopStats(t, st, v1.DefaultSchedulerName, 6, 6, pendingElsewhere(ctx, t, c, group))
}

// pendingElsewhere counts the default-scheduler pods of the cluster, outside
// group's namespaces, that are not bound: other tests' leftovers, which a
// stock kube-scheduler queues too.
func pendingElsewhere(ctx context.Context, t *testing.T, c *cluster.Cluster, group string) int {
	t.Helper()
	list, err := c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range list.Items {
		if p.Spec.NodeName == "" && p.Spec.SchedulerName == v1.DefaultSchedulerName && !strings.HasPrefix(p.Namespace, group+"-") {
			n++
		}
	}
	return n
}
