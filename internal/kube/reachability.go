package kube

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/utils/clock"
)

// DefaultReportInterval is how often ConnectionReporter repeats that the
// API server still cannot be reached.
const DefaultReportInterval = 10 * time.Second

// ConnectionReporter watches the requests of a client for failures to
// reach the API server, and says so in the log at the default verbosity:
// client-go's informers retry such failures quietly (the watch-list
// stream logs them only at -v 2), so a scheduler pointed at the wrong
// server, or whose server is down, would otherwise wait in silence.
//
// A failure is a request that got no response (connection refused,
// timeout, TLS) or a response that refuses it: 401, 403, 429 or a 5xx.
// The first is logged at once, then while failures go on one line every
// Interval with the count, and the first success after them says the
// server is reachable again. Err returns the last failure.
type ConnectionReporter struct {
	// Server is the API server's URL, for the log.
	Server string
	// Logger receives the lines.
	Logger logr.Logger
	// Interval between reports while failing (default DefaultReportInterval).
	Interval time.Duration
	// Clock tells the time (default the real clock).
	Clock clock.PassiveClock

	mu sync.Mutex
	// failing is set from the first failure until a success.
	failing bool
	// since is when failing began; reported when the last report was.
	since, reported time.Time
	// failures counts failed requests since the last report.
	failures int
	last     error
}

// Wrap returns rt with its requests watched: give it to rest.Config.Wrap.
func (r *ConnectionReporter) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		switch {
		case err != nil && req.Context().Err() == nil && !errors.Is(err, context.Canceled):
			r.failed(fmt.Errorf("%s %s: %w", req.Method, where(req), err), false)
		case err == nil && refused(resp.StatusCode):
			r.failed(fmt.Errorf("%s %s: %s", req.Method, where(req), resp.Status), true)
		case err == nil:
			r.succeeded()
		}
		return resp, err
	})
}

// where is the request's URL without its query, which for a watch is
// long and says nothing of why it failed.
func where(req *http.Request) string {
	u := *req.URL
	u.RawQuery, u.User = "", nil
	return u.String()
}

// refused reports whether a status says the server turned the request
// away (rather than answering it, as a 404 or a 409 does).
func refused(code int) bool {
	return code == http.StatusUnauthorized || code == http.StatusForbidden || code == http.StatusTooManyRequests || code >= 500
}

// Err returns the last failure, nil if there was none.
func (r *ConnectionReporter) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *ConnectionReporter) now() time.Time {
	if r.Clock == nil {
		return time.Now()
	}
	return r.Clock.Now()
}

// failed records a failure: no response, or (answered) one that refuses
// the request.
func (r *ConnectionReporter) failed(err error, answered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.last = err
	r.failures++
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultReportInterval
	}
	switch {
	case !r.failing:
		r.failing, r.since = true, now
	case now.Sub(r.reported) < interval:
		return
	}
	msg := "Cannot reach the API server; client-go retries with backoff"
	if answered {
		msg = "The API server refuses requests; client-go retries with backoff"
	}
	r.Logger.Error(err, msg, "server", r.Server, "failedRequests", r.failures, "failingFor", now.Sub(r.since).Round(time.Second).String())
	r.reported, r.failures = now, 0
}

func (r *ConnectionReporter) succeeded() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.failing {
		return
	}
	r.Logger.Info("The API server is reachable again", "server", r.Server, "after", r.now().Sub(r.since).Round(time.Second).String())
	r.failing, r.failures = false, 0
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
