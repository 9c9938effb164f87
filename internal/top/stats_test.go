package top

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

var t0 = time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)

func mustParse(t *testing.T, at time.Duration, text string) *Sample {
	t.Helper()
	s, err := ParseText([]byte(strings.TrimLeft(text, "\n")), t0.Add(at))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func window(t *testing.T, texts ...string) *Window {
	t.Helper()
	w := &Window{Span: time.Hour}
	for i, text := range texts {
		w.Add(mustParse(t, time.Duration(i)*2*time.Second, text))
	}
	return w
}

const queueText = `
# TYPE scheduler_pending_pods gauge
scheduler_pending_pods{queue="active"} %A
scheduler_pending_pods{queue="backoff"} 0
scheduler_pending_pods{queue="unschedulable"} %U
scheduler_pending_pods{queue="gated"} 0
# TYPE scheduler_schedule_attempts_total counter
scheduler_schedule_attempts_total{profile="p",result="scheduled"} %S
scheduler_schedule_attempts_total{profile="p",result="unschedulable"} %F
# TYPE scheduler_queue_incoming_pods_total counter
scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"} %I
`

func queue(active, unsched, scheduled, failed, incoming string) string {
	return strings.NewReplacer("%A", active, "%U", unsched, "%S", scheduled, "%F", failed, "%I", incoming).Replace(queueText)
}

func attempt(st *Stats, r string) Attempt {
	for _, a := range st.Attempts {
		if a.Result == r {
			return a
		}
	}
	return Attempt{}
}

func TestComputeRatesAreOverTheLastIntervalAndTrendsOverTheWindow(t *testing.T) {
	st := Compute(window(t,
		queue("10", "0", "0", "0", "10"),
		queue("6", "0", "3", "1", "10"),
		queue("2", "2", "10", "2", "14"),
	))
	if st.IntervalSeconds != 2 || st.WindowSeconds != 4 || st.Samples != 3 {
		t.Fatalf("interval %v window %v samples %d", st.IntervalSeconds, st.WindowSeconds, st.Samples)
	}
	want := Flow{InPerSecond: 2, OutPerSecond: 4, BoundPerSecond: 3.5, Pending: 4, PendingChangePerSecond: -1.5,
		OutHistory: []float64{2, 4}, InHistory: []float64{0, 2}}
	if diff := cmp.Diff(want, st.Flow); diff != "" {
		t.Errorf("flow (-want +got):\n%s", diff)
	}
	if a := attempt(st, "scheduled"); a.PerSecond != 3.5 || a.Total != 10 || !cmp.Equal(a.History, []float64{1.5, 3.5}) {
		t.Errorf("scheduled attempts %+v", a)
	}
	if a := attempt(st, "error"); a.PerSecond != 0 || a.Total != 0 {
		t.Errorf("error attempts %+v, want listed at zero", a)
	}
	if got := st.Queues[0]; got.Name != "active" || got.Pending != 2 || !cmp.Equal(got.History, []float64{10, 6, 2}) {
		t.Errorf("active queue %+v", got)
	}
	if diff := cmp.Diff([]Incoming{{Queue: "active", Event: "PodAdd", PerSecond: 2, InWindow: 4}}, st.Incoming); diff != "" {
		t.Errorf("incoming (-want +got):\n%s", diff)
	}
}

func TestComputeCountsACounterThatWentDownFromZero(t *testing.T) {
	st := Compute(window(t,
		queue("0", "0", "100", "0", "100"),
		queue("0", "0", "4", "0", "6"), // the scheduler restarted
	))
	if st.Flow.BoundPerSecond != 2 || st.Flow.InPerSecond != 3 {
		t.Errorf("after a reset: %v bound/s, %v in/s; want 2 and 3 (the new values over 2s)", st.Flow.BoundPerSecond, st.Flow.InPerSecond)
	}
}

func TestComputeTreatsANewProcessStartTimeAsAReset(t *testing.T) {
	st := Compute(window(t,
		"process_start_time_seconds 100\n"+queue("0", "0", "4", "0", "0"),
		"process_start_time_seconds 200\n"+queue("0", "0", "10", "0", "0"),
	))
	if st.Flow.BoundPerSecond != 5 {
		t.Errorf("%v bound/s, want 5: all 10 attempts are the new process'", st.Flow.BoundPerSecond)
	}
}

func TestComputeCountsASeriesThatAppearedFromZero(t *testing.T) {
	st := Compute(window(t,
		queue("0", "0", "4", "0", "0"),
		queue("0", "0", "4", "0", "0")+`scheduler_schedule_attempts_total{profile="p",result="error"} 2`+"\n",
	))
	if a := attempt(st, "error"); a.PerSecond != 1 {
		t.Errorf("error attempts %+v, want 1/s", a)
	}
}

const histText = `
# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.01"} %a
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.1"} %b
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="1"} %c
scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="+Inf"} %c
scheduler_pod_scheduling_sli_duration_seconds_sum{attempts="1"} 1
scheduler_pod_scheduling_sli_duration_seconds_count{attempts="1"} %c
`

func sliHist(a, b, c string) string {
	return strings.NewReplacer("%a", a, "%b", b, "%c", c).Replace(histText)
}

func TestComputeQuantilesAreOverTheBucketIncreasesNotTheLifetime(t *testing.T) {
	// 1000 slow observations before the window; 100 fast ones in it.
	st := Compute(window(t, sliHist("0", "0", "1000"), sliHist("50", "100", "1100")))
	l := st.Latency[0]
	if l.Name != "pod scheduling (sli)" || l.Count != 100 {
		t.Fatalf("latency %+v", l)
	}
	// 50 in (0, 0.01], 50 in (0.01, 0.1]: p50 = 0.01, p90 = 0.01+0.09*0.8.
	for _, q := range []struct {
		got  *float64
		want float64
	}{{l.P50, 0.01}, {l.P90, 0.01 + 0.09*0.8}, {l.P99, 0.01 + 0.09*0.98}} {
		if q.got == nil || math.Abs(*q.got-q.want) > 1e-12 {
			t.Errorf("quantile %v, want %v", q.got, q.want)
		}
	}
}

func TestComputeHasNoQuantilesWithoutObservationsInTheWindow(t *testing.T) {
	st := Compute(window(t, sliHist("0", "0", "10"), sliHist("0", "0", "10")))
	if l := st.Latency[0]; l.Count != 0 || l.P50 != nil || l.P99 != nil {
		t.Errorf("latency %+v, want no quantiles", l)
	}
}

func TestComputeSurvivesMissingAndOddMetrics(t *testing.T) {
	for name, texts := range map[string][]string{
		"no scheduler metrics at all": {"go_goroutines 12\n", "go_goroutines 13\n"},
		"a histogram without buckets": {"# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram\nscheduler_pod_scheduling_sli_duration_seconds_count 3\nscheduler_pod_scheduling_sli_duration_seconds_sum 1\n",
			"# TYPE scheduler_pod_scheduling_sli_duration_seconds histogram\nscheduler_pod_scheduling_sli_duration_seconds_count 1\nscheduler_pod_scheduling_sli_duration_seconds_sum 1\n"},
		"untyped and NaN values":            {"scheduler_pending_pods{queue=\"active\"} NaN\n", "scheduler_pending_pods{queue=\"active\"} +Inf\nscheduler_schedule_attempts_total{result=\"scheduled\"} 3\n"},
		"a histogram whose buckets changed": {sliHist("1", "2", "3"), strings.ReplaceAll(sliHist("1", "2", "3"), `le="0.1"`, `le="0.2"`)},
		"one sample":                        {queue("1", "2", "3", "4", "5")},
	} {
		t.Run(name, func(t *testing.T) {
			st := Compute(window(t, texts...))
			if name == "no scheduler metrics at all" && st.Scheduler {
				t.Error("Scheduler is true without scheduler_* metrics")
			}
			if len(st.Queues) != len(Queues) {
				t.Errorf("queues %+v, want the four kube queues even when absent", st.Queues)
			}
		})
	}
	if st := Compute(&Window{}); st.Samples != 0 || st.Queues == nil {
		t.Errorf("empty window: %+v", st)
	}
}

func TestParseTextSkipsMalformedLines(t *testing.T) {
	text := "# TYPE scheduler_pending_pods gauge\nscheduler_pending_pods{queue=\"active\"} 3\nscheduler_pending_pods{queue=\"backoff\" 1\nthis is not a metric line\nscheduler_pending_pods{queue=\"gated\"} 2\n"
	s, err := ParseText([]byte(text), t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) != 2 || !strings.HasPrefix(s.Warnings[0], "line 3 skipped") || !strings.HasPrefix(s.Warnings[1], "line 4 skipped") {
		t.Errorf("warnings %q, want lines 3 and 4 skipped", s.Warnings)
	}
	got := gaugeSum(s, MetricPendingPods, []string{"queue"})
	if diff := cmp.Diff(map[string]float64{"active": 3, "gated": 2}, got); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if _, err := ParseText([]byte("# just a comment\n"), t0); err == nil {
		t.Error("a text without metrics parsed without error")
	}
	if _, err := ParseText([]byte(strings.Repeat("bad line\n", maxSkipped+5)), t0); err == nil {
		t.Error("a text of garbage parsed without error")
	}
}

func TestWindowKeepsTheSpanAndOneSampleBeforeIt(t *testing.T) {
	w := &Window{Span: 5 * time.Second}
	for i := 0; i < 10; i++ {
		w.Add(&Sample{Time: t0.Add(time.Duration(i) * 2 * time.Second)})
	}
	var got []time.Duration
	for _, s := range w.Samples() {
		got = append(got, s.Time.Sub(t0))
	}
	if diff := cmp.Diff([]time.Duration{12 * time.Second, 14 * time.Second, 16 * time.Second, 18 * time.Second}, got); diff != "" {
		t.Errorf("window (-want +got):\n%s", diff)
	}
	w.Add(&Sample{Time: t0})
	if len(w.Samples()) != 1 {
		t.Errorf("a sample from the past kept %d samples, want the window restarted", len(w.Samples()))
	}
}

// TestSourcesOnRecordedMetrics scrapes the recorded texts over HTTP and
// through a fake API server's pod proxy.
func TestSourcesOnRecordedMetrics(t *testing.T) {
	body, err := os.ReadFile("../tui/testdata/kube-scheduler-1.txt")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		if !strings.HasPrefix(r.Header.Get("Accept"), "text/plain") {
			t.Errorf("Accept %q, want the text format first", r.Header.Get("Accept"))
		}
		if r.URL.Path == "/broken" {
			http.Error(w, "forbidden: User \"system:anonymous\" cannot get path \"/metrics\"", http.StatusForbidden)
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	ctx := context.Background()

	s, err := (&HTTPSource{URL: srv.URL + "/metrics"}).Scrape(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := counterTotal(s, MetricScheduleAttempts, []string{"result"})["scheduled"]; got != 6 {
		t.Errorf("scheduled attempts %v, want 6", got)
	}
	if _, err := (&HTTPSource{URL: srv.URL + "/broken"}).Scrape(ctx); err == nil || !strings.Contains(err.Error(), "403 Forbidden: forbidden: User") {
		t.Errorf("error %v, want the status and the body's first line", err)
	}

	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ps := &ProxySource{Client: cs.CoreV1().RESTClient(), Namespace: "kube-system", Pod: "https:kube-scheduler-node1:10259"}
	if _, err := ps.Scrape(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := paths[len(paths)-1], "/api/v1/namespaces/kube-system/pods/https:kube-scheduler-node1:10259/proxy/metrics"; got != want {
		t.Errorf("proxy path %s, want %s", got, want)
	}
	if ps.String() != "pod kube-system/https:kube-scheduler-node1:10259" {
		t.Errorf("String() = %q", ps.String())
	}
}
