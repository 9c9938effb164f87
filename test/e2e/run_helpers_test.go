package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	v1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/live"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// groupLabel keeps each test's pods on its own nodes: the package shares
// one cluster and the scheduler sees every node in it.
const groupLabel = "kubectl-sched.io/e2e-group"

// runOptions tune startRun.
type runOptions struct {
	// profile is the one profile's schedulerName (each test its own, so a
	// test's scheduler never takes another test's pods).
	profile string
	// lease, when set, turns leader election on, on that Lease
	// ("namespace/name"), with short durations; identity names the holder.
	lease, identity string
	// qps and burst, when set, are the client's limits (clientConnection).
	qps   float32
	burst int32
	// config, when set, is a KubeSchedulerConfiguration (YAML) to load
	// instead of the defaults; its first profile is renamed to profile.
	config string
	// plugins are registered beside the in-tree ones (test plugins the
	// config enables).
	plugins schedcore.Registry
	// features, when set, are the feature gates (`--feature-gates`): they
	// shape the default profile and the informers, as in `run`.
	features *schedcore.Features
}

// runningScheduler is one in-process `kubectl sched run` (the live driver).
type runningScheduler struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
}

// startRun starts the live driver against the cluster as its admin and
// waits until /readyz passes (informers synced). The test's cleanup stops
// it if the test did not.
func startRun(t *testing.T, c *cluster.Cluster, ro runOptions) *runningScheduler {
	t.Helper()
	path := ""
	if ro.config != "" {
		path = filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(path, []byte(ro.config), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	features := schedcore.DefaultFeatures
	if ro.features != nil {
		features = *ro.features
	}
	cfg, err := engine.LoadConfigWithFeatures(path, features)
	if err != nil {
		t.Fatal(err)
	}
	name := ro.profile
	cfg.Profiles[0].SchedulerName = &name
	reg, err := engine.Registry(ro.plugins)
	if err != nil {
		t.Fatal(err)
	}
	o := live.Options{
		Config:             cfg,
		Registry:           reg,
		Features:           features,
		RESTConfig:         restConfig(c, ro),
		MetricsBindAddress: "127.0.0.1:0",
		Logger:             klog.NewKlogr().WithValues("instance", ro.identity, "profile", ro.profile),
	}
	if ro.lease != "" {
		ns, lease, _ := strings.Cut(ro.lease, "/")
		o.LeaderElect = true
		o.LeaderElection = live.LeaderElection{
			LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond,
			ResourceNamespace: ns, ResourceName: lease, Identity: ro.identity,
		}
	}
	addr := make(chan string, 1)
	o.OnServing = func(a string) { addr <- a }
	ctx, cancel := context.WithCancel(context.Background())
	s := &runningScheduler{cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- live.Run(ctx, o) }()
	select {
	case s.addr = <-addr:
	case err := <-s.done:
		cancel()
		t.Fatalf("run ended before serving: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("run did not start serving in 30s")
	}
	t.Cleanup(func() { s.stop(t) })
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		code, _ := s.get("/readyz")
		return code == http.StatusOK, nil
	})
	if err != nil {
		t.Fatalf("run not ready: %v", err)
	}
	return s
}

// restConfig is the admin config with the client settings `kubectl sched
// run` uses by default (protobuf, as kube-scheduler's clientConnection).
func restConfig(c *cluster.Cluster, ro runOptions) *rest.Config {
	cfg := rest.CopyConfig(c.Config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	if ro.qps != 0 {
		cfg.QPS, cfg.Burst = ro.qps, int(ro.burst)
	}
	return cfg
}

// stop cancels the scheduler (as SIGTERM would) and returns what Run
// returned; calling it again returns nil.
func (s *runningScheduler) stop(t *testing.T) error {
	t.Helper()
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		return err
	case <-time.After(45 * time.Second):
		t.Error("run did not stop within 45s of its context's end")
		return errors.New("not stopped")
	}
}

func (s *runningScheduler) get(path string) (int, string) {
	resp, err := http.Get("http://" + s.addr + path)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// scrape reads /metrics with the Prometheus text parser.
func (s *runningScheduler) scrape(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		t.Fatalf("scraping: %v", err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("metrics Content-Type %q, want the text format", ct)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing metrics: %v", err)
	}
	return mfs
}

// sample finds the series of a family with exactly these labels (a subset
// match on the given ones); nil if none.
func sample(mfs map[string]*dto.MetricFamily, name string, labels map[string]string) *dto.Metric {
	mf := mfs[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if have[k] != v {
				continue next
			}
		}
		return m
	}
	return nil
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// value is a counter's or gauge's value, or a histogram's sample count; 0
// when the series is absent.
func value(mfs map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	m := sample(mfs, name, labels)
	switch {
	case m == nil:
		return 0
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// groupNodes creates nodes labelled with the test's group and deletes them
// when the test ends.
func groupNodes(ctx context.Context, t *testing.T, client kubernetes.Interface, group string, specs ...cluster.NodeSpec) {
	t.Helper()
	for i := range specs {
		if specs[i].Labels == nil {
			specs[i].Labels = map[string]string{}
		}
		specs[i].Labels[groupLabel] = group
	}
	if err := cluster.CreateNodes(ctx, client, cluster.Nodes(specs)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range specs {
			_ = client.CoreV1().Nodes().Delete(context.Background(), s.Name, metav1.DeleteOptions{})
		}
	})
}

// ourPod is makePod for our profile, on the group's nodes.
func ourPod(name, cpu, profile, group string) *v1.Pod {
	p := makePod(name, cpu, map[string]string{groupLabel: group})
	p.Spec.SchedulerName = profile
	return p
}

func createPods(ctx context.Context, t *testing.T, client kubernetes.Interface, ns string, pods ...*v1.Pod) {
	t.Helper()
	for _, p := range pods {
		if _, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %s: %v", p.Name, err)
		}
	}
}

func bound(p *v1.Pod) bool { return p.Spec.NodeName != "" }

func unschedulable(p *v1.Pod) bool {
	c := podCondition(p, v1.PodScheduled)
	return c != nil && c.Status == v1.ConditionFalse && c.Reason == v1.PodReasonUnschedulable
}

// podEvents lists the events.k8s.io/v1 events about a pod.
func podEvents(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, pod string) []eventsv1.Event {
	t.Helper()
	list, err := client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing events: %v", err)
	}
	var out []eventsv1.Event
	for _, e := range list.Items {
		if e.Regarding.Kind == "Pod" && e.Regarding.Name == pod {
			out = append(out, e)
		}
	}
	return out
}

// waitForEvent polls until the pod has an event with the reason.
func waitForEvent(ctx context.Context, t *testing.T, client kubernetes.Interface, ns, pod, reason string) eventsv1.Event {
	t.Helper()
	var found *eventsv1.Event
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		for _, e := range podEvents(ctx, t, client, ns, pod) {
			if e.Reason == reason {
				found = &e
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s event for pod %s/%s: %v (have %v)", reason, ns, pod, err, podEvents(ctx, t, client, ns, pod))
	}
	return *found
}

// fitErrorMessage is kube's FitError text for a pod that fits none of its
// group's nodes for one reason while the cluster's other nodes fail its node
// selector: "0/N nodes are available: " + the sorted "<count> <reason>"
// entries + ".".
func fitErrorMessage(ctx context.Context, t *testing.T, client kubernetes.Interface, group string, reason string) string {
	t.Helper()
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mine := 0
	for _, n := range nodes.Items {
		if n.Labels[groupLabel] == group {
			mine++
		}
	}
	entries := []string{fmt.Sprintf("%d %s", mine, reason)}
	if other := len(nodes.Items) - mine; other > 0 {
		entries = append(entries, fmt.Sprintf("%d node(s) didn't match Pod's node affinity/selector", other))
	}
	sort.Strings(entries)
	return fmt.Sprintf("0/%d nodes are available: %s.", len(nodes.Items), strings.Join(entries, ", "))
}
