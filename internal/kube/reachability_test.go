package kube

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestConnectionReporter(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var lines []string
	logger := funcr.New(func(prefix, args string) { lines = append(lines, args) }, funcr.Options{})
	r := &ConnectionReporter{Server: "https://api:6443", Logger: logger, Clock: clk}
	refusedErr := errors.New("dial tcp: connect: connection refused")
	var reply func() (*http.Response, error)
	rt := r.Wrap(roundTripperFunc(func(*http.Request) (*http.Response, error) { return reply() }))
	do := func(path string) {
		req, _ := http.NewRequest("GET", "https://api:6443"+path, nil)
		_, _ = rt.RoundTrip(req)
	}
	status := func(code int) func() (*http.Response, error) {
		return func() (*http.Response, error) {
			return &http.Response{StatusCode: code, Status: http.StatusText(code)}, nil
		}
	}

	reply = func() (*http.Response, error) { return nil, refusedErr }
	do("/api/v1/pods")  // the first failure is reported at once
	do("/api/v1/nodes") // then not before the interval
	clk.Step(9 * time.Second)
	do("/api/v1/nodes")
	clk.Step(time.Second) // 10 s after the first report: one line, with the count
	do("/api/v1/pods")
	reply = status(http.StatusOK)
	clk.Step(5 * time.Second)
	do("/api/v1/pods") // reachable again
	do("/api/v1/pods") // and nothing more while it stays so
	reply = status(http.StatusNotFound)
	do("/api/v1/namespaces/x/pods/y") // an answer, not a failure
	reply = status(http.StatusForbidden)
	do("/api/v1/pods") // turned away: a failure

	want := []string{
		`"msg"="Cannot reach the API server; client-go retries with backoff" "error"="GET https://api:6443/api/v1/pods: dial tcp: connect: connection refused" "server"="https://api:6443" "failedRequests"=1 "failingFor"="0s"`,
		`"msg"="Cannot reach the API server; client-go retries with backoff" "error"="GET https://api:6443/api/v1/pods: dial tcp: connect: connection refused" "server"="https://api:6443" "failedRequests"=3 "failingFor"="10s"`,
		`"level"=0 "msg"="The API server is reachable again" "server"="https://api:6443" "after"="15s"`,
		`"msg"="The API server refuses requests; client-go retries with backoff" "error"="GET https://api:6443/api/v1/pods: Forbidden" "server"="https://api:6443" "failedRequests"=1 "failingFor"="0s"`,
	}
	if d := cmp.Diff(want, lines); d != "" {
		t.Errorf("log (-want +got):\n%s", d)
	}
	if err := r.Err(); err == nil || !strings.HasSuffix(err.Error(), "Forbidden") {
		t.Errorf("Err() = %v, want the last failure", err)
	}
}

// TestConnectionReporterIgnoresCancelledRequests: a request its caller
// gave up on (a watch closed at shutdown) says nothing of the server.
func TestConnectionReporterIgnoresCancelledRequests(t *testing.T) {
	var logged bool
	r := &ConnectionReporter{Logger: funcr.New(func(string, string) { logged = true }, funcr.Options{})}
	rt := r.Wrap(roundTripperFunc(func(req *http.Request) (*http.Response, error) { return nil, req.Context().Err() }))
	req, _ := http.NewRequest("GET", "https://api:6443/api", nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _ = rt.RoundTrip(req.WithContext(ctx))
	if logged || r.Err() != nil {
		t.Errorf("a cancelled request was reported: %v", r.Err())
	}
}
