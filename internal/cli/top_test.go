package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-sched/kubectl-sched/internal/top"
)

func TestTopRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"a UI needs a terminal", []string{"top"}, "standard output is not a terminal: use --once (or -o json)"},
		{"an interval below 100ms", []string{"top", "--once", "--interval", "10ms"}, "--interval: must be at least 100ms"},
		{"a window shorter than the interval", []string{"top", "--once", "--interval", "5s", "--window", "2s"}, "--window (2s) must not be shorter"},
		{"an unknown output", []string{"top", "--once", "-o", "table"}, `--output: unknown format "table" (want json or yaml)`},
		{"a file for -o gets told to redirect", []string{"top", "-o", "stats.json"}, `--output: unknown format "stats.json" (want json or yaml); -o is the output format, as in kubectl; to save the output, redirect it: > stats.json`},
		{"both sources", []string{"top", "--once", "--metrics-url", "http://x/metrics", "--scheduler-pod", "kube-system/s"}, "not both"},
		{"a URL that is not http", []string{"top", "--once", "--metrics-url", "ftp://x/metrics"}, "want an http:// or https:// URL"},
		{"a pod without namespace", []string{"top", "--once", "--scheduler-pod", "kube-scheduler"}, "want NAMESPACE/POD"},
		{"a pod with a bad scheme", []string{"top", "--once", "--scheduler-pod", "ns/ftp:x:1"}, "want NAMESPACE/[http|https:]POD[:PORT]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "", tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
}

func TestSplitSchedulerPodDefaultsToKubeSchedulersSecurePort(t *testing.T) {
	for in, want := range map[string]string{
		"kube-system/kube-scheduler-node1":           "https:kube-scheduler-node1:10259",
		"kube-system/kube-scheduler-node1:10251":     "https:kube-scheduler-node1:10251",
		"kubectl-sched/http:kubectl-sched-abc":       "http:kubectl-sched-abc:10259",
		"kubectl-sched/http:kubectl-sched-abc:10259": "http:kubectl-sched-abc:10259",
	} {
		ns, id, err := splitSchedulerPod(in)
		if err != nil || id != want || ns != strings.Split(in, "/")[0] {
			t.Errorf("%s: %s %s %v, want %s", in, ns, id, err, want)
		}
	}
}

// TestTopOnceJSON scrapes a server replaying the recorded kube-scheduler
// texts, one per scrape, and checks the document.
func TestTopOnceJSON(t *testing.T) {
	var texts [2][]byte
	for i, f := range []string{"../tui/testdata/kube-scheduler-0.txt", "../tui/testdata/kube-scheduler-1.txt"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts[i] = b
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := min(int(n.Add(1))-1, 1)
		_, _ = w.Write(texts[i])
	}))
	defer srv.Close()
	code, out, stderr := run(t, "", "top", "--once", "-o", "json", "--interval", "100ms", "--metrics-url", srv.URL+"/metrics")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var st top.Stats
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if st.Samples != 2 || !st.Scheduler || st.Source != srv.URL+"/metrics" {
		t.Errorf("samples %d scheduler %v source %q", st.Samples, st.Scheduler, st.Source)
	}
	var got []string
	for _, a := range st.Attempts {
		got = append(got, a.Result)
	}
	if diff := cmp.Diff([]string{"scheduled", "unschedulable", "error"}, got); diff != "" {
		t.Errorf("attempt results (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]top.PluginPods{{Plugin: "NodeResourcesFit", Pods: 6}}, st.Unschedulable); diff != "" {
		t.Errorf("unschedulable (-want +got):\n%s", diff)
	}
	if len(st.Latency) == 0 || st.Latency[0].Metric != top.MetricPodSchedulingSLI || st.Latency[0].Count != 2 {
		t.Errorf("latency %+v", st.Latency)
	}
	// -o asks for a printed sample: --once goes without saying.
	code, out, _ = run(t, "", "top", "-o", "yaml", "--interval", "100ms", "--metrics-url", srv.URL+"/metrics")
	if code != 0 || !strings.Contains(out, "windowSeconds:") {
		t.Errorf("-o yaml: exit %d\n%s", code, out)
	}
}

func TestTopOnceFailsWhenTheScrapeFails(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	code, _, stderr := run(t, "", "top", "--once", "--interval", "100ms", "--metrics-url", srv.URL+"/metrics")
	if code != ExitFailure || !strings.Contains(stderr, "404 Not Found") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
