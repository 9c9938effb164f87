package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kubectl-sched/kubectl-sched/internal/live"
	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// TestRunBindsPodsWithEventsAndConditions: pods that fit are bound with a
// Scheduled event; a pod that fits nowhere gets kube's PodScheduled
// condition with the full FitError message and a FailedScheduling event;
// /metrics counts both consistently with kube-scheduler's metric names,
// types and labels.
func TestRunBindsPodsWithEventsAndConditions(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group, profile = "run-basic", "kubectl-sched-basic"
	groupNodes(ctx, t, c.Client, group,
		cluster.NodeSpec{Name: "run-basic-a", Zone: "zone-a", CPU: "2", Memory: "8Gi"},
		cluster.NodeSpec{Name: "run-basic-b", Zone: "zone-b", CPU: "2", Memory: "8Gi"},
		cluster.NodeSpec{Name: "run-basic-c", Zone: "zone-c", CPU: "2", Memory: "8Gi"},
	)
	ns := createNamespace(ctx, t, c.Client, "run-basic")
	fits := []*v1.Pod{ourPod("fits-0", "1", profile, group), ourPod("fits-1", "1", profile, group), ourPod("fits-2", "1", profile, group)}
	tooBig := ourPod("too-big", "3", profile, group)
	other := makePod("other-scheduler", "1", map[string]string{groupLabel: group})
	other.Spec.SchedulerName = "someone-else"
	createPods(ctx, t, c.Client, ns, append(fits, tooBig, other)...)
	wantMsg := fitErrorMessage(ctx, t, c.Client, group, "Insufficient cpu")
	// 3 cpu is more than any node's allocatable and the other nodes fail
	// the node selector: every node is UnschedulableAndUnresolvable, so
	// preemption cannot help.
	if nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		n := len(nodes.Items)
		wantMsg += fmt.Sprintf(" preemption: 0/%d nodes are available: %d Preemption is not helpful for scheduling.", n, n)
	}

	s := startRun(t, c, runOptions{profile: profile})

	for _, p := range fits {
		got := waitForPod(ctx, t, c.Client, ns, p.Name, bound)
		if !strings.HasPrefix(got.Spec.NodeName, "run-basic-") {
			t.Errorf("pod %s bound to %s, not a node of its group", p.Name, got.Spec.NodeName)
		}
		e := waitForEvent(ctx, t, c.Client, ns, p.Name, "Scheduled")
		want := fmt.Sprintf("Successfully assigned %s/%s to %s", ns, p.Name, got.Spec.NodeName)
		if e.Note != want || e.Type != v1.EventTypeNormal || e.Action != "Binding" || e.ReportingController != profile {
			t.Errorf("Scheduled event: note %q type %s action %s controller %q; want %q Normal Binding %q", e.Note, e.Type, e.Action, e.ReportingController, want, profile)
		}
	}

	got := waitForPod(ctx, t, c.Client, ns, tooBig.Name, unschedulable)
	cond := podCondition(got, v1.PodScheduled)
	if cond.Message != wantMsg || cond.ObservedGeneration != got.Generation {
		t.Errorf("PodScheduled condition: message %q observedGeneration %d; want %q %d", cond.Message, cond.ObservedGeneration, wantMsg, got.Generation)
	}
	if got.Spec.NodeName != "" {
		t.Errorf("pod %s bound to %s; it fits no node", tooBig.Name, got.Spec.NodeName)
	}
	e := waitForEvent(ctx, t, c.Client, ns, tooBig.Name, "FailedScheduling")
	if e.Note != wantMsg || e.Type != v1.EventTypeWarning || e.Action != "Scheduling" {
		t.Errorf("FailedScheduling event: note %q type %s action %s; want %q Warning Scheduling", e.Note, e.Type, e.Action, wantMsg)
	}
	t.Logf("too-big: %s", cond.Message)

	// A pod of another scheduler is left alone.
	if p, err := c.Client.CoreV1().Pods(ns).Get(ctx, other.Name, metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" || len(p.Status.Conditions) != 0 {
		t.Errorf("pod of another scheduler touched: %v %s", err, describe(p))
	}

	checkMetrics(t, s.scrape(t), profile, len(fits))
	if code, body := s.get("/healthz"); code != 200 || body != "ok" {
		t.Errorf("/healthz = %d %q", code, body)
	}
	if code, body := s.get("/livez"); code != 200 || body != "ok" {
		t.Errorf("/livez = %d %q", code, body)
	}
	if err := s.stop(t); err != nil {
		t.Errorf("run returned %v after its context ended", err)
	}
}

// checkMetrics checks the families the issue lists: present with
// kube-scheduler's type and label names, and counts that match what the
// test did (scheduled pods bound, one pod unschedulable).
func checkMetrics(t *testing.T, mfs map[string]*dto.MetricFamily, profile string, scheduled int) {
	t.Helper()
	h, c, g := dto.MetricType_HISTOGRAM, dto.MetricType_COUNTER, dto.MetricType_GAUGE
	families := map[string]struct {
		typ    dto.MetricType
		labels string
	}{
		"scheduler_schedule_attempts_total":                    {c, "profile,result"},
		"scheduler_scheduling_attempt_duration_seconds":        {h, "profile,result"},
		"scheduler_scheduling_algorithm_duration_seconds":      {h, ""},
		"scheduler_pod_scheduling_sli_duration_seconds":        {h, "attempts"},
		"scheduler_queue_incoming_pods_total":                  {c, "event,queue"},
		"scheduler_pending_pods":                               {g, "queue"},
		"scheduler_framework_extension_point_duration_seconds": {h, "extension_point,profile,status"},
		"scheduler_unschedulable_pods":                         {g, "plugin,profile"},
		"scheduler_preemption_attempts_total":                  {c, ""},
		"scheduler_preemption_victims":                         {h, ""},
		"scheduler_pod_scheduling_attempts":                    {h, ""},
		"scheduler_event_handling_duration_seconds":            {h, "event"},
		"scheduler_inflight_events":                            {g, "event"},
	}
	for name, want := range families {
		mf := mfs[name]
		if mf == nil {
			t.Errorf("metric %s missing", name)
			continue
		}
		if mf.GetType() != want.typ {
			t.Errorf("%s: type %v, want %v", name, mf.GetType(), want.typ)
		}
		for _, m := range mf.GetMetric() {
			var names []string
			for _, l := range m.GetLabel() {
				names = append(names, l.GetName())
			}
			if got := strings.Join(names, ","); got != want.labels {
				t.Errorf("%s: labels %q, want %q", name, got, want.labels)
			}
		}
	}
	// plugin_execution_duration_seconds is sampled in 10% of cycles: it is
	// present once a sampled cycle ran, and then has kube's labels.
	if mf := mfs["scheduler_plugin_execution_duration_seconds"]; mf != nil && mf.GetType() != h {
		t.Errorf("plugin_execution_duration_seconds: type %v", mf.GetType())
	}

	p := map[string]string{"profile": profile}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range p {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	checks := []struct {
		what string
		got  float64
		want float64
	}{
		{"scheduled attempts", value(mfs, "scheduler_schedule_attempts_total", with("result", "scheduled")), float64(scheduled)},
		{"scheduled attempt durations", value(mfs, "scheduler_scheduling_attempt_duration_seconds", with("result", "scheduled")), float64(scheduled)},
		{"error attempts", value(mfs, "scheduler_schedule_attempts_total", with("result", "error")), 0},
		{"pods in the unschedulable pool", value(mfs, "scheduler_pending_pods", map[string]string{"queue": "unschedulable"}), 1},
		{"pods in activeQ", value(mfs, "scheduler_pending_pods", map[string]string{"queue": "active"}), 0},
		{"unschedulable pods rejected by NodeResourcesFit", value(mfs, "scheduler_unschedulable_pods", with("plugin", "NodeResourcesFit")), 1},
		{"pods scheduled (attempts histogram)", value(mfs, "scheduler_pod_scheduling_attempts", nil), float64(scheduled)},
		{"pods scheduled at the first attempt (SLI)", value(mfs, "scheduler_pod_scheduling_sli_duration_seconds", map[string]string{"attempts": "1"}), float64(scheduled)},
		{"pods that entered activeQ as new", value(mfs, "scheduler_queue_incoming_pods_total", map[string]string{"queue": "active", "event": "UnscheduledPodAdd"}), float64(scheduled + 1)},
		{"Bind runs", value(mfs, "scheduler_framework_extension_point_duration_seconds", with("extension_point", "Bind", "status", "Success")), float64(scheduled)},
		{"preemption attempts (too-big's one attempt)", value(mfs, "scheduler_preemption_attempts_total", nil), 1},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s: %v, want %v", ch.what, ch.got, ch.want)
		}
	}
	if got := value(mfs, "scheduler_schedule_attempts_total", with("result", "unschedulable")); got < 1 {
		t.Errorf("unschedulable attempts: %v, want at least 1", got)
	}
	if got := value(mfs, "scheduler_framework_extension_point_duration_seconds", with("extension_point", "Filter", "status", "Success")); got < float64(scheduled) {
		t.Errorf("successful Filter runs: %v, want at least %d", got, scheduled)
	}
}

// TestRunRespectsPriorities: with room for one pod (900m allocatable, 600m
// each), the higher-priority pod
// of two queued together gets it, whatever the creation order.
func TestRunRespectsPriorities(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group, profile = "run-prio", "kubectl-sched-prio"
	for name, v := range map[string]int32{"e2e-run-high": 1000, "e2e-run-low": 10} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v}
		if _, err := c.Client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = c.Client.SchedulingV1().PriorityClasses().Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
	groupNodes(ctx, t, c.Client, group, cluster.NodeSpec{Name: "run-prio-a", Zone: "zone-a", CPU: "1", Memory: "8Gi"})
	ns := createNamespace(ctx, t, c.Client, "run-prio")
	var lows []*v1.Pod
	for i := 0; i < 3; i++ {
		p := ourPod(fmt.Sprintf("low-%d", i), "600m", profile, group)
		p.Spec.PriorityClassName = "e2e-run-low"
		lows = append(lows, p)
	}
	high := ourPod("high", "600m", profile, group)
	high.Spec.PriorityClassName = "e2e-run-high"
	// The low-priority pods are older: only priority can put high first.
	createPods(ctx, t, c.Client, ns, lows...)
	createPods(ctx, t, c.Client, ns, high)

	startRun(t, c, runOptions{profile: profile})

	got := waitForPod(ctx, t, c.Client, ns, high.Name, bound)
	if got.Spec.NodeName != "run-prio-a" {
		t.Errorf("high bound to %s", got.Spec.NodeName)
	}
	for _, p := range lows {
		got := waitForPod(ctx, t, c.Client, ns, p.Name, unschedulable)
		if got.Spec.NodeName != "" {
			t.Errorf("low-priority pod %s bound to %s", p.Name, got.Spec.NodeName)
		}
	}
}

// TestRunSchedulesAnUnschedulablePodWhenAFittingNodeIsAdded: the NodeAdd
// event requeues the pod (queueing hints), long before the 5-minute flush.
func TestRunSchedulesAnUnschedulablePodWhenAFittingNodeIsAdded(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group, profile = "run-requeue", "kubectl-sched-requeue"
	groupNodes(ctx, t, c.Client, group, cluster.NodeSpec{Name: "run-requeue-small", Zone: "zone-a", CPU: "1", Memory: "8Gi"})
	ns := createNamespace(ctx, t, c.Client, "run-requeue")
	s := startRun(t, c, runOptions{profile: profile})
	createPods(ctx, t, c.Client, ns, ourPod("big", "4", profile, group))
	waitForPod(ctx, t, c.Client, ns, "big", unschedulable)
	before := s.scrape(t)
	if got := value(before, "scheduler_pending_pods", map[string]string{"queue": "unschedulable"}); got != 1 {
		t.Errorf("pending_pods{unschedulable} = %v before the node, want 1", got)
	}

	added := time.Now()
	groupNodes(ctx, t, c.Client, group, cluster.NodeSpec{Name: "run-requeue-big", Zone: "zone-b", CPU: "8", Memory: "8Gi"})
	got := waitForPod(ctx, t, c.Client, ns, "big", bound)
	took := time.Since(added)
	if got.Spec.NodeName != "run-requeue-big" {
		t.Errorf("big bound to %s", got.Spec.NodeName)
	}
	// Requeued by the event into activeQ or backoffQ (its 1s backoff may
	// not be over), then popped: within a backoff or two, not 5 minutes.
	if took > 30*time.Second {
		t.Errorf("bound %v after the node was added; the event should have requeued it", took)
	}
	// The harness creates a node, then writes its status: the pod is moved
	// by NodeAdd or, if the hint skipped the status-less node, by the update
	// that brought its allocatable.
	after := s.scrape(t)
	moved := map[string]float64{}
	for _, m := range after["scheduler_queue_incoming_pods_total"].GetMetric() {
		l := labelMap(m)
		if strings.HasPrefix(l["event"], "Node") && (l["queue"] == "active" || l["queue"] == "backoff") {
			moved[l["event"]] += m.GetCounter().GetValue()
		}
	}
	var total float64
	for _, n := range moved {
		total += n
	}
	if total != 1 {
		t.Errorf("pods moved by node events: %v, want 1 in all", moved)
	}
	t.Logf("moved by %v", moved)
	if got := value(after, "scheduler_pending_pods", map[string]string{"queue": "unschedulable"}); got != 0 {
		t.Errorf("pending_pods{unschedulable} = %v after binding, want 0", got)
	}
	t.Logf("bound %v after the node was added", took.Round(time.Millisecond))
}

// TestRunLeaderElection: of two instances on one Lease only the leader
// schedules; when its context ends it finishes, releases the lease, and the
// standby takes over and schedules what comes next.
func TestRunLeaderElection(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const group, profile = "run-ha", "kubectl-sched-ha"
	groupNodes(ctx, t, c.Client, group, cluster.NodeSpec{Name: "run-ha-a", Zone: "zone-a", CPU: "16", Memory: "64Gi"})
	ns := createNamespace(ctx, t, c.Client, "run-ha")
	lease := ns + "/" + profile

	a := startRun(t, c, runOptions{profile: profile, lease: lease, identity: "instance-a"})
	waitForHolder(ctx, t, c, ns, profile, "instance-a")
	b := startRun(t, c, runOptions{profile: profile, lease: lease, identity: "instance-b"})

	var first []*v1.Pod
	for i := 0; i < 5; i++ {
		first = append(first, ourPod(fmt.Sprintf("first-%d", i), "100m", profile, group))
	}
	createPods(ctx, t, c.Client, ns, first...)
	for _, p := range first {
		waitForPod(ctx, t, c.Client, ns, p.Name, bound)
	}
	scheduled := func(s *runningScheduler) float64 {
		return value(s.scrape(t), "scheduler_schedule_attempts_total", map[string]string{"profile": profile, "result": "scheduled"})
	}
	attempts := func(s *runningScheduler) float64 {
		mfs := s.scrape(t)
		var n float64
		for _, r := range []string{"scheduled", "unschedulable", "error"} {
			n += value(mfs, "scheduler_schedule_attempts_total", map[string]string{"profile": profile, "result": r})
		}
		return n
	}
	if got := scheduled(a); got != float64(len(first)) {
		t.Errorf("leader scheduled %v pods, want %d", got, len(first))
	}
	if got := attempts(b); got != 0 {
		t.Errorf("standby made %v scheduling attempts, want 0", got)
	}
	if code, _ := b.get("/readyz"); code != 200 {
		t.Errorf("standby /readyz = %d, want 200 (warm caches)", code)
	}

	stopped := time.Now()
	if err := a.stop(t); err != nil {
		t.Errorf("leader's run returned %v on a graceful stop", err)
	}
	waitForHolder(ctx, t, c, ns, profile, "instance-b")
	t.Logf("standby took over %v after the leader's context ended", time.Since(stopped).Round(time.Millisecond))

	var second []*v1.Pod
	for i := 0; i < 5; i++ {
		second = append(second, ourPod(fmt.Sprintf("second-%d", i), "100m", profile, group))
	}
	createPods(ctx, t, c.Client, ns, second...)
	for _, p := range second {
		waitForPod(ctx, t, c.Client, ns, p.Name, bound)
	}
	if got := scheduled(b); got != float64(len(second)) {
		t.Errorf("new leader scheduled %v pods, want %d (the first ones were bound already)", got, len(second))
	}
	// Each pod was bound exactly once: one Scheduled event each.
	for _, p := range append(first, second...) {
		var n int
		for _, e := range podEvents(ctx, t, c.Client, ns, p.Name) {
			if e.Reason == "Scheduled" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("pod %s has %d Scheduled events, want 1", p.Name, n)
		}
	}
	if err := b.stop(t); err != nil {
		t.Errorf("run returned %v", err)
	}
	l, err := c.Client.CoordinationV1().Leases(ns).Get(ctx, profile, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if h := l.Spec.HolderIdentity; h != nil && *h != "" {
		t.Errorf("lease still held by %q after the last instance stopped; it should be released", *h)
	}
}

func waitForHolder(ctx context.Context, t *testing.T, c *cluster.Cluster, ns, name, holder string) {
	t.Helper()
	var last string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := c.Client.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		if l.Spec.HolderIdentity != nil {
			last = *l.Spec.HolderIdentity
		}
		return last == holder, nil
	})
	if err != nil {
		t.Fatalf("lease %s/%s held by %q, want %q: %v", ns, name, last, holder, err)
	}
}

// TestRunStopsWhenItLosesTheLease: a leader whose Lease is taken over
// (here by writing another holder into it) stops scheduling and returns
// ErrLeaderElectionLost, as kube-scheduler exits on "leaderelection lost".
func TestRunStopsWhenItLosesTheLease(t *testing.T) {
	c := requireCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const profile = "kubectl-sched-lost"
	ns := createNamespace(ctx, t, c.Client, "run-lost")
	s := startRun(t, c, runOptions{profile: profile, lease: ns + "/" + profile, identity: "instance-a"})
	waitForHolder(ctx, t, c, ns, profile, "instance-a")

	l, err := c.Client.CoordinationV1().Leases(ns).Get(ctx, profile, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	thief, duration := "thief", int32(600)
	now := metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.AcquireTime, l.Spec.RenewTime = &thief, &duration, &now, &now
	if _, err := c.Client.CoordinationV1().Leases(ns).Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-s.done:
		s.cancel = nil
		if !errors.Is(err, live.ErrLeaderElectionLost) {
			t.Errorf("run returned %v, want ErrLeaderElectionLost", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run still running 30s after its lease was taken")
	}
	waitForHolder(ctx, t, c, ns, profile, "thief")
}
