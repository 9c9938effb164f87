package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/test/e2e/cluster"
)

// ensureTmux finds tmux, installing it from Debian when it is missing and
// apt-get is there (CI is a fresh Debian machine, as root); otherwise the
// test is skipped, saying why.
func ensureTmux(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("tmux"); err == nil {
		return p
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil || os.Geteuid() != 0 {
		t.Skipf("tmux is not installed and cannot be installed here (apt-get: %v, uid %d): apt-get install tmux to run this test", err, os.Geteuid())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "tmux"}} {
		cmd := exec.CommandContext(ctx, apt, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("tmux is not installed and apt-get %s failed: %v\n%s", args[0], err, lastLines(string(out), 10))
		}
	}
	p, err := exec.LookPath("tmux")
	if err != nil {
		t.Skipf("apt-get installed tmux but it is not on PATH: %v", err)
	}
	t.Logf("installed %s with apt-get", p)
	return p
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// buildBinary builds cmd/kubectl-sched into the test's temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "kubectl-sched")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/kubectl-sched")
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// tmuxPane is one detached tmux session on a private socket.
type tmuxPane struct {
	t          *testing.T
	tmux, sock string
}

func (p *tmuxPane) cmd(args ...string) (string, error) {
	c := exec.Command(p.tmux, append([]string{"-S", p.sock}, args...)...)
	c.Env = append(os.Environ(), "TERM=xterm-256color")
	out, err := c.CombinedOutput()
	return string(out), err
}

func (p *tmuxPane) capture() string {
	out, err := p.cmd("capture-pane", "-p", "-t", "top")
	if err != nil {
		p.t.Fatalf("tmux capture-pane: %v: %s", err, out)
	}
	return out
}

func (p *tmuxPane) keys(keys ...string) {
	if out, err := p.cmd(append([]string{"send-keys", "-t", "top"}, keys...)...); err != nil {
		p.t.Fatalf("tmux send-keys: %v: %s", err, out)
	}
}

// waitScreen polls the pane until ok(screen) holds, or fails showing the
// last screen.
func (p *tmuxPane) waitScreen(what string, timeout time.Duration, ok func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	var s string
	for time.Now().Before(deadline) {
		if s = p.capture(); ok(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.t.Fatalf("%s: not on screen within %s; the screen:\n%s", what, timeout, s)
	return s
}

var (
	reUnschedulableQueue = regexp.MustCompile(`(?m)^unschedulable +(\d+)`)
	reActiveQueue        = regexp.MustCompile(`(?m)^active +(\d+)`)
	reBackoffQueue       = regexp.MustCompile(`(?m)^backoff +(\d+)`)
	reScheduledRate      = regexp.MustCompile(`attempts/s +scheduled ([0-9.]+)`)
	reScheduledLatency   = regexp.MustCompile(`(?m)^attempt scheduled .* (\d+)$`)
)

func match(re *regexp.Regexp, s string) float64 {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestTopInTmuxShowsTheQueueDraining drives the real binary: `kubectl
// sched run` schedules on the test cluster while `kubectl sched top` runs
// in an 80x24 tmux pane. Pods that fit no node pile up in the waiting
// queues (on screen, with the failed attempts and the pods listed);
// nodes arrive, and the screen shows the queue draining to zero with
// non-zero scheduled attempts; q quits.
func TestTopInTmuxShowsTheQueueDraining(t *testing.T) {
	c := requireCluster(t)
	tmux := ensureTmux(t)
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const group, profile, n = "top-tmux", "kubectl-sched-top-tmux", 30
	dir := t.TempDir()

	// kubectl sched run, as a child process.
	cfg := filepath.Join(dir, "sched.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection: {leaderElect: false}
clientConnection: {kubeconfig: %q, qps: 200, burst: 400}
profiles:
- schedulerName: %s
`, c.Kubeconfig, profile)), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	logf, err := os.Create(filepath.Join(dir, "run.log"))
	if err != nil {
		t.Fatal(err)
	}
	run := exec.Command(bin, "run", "--config", cfg, "--metrics-bind-address", addr, "-v", "2")
	run.Stdout, run.Stderr = logf, logf
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = run.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = run.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
		}
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("kubectl sched run's log:\n%s", lastLines(string(b), 40))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("kubectl sched run not ready in 60s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// kubectl sched top, in a tmux pane of 80x24.
	pane := &tmuxPane{t: t, tmux: tmux, sock: filepath.Join(dir, "tmux.sock")}
	topCmd := fmt.Sprintf("%s top --metrics-url http://%s/metrics --interval 500ms --kubeconfig %s --scheduler-name %s; echo EXITED $?; sleep 120",
		bin, addr, c.Kubeconfig, profile)
	if out, err := pane.cmd("new-session", "-d", "-s", "top", "-x", "80", "-y", "24", topCmd); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() { _, _ = pane.cmd("kill-server") })
	pane.waitScreen("the first scrape", 30*time.Second, func(s string) bool {
		return strings.Contains(s, "QUEUE") && strings.Contains(s, "●")
	})

	// Pods for the group, which has no nodes yet: all unschedulable.
	ns := createNamespace(ctx, t, c.Client, group)
	var pods []*v1.Pod
	for i := 0; i < n; i++ {
		pods = append(pods, ourPod(fmt.Sprintf("tmux-p-%02d", i), "100m", profile, group))
	}
	createPods(ctx, t, c.Client, ns, pods...)
	// Failed pods wait in backoff, then in the unschedulable pool; events
	// of the shared cluster move them between the two.
	s := pane.waitScreen(fmt.Sprintf("%d pods waiting in the backoff and unschedulable queues", n), 60*time.Second, func(s string) bool {
		return match(reUnschedulableQueue, s)+match(reBackoffQueue, s) == n && match(reActiveQueue, s) == 0
	})
	t.Logf("queue filled:\n%s", s)
	pane.keys("Tab")
	// scheduler_unschedulable_pods counts only the unschedulable pool's
	// pods, so the bar may be empty while they sit in backoff; the failed
	// attempts that requeued them are always there.
	pane.waitScreen("why pods wait", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "UNSCHEDULABLE PODS BY PLUGIN") && strings.Contains(s, "ScheduleAttemptFailure")
	})
	pane.keys("Tab")
	pane.waitScreen("the pending pods with their FailedScheduling message", 10*time.Second, func(s string) bool {
		// "no nodes available to schedule pods" when the shared cluster
		// has no node at all, else the FitError.
		return strings.Contains(s, ns+"/tmux-p-") && (strings.Contains(s, "no nodes available") || strings.Contains(s, "didn't match Pod's node affinity"))
	})
	pane.keys("Tab")

	// Nodes arrive: the queue drains.
	groupNodes(ctx, t, c.Client, group,
		cluster.NodeSpec{Name: group + "-a", Zone: "zone-a", CPU: "4", Memory: "16Gi"},
		cluster.NodeSpec{Name: group + "-b", Zone: "zone-b", CPU: "4", Memory: "16Gi"},
	)
	sawRate := false
	s = pane.waitScreen("the queue drained and every pod scheduled", 90*time.Second, func(s string) bool {
		if match(reScheduledRate, s) > 0 {
			sawRate = true
		}
		return match(reUnschedulableQueue, s) == 0 && match(reBackoffQueue, s) == 0 && match(reActiveQueue, s) == 0 && match(reScheduledLatency, s) == n
	})
	t.Logf("queue drained:\n%s", s)
	if !sawRate {
		t.Errorf("no screen showed a non-zero scheduled attempts/s while the queue drained")
	}
	for _, p := range pods {
		waitForPod(ctx, t, c.Client, ns, p.Name, bound)
	}

	pane.keys("q")
	pane.waitScreen("top to exit 0 on q", 10*time.Second, func(s string) bool { return strings.Contains(s, "EXITED 0") })
}
