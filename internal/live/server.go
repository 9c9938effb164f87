package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// DefaultMetricsBindAddress is kube-scheduler's secure port on loopback;
// kubectl-sched serves plain HTTP there, and only on loopback unless told
// otherwise, since the endpoints have no authentication.
const DefaultMetricsBindAddress = "127.0.0.1:10259"

// healthCheck returns nil when healthy.
type healthCheck func(*http.Request) error

// server serves /metrics, /healthz, /livez and /readyz.
type server struct {
	srv *http.Server
	ln  net.Listener
}

// newServer listens on addr (":0" picks a free port) at once, so that a bad
// address fails start-up rather than later.
func newServer(addr string, reg prometheus.Gatherer, healthy, ready healthCheck) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/healthz", checkHandler(healthy))
	mux.Handle("/livez", checkHandler(healthy))
	mux.Handle("/readyz", checkHandler(ready))
	return &server{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln: ln}, nil
}

// Addr is the address the server listens on.
func (s *server) Addr() string { return s.ln.Addr().String() }

func (s *server) serve() error {
	if err := s.srv.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *server) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}

// checkHandler answers "ok" with 200, or the failure with 500, as the
// component-base healthz handlers do.
func checkHandler(check healthCheck) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if check != nil {
			if err := check(r); err != nil {
				http.Error(w, fmt.Sprintf("check failed: %v", err), http.StatusInternalServerError)
				return
			}
		}
		fmt.Fprint(w, "ok")
	})
}

// flag is a health condition set once.
type flag struct {
	v   atomic.Bool
	msg string
}

func (f *flag) set()        { f.v.Store(true) }
func (f *flag) isSet() bool { return f.v.Load() }

func (f *flag) check(*http.Request) error {
	if !f.v.Load() {
		return errors.New(f.msg)
	}
	return nil
}
