package tui

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/top"
)

var update = flag.Bool("update", false, "rewrite golden files")

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

// fakeSource is never scraped: the tests feed scrapeMsgs themselves.
type fakeSource struct{ name string }

func (f fakeSource) Scrape(context.Context) (*top.Sample, error) {
	return nil, errors.New("not in tests")
}
func (f fakeSource) String() string { return f.name }

func recorded(t *testing.T, name string, at time.Duration) *top.Sample {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	s, err := top.ParseText(b, t0.Add(at))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var pendingPods = []top.PendingPod{
	{Namespace: "shop", Name: "web-7d4f9-abcde", SchedulerName: "kubectl-sched", Age: 3 * time.Minute, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."},
	{Namespace: "batch", Name: "job-1-xyz", SchedulerName: "kubectl-sched", Age: 90 * time.Second, Reason: "Unschedulable",
		Message: "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 node(s) didn't match Pod's node affinity/selector."},
	{Namespace: "batch", Name: "job-2-new", SchedulerName: "kubectl-sched", Age: 2 * time.Second},
}

// newModel is a model at a fixed size fed with two recorded scrapes 2s
// apart and the pending pods.
func newModel(t *testing.T, source, prefix string, w, h int) *Model {
	t.Helper()
	m := New(Options{
		Source: fakeSource{source}, Interval: 2 * time.Second, Window: 2 * time.Minute, Now: func() time.Time { return t0 },
		Pods: func(context.Context, []string) ([]top.PendingPod, error) { return pendingPods, nil },
		Explain: func(_ context.Context, ns, name string, width int) (string, error) {
			return "explain pod " + ns + "/" + name + "\n0/3 nodes are available: 3 Insufficient cpu.\n", nil
		},
	})
	m.Init()
	feed(m, tea.WindowSizeMsg{Width: w, Height: h})
	feed(m, scrapeMsg{sample: recorded(t, prefix+"-0.txt", 0)})
	feed(m, scrapeMsg{sample: recorded(t, prefix+"-1.txt", 2*time.Second)})
	feed(m, podsMsg{pods: pendingPods})
	return m
}

func feed(m *Model, msgs ...tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	for _, msg := range msgs {
		_, cmd = m.Update(msg)
	}
	return cmd
}

func press(s string) tea.KeyPressMsg {
	switch s {
	case "tab":
		return tea.KeyPressMsg{Code: tea.KeyTab}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func screen(m *Model) string {
	lines := strings.Split(ansi.Strip(m.Render()), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

func TestViewGolden(t *testing.T) {
	for _, tc := range []struct {
		name, source, prefix string
		w, h                 int
		keys                 []string
	}{
		{"run-80x24-latency", "http://127.0.0.1:10259/metrics", "run", 80, 24, nil},
		{"run-80x24-waiting", "http://127.0.0.1:10259/metrics", "run", 80, 24, []string{"tab"}},
		{"run-80x24-pods", "http://127.0.0.1:10259/metrics", "run", 80, 24, []string{"tab", "tab"}},
		{"run-120x40-latency", "http://127.0.0.1:10259/metrics", "run", 120, 40, nil},
		{"run-80x24-help", "http://127.0.0.1:10259/metrics", "run", 80, 24, []string{"?"}},
		{"run-80x24-paused", "http://127.0.0.1:10259/metrics", "run", 80, 24, []string{"p"}},
		{"run-80x24-filter", "http://127.0.0.1:10259/metrics", "run", 80, 24, []string{"/", "t", "a", "i", "n", "t", "enter"}},
		{"run-80x24-explain", "http://127.0.0.1:10259/metrics", "run", 80, 24, []string{"tab", "tab", "down", "enter"}},
		{"kube-scheduler-80x24-latency", "pod kube-system/https:kube-scheduler-node1:10259", "kube-scheduler", 80, 24, nil},
		{"kube-scheduler-80x24-waiting", "pod kube-system/https:kube-scheduler-node1:10259", "kube-scheduler", 80, 24, []string{"tab"}},
		{"kube-scheduler-120x40-latency", "pod kube-system/https:kube-scheduler-node1:10259", "kube-scheduler", 120, 40, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModel(t, tc.source, tc.prefix, tc.w, tc.h)
			for _, k := range tc.keys {
				if cmd := feed(m, press(k)); k == "enter" && m.explaining {
					// Run the explain command: the fake answers at once.
					for _, msg := range run(cmd) {
						feed(m, msg)
					}
				}
			}
			got := screen(m)
			if n := strings.Count(got, "\n"); n != tc.h {
				t.Errorf("%d lines, want %d", n, tc.h)
			}
			for i, l := range strings.Split(strings.TrimSuffix(got, "\n"), "\n") {
				if w := ansi.StringWidth(l); w > tc.w {
					t.Errorf("line %d is %d wide, more than %d: %q", i+1, w, tc.w, l)
				}
			}
			golden(t, tc.name, got)
		})
	}
}

// run executes a command and the batches it returns, except ticks.
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, run(c)...)
		}
		return out
	}
	if _, ok := msg.(interface{ isSpinnerTick() }); ok {
		return nil
	}
	switch msg.(type) {
	case explainMsg:
		return []tea.Msg{msg}
	}
	return nil
}

func TestScrapeErrorsShowInTheStatusLineAndBackOff(t *testing.T) {
	m := newModel(t, "http://127.0.0.1:10259/metrics", "run", 80, 24)
	var waits []string
	for i := 0; i < 6; i++ {
		feed(m, scrapeMsg{err: errors.New(`Get "http://127.0.0.1:10259/metrics": dial tcp 127.0.0.1:10259: connect: connection refused`)})
		waits = append(waits, m.retryIn.String())
	}
	if diff := cmp.Diff([]string{"2s", "4s", "8s", "16s", "30s", "30s"}, waits); diff != "" {
		t.Errorf("retry waits (-want +got):\n%s", diff)
	}
	golden(t, "run-80x24-scrape-error", screen(m))
	// The next good scrape clears the error; the data stayed on screen.
	feed(m, scrapeMsg{sample: recorded(t, "run-1.txt", 20*time.Second)})
	if m.lastErr != nil || m.failures != 0 {
		t.Errorf("after a good scrape: error %v, %d failures", m.lastErr, m.failures)
	}
	if backoff(time.Minute, 3) != time.Minute {
		t.Errorf("an interval above the cap is not shortened")
	}
}

func TestTheUISurvivesOddScrapes(t *testing.T) {
	m := newModel(t, "x", "run", 80, 24)
	for i, text := range []string{
		"go_goroutines 3\n",
		"# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} NaN\nscheduler_pending_pods{queue=\"weird\"} 1e300\n",
		"# TYPE scheduler_schedule_attempts_total counter\nscheduler_schedule_attempts_total{result=\"scheduled\"} 1\n", // a reset
		"# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram\nscheduler_pod_scheduling_sli_duration_seconds_count 5\nscheduler_pod_scheduling_sli_duration_seconds_sum 1\n",
	} {
		s, err := top.ParseText([]byte(text), t0.Add(time.Duration(10+i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		feed(m, scrapeMsg{sample: s})
		for _, k := range []string{"tab", "tab", "tab"} {
			feed(m, press(k))
			_ = screen(m)
		}
	}
	feed(m, scrapeMsg{}) // neither sample nor error
	if m.lastErr == nil {
		t.Error("an empty scrape result is not reported")
	}
	for _, size := range [][2]int{{10, 3}, {0, 0}, {40, 12}, {300, 100}} {
		feed(m, tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		_ = screen(m)
	}
}

func TestPauseStopsScrapingAndResumeScrapesAtOnce(t *testing.T) {
	m := newModel(t, "x", "run", 80, 24)
	feed(m, press("p"))
	if cmd := feed(m, tickMsg{seq: m.seq}); cmd != nil {
		t.Error("a tick while paused scrapes")
	}
	old := m.seq
	if cmd := feed(m, press("p")); cmd == nil || m.paused || !m.scraping {
		t.Error("resuming does not scrape at once")
	}
	m.scraping = false
	if cmd := feed(m, tickMsg{seq: old}); cmd != nil {
		t.Error("a tick of the loop before the pause scrapes")
	}
}

func TestQuitKeys(t *testing.T) {
	for _, k := range []tea.KeyPressMsg{press("q"), {Code: 'c', Mod: tea.ModCtrl}} {
		m := newModel(t, "x", "run", 80, 24)
		cmd := feed(m, k)
		if cmd == nil {
			t.Fatalf("%s: no command", k)
		}
		if _, ok := cmd().(tea.QuitMsg); !ok {
			t.Errorf("%s does not quit", k)
		}
	}
	// While filtering, q is text.
	m := newModel(t, "x", "run", 80, 24)
	feed(m, press("/"), press("q"))
	if m.filter.Value() != "q" {
		t.Errorf("filter %q, want q typed into it", m.filter.Value())
	}
}

// The issue: "pending -0.1/s (empty in ~37s)" while five pods no node
// fits stayed. Only the active and backoff queues get a time.
func TestEmptyInCountsOnlyTheQueuesThatDrain(t *testing.T) {
	sample := func(at time.Duration, active, unschedulable int) *top.Sample {
		s, err := top.ParseText([]byte(fmt.Sprintf("# TYPE scheduler_pending_pods gauge\n"+
			"scheduler_pending_pods{queue=\"active\"} %d\nscheduler_pending_pods{queue=\"backoff\"} 0\n"+
			"scheduler_pending_pods{queue=\"unschedulable\"} %d\nscheduler_pending_pods{queue=\"gated\"} 0\n", active, unschedulable)), t0.Add(at))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name                string
		active, unsched     [2]int
		want, wantNotInLine string
	}{
		{"only unschedulable pods left", [2]int{1, 0}, [2]int{5, 5}, "pending -0.1/s", "empty in"},
		{"active pods draining", [2]int{20, 10}, [2]int{5, 5}, "pending -1.0/s (active+backoff empty in ~10s)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Options{Source: fakeSource{"x"}, Interval: 10 * time.Second, Window: 2 * time.Minute, Now: func() time.Time { return t0 }})
			m.Init()
			feed(m, tea.WindowSizeMsg{Width: 100, Height: 24})
			feed(m, scrapeMsg{sample: sample(0, tc.active[0], tc.unsched[0])})
			feed(m, scrapeMsg{sample: sample(10*time.Second, tc.active[1], tc.unsched[1])})
			got := screen(m)
			if !strings.Contains(got, tc.want) {
				t.Errorf("no %q in\n%s", tc.want, got)
			}
			if tc.wantNotInLine != "" && strings.Contains(got, tc.wantNotInLine) {
				t.Errorf("%q in\n%s", tc.wantNotInLine, got)
			}
		})
	}
}

// The issue: at 80 columns the table cut "1 node(s) had untolerated
// taint(s), 3 …" before "Insufficient cpu". The selected pod's message is
// shown whole below the table, and follows the cursor.
func TestTheSelectedPodsMessageIsShownWhole(t *testing.T) {
	m := newModel(t, "x", "run", 80, 24)
	pods := []top.PendingPod{
		{Namespace: "a", Name: "first", Message: "0/5 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) didn't match Pod's node affinity/selector, 3 Insufficient cpu. preemption: not eligible."},
		{Namespace: "a", Name: "second", Message: "0/5 nodes are available: 5 Insufficient memory."},
		{Namespace: "a", Name: "third", Message: "0/900 nodes are available: " + strings.Repeat("1 node(s) had volume node affinity conflict, ", 12) + "3 Insufficient cpu."},
	}
	feed(m, podsMsg{pods: pods}, press("tab"), press("tab"))
	// Whole: kube's "0/N nodes are available:" and the preemption text too,
	// which the table's short form leaves out.
	if got := strings.Join(strings.Fields(screen(m)), " "); !strings.Contains(got, "a/first: 0/5 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) didn't match Pod's node affinity/selector, 3 Insufficient cpu. preemption: not eligible.") {
		t.Errorf("the first pod's whole message is not shown:\n%s", got)
	}
	feed(m, press("down"))
	if got := screen(m); !strings.Contains(got, "a/second: 0/5 nodes are available: 5 Insufficient memory.") {
		t.Errorf("the message does not follow the cursor:\n%s", got)
	}
	feed(m, press("down"))
	got := screen(m)
	if !strings.Contains(got, "… (enter: explain)") {
		t.Errorf("a message longer than the lines does not say where the rest is:\n%s", got)
	}
	for i, l := range strings.Split(got, "\n") {
		if w := ansi.StringWidth(l); w > 80 {
			t.Errorf("line %d is %d wide: %q", i+1, w, l)
		}
	}
}

// TestNothingToScrapeSaysWhatToDo: before any scrape has succeeded, the
// panel says what was tried, the error whole (wrapped, not cut at the
// width) and the hints of how to give top a scheduler.
func TestNothingToScrapeSaysWhatToDo(t *testing.T) {
	m := New(Options{
		Source: fakeSource{"http://127.0.0.1:10259/metrics"}, Interval: 2 * time.Second, Window: 2 * time.Minute, Now: func() time.Time { return t0 },
		NoSourceHint: []string{"top reads a scheduler's Prometheus /metrics, and nothing answered there.", "• Start one: kubectl sched run, or point top at one: --metrics-url URL or --scheduler-pod NAMESPACE/POD"},
	})
	m.Init()
	feed(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	feed(m, scrapeMsg{err: errors.New(`Get "http://127.0.0.1:10259/metrics": dial tcp 127.0.0.1:10259: connect: connection refused`)})
	got := screen(m)
	golden(t, "nothing-80x24-scrape-error", got)
	flat := strings.Join(strings.Fields(got), " ")
	for _, want := range []string{
		`Nothing to scrape at http://127.0.0.1:10259/metrics: Get "http://127.0.0.1:10259/metrics": dial tcp 127.0.0.1:10259: connect: connection refused`,
		"• Start one: kubectl sched run, or point top at one: --metrics-url URL or --scheduler-pod NAMESPACE/POD",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the screen does not say %q:\n%s", want, got)
		}
	}
	// Once a scrape succeeds, the panels are back.
	feed(m, scrapeMsg{sample: recorded(t, "run-0.txt", 0)})
	if strings.Contains(screen(m), "Nothing to scrape") {
		t.Errorf("the hint stays after a good scrape:\n%s", screen(m))
	}
}

// gangPods are pending members of two PodGroups beside the other pods.
var gangPods = append([]top.PendingPod{
	{Namespace: "ml", Name: "train-0", SchedulerName: "kubectl-sched", Age: 4 * time.Minute, Reason: "Unschedulable", PodGroup: "train",
		Message: "pod group is unschedulable, minCount (8) cannot be satisfied: 7 scheduled, 0 remaining"},
	{Namespace: "ml", Name: "train-7", SchedulerName: "kubectl-sched", Age: 4 * time.Minute, Reason: "Unschedulable", PodGroup: "train",
		Message: "0/3 nodes are available: 3 Insufficient cpu."},
	{Namespace: "ml", Name: "probe-0", SchedulerName: "kubectl-sched", Age: time.Minute, PodGroup: "probe"},
}, pendingPods...)

var pendingGroups = []top.PendingGroup{
	{Namespace: "ml", Name: "train", Policy: "gang", MinCount: 8, Pending: 8, Age: 4 * time.Minute, Status: "False", Reason: "Unschedulable",
		Message: "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining"},
	{Namespace: "ml", Name: "probe", Pending: 1, Age: time.Minute, Missing: true},
}

// TestViewGoldenGroups: the pods panel lists the pending PodGroups above
// the pods, each with its pending members, minCount and condition; the
// listing command gathers the groups of the pods it listed.
func TestViewGoldenGroups(t *testing.T) {
	var gathered []top.PendingPod
	m := New(Options{
		Source: fakeSource{"http://127.0.0.1:10259/metrics"}, Interval: 2 * time.Second, Window: 2 * time.Minute, Now: func() time.Time { return t0 },
		Pods: func(context.Context, []string) ([]top.PendingPod, error) { return gangPods, nil },
		Groups: func(_ context.Context, pods []top.PendingPod) ([]top.PendingGroup, error) {
			gathered = pods
			return pendingGroups, nil
		},
	})
	m.Init()
	feed(m, tea.WindowSizeMsg{Width: 80, Height: 24})
	feed(m, scrapeMsg{sample: recorded(t, "run-0.txt", 0)})
	feed(m, scrapeMsg{sample: recorded(t, "run-1.txt", 2*time.Second)})
	m.podsInFlight = false // the scrapes asked already; ask again
	msg := m.podsCmd()()
	if len(gathered) != len(gangPods) {
		t.Errorf("groups gathered from %d pods, want the %d listed", len(gathered), len(gangPods))
	}
	feed(m, msg, press("tab"), press("tab"))
	got := screen(m)
	if n := strings.Count(got, "\n"); n != 24 {
		t.Errorf("%d lines, want 24", n)
	}
	golden(t, "run-80x24-groups", got)
}
