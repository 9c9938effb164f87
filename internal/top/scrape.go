package top

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/rest"
)

// DefaultMetricsURL is where a local `kubectl sched run` serves /metrics
// (its default --metrics-bind-address, plain HTTP).
const DefaultMetricsURL = "http://127.0.0.1:10259/metrics"

// maxBody bounds what a scrape reads (a scheduler's /metrics is ~100 KiB).
const maxBody = 32 << 20

// maxSkipped bounds how many malformed lines one scrape skips before it
// gives up on the text.
const maxSkipped = 50

// acceptHeader asks for the text format: kube-scheduler would otherwise
// answer protobuf or OpenMetrics to clients that ask for them.
const acceptHeader = "text/plain;version=0.0.4;q=1,*/*;q=0.1"

// ErrNoMetrics is returned for a scrape without a single metric family.
var ErrNoMetrics = errors.New("no metrics in the response")

// Source is where samples come from.
type Source interface {
	// Scrape reads the metrics once.
	Scrape(ctx context.Context) (*Sample, error)
	// String names the source for the status line and -o json.
	String() string
}

// HTTPSource scrapes a /metrics URL.
type HTTPSource struct {
	URL    string
	Client *http.Client
	// Now stamps samples (default time.Now).
	Now func() time.Time
}

// String implements Source.
func (s *HTTPSource) String() string { return s.URL }

// Scrape implements Source.
func (s *HTTPSource) Scrape(ctx context.Context) (*Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", acceptHeader)
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", s.URL, resp.Status, firstLine(body))
	}
	return ParseText(body, now(s.Now))
}

// ProxySource scrapes a pod's /metrics through the API server's pod proxy
// (GET /api/v1/namespaces/NS/pods/SCHEME:NAME:PORT/proxy/metrics) with the
// kubeconfig's credentials.
type ProxySource struct {
	// Client is a REST client of the core v1 API (clientset.CoreV1().RESTClient()).
	Client    rest.Interface
	Namespace string
	// Pod is the pod proxy id: "[scheme:]name[:port]".
	Pod string
	Now func() time.Time
}

// String implements Source.
func (s *ProxySource) String() string { return "pod " + s.Namespace + "/" + s.Pod }

// Scrape implements Source.
func (s *ProxySource) Scrape(ctx context.Context) (*Sample, error) {
	body, err := s.Client.Get().Namespace(s.Namespace).Resource("pods").Name(s.Pod).
		SubResource("proxy").Suffix("metrics").SetHeader("Accept", acceptHeader).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("pod proxy %s/%s: %w", s.Namespace, s.Pod, err)
	}
	return ParseText(body, now(s.Now))
}

// GathererSource reads an in-process registry (`run --tui`).
type GathererSource struct {
	Gatherer prometheus.Gatherer
	Now      func() time.Time
}

// String implements Source.
func (s *GathererSource) String() string { return "in-process" }

// Scrape implements Source.
func (s *GathererSource) Scrape(context.Context) (*Sample, error) {
	mfs, err := s.Gatherer.Gather()
	if len(mfs) == 0 && err != nil {
		return nil, err
	}
	out := &Sample{Time: now(s.Now), Families: make(map[string]*dto.MetricFamily, len(mfs))}
	for _, mf := range mfs {
		out.Families[mf.GetName()] = mf
	}
	if err != nil {
		out.Warnings = append(out.Warnings, err.Error())
	}
	return out, nil
}

func now(f func() time.Time) time.Time {
	if f == nil {
		return time.Now()
	}
	return f()
}

// ParseText parses the Prometheus text format with expfmt. A malformed
// line does not lose the scrape: it is dropped (and named in Warnings) and
// the rest parsed again, up to maxSkipped lines.
func ParseText(body []byte, at time.Time) (*Sample, error) {
	lines := bytes.Split(body, []byte("\n"))
	var warnings []string
	// Line numbers of the current text map to the original's.
	orig := make([]int, len(lines))
	for i := range orig {
		orig[i] = i + 1
	}
	for {
		p := expfmt.NewTextParser(model.LegacyValidation)
		mfs, err := p.TextToMetricFamilies(bytes.NewReader(bytes.Join(lines, []byte("\n"))))
		if err == nil {
			if len(mfs) == 0 {
				return nil, ErrNoMetrics
			}
			return &Sample{Time: at, Families: mfs, Warnings: warnings}, nil
		}
		var pe expfmt.ParseError
		if !errors.As(err, &pe) || pe.Line < 1 || pe.Line > len(lines) || len(warnings) >= maxSkipped {
			return nil, fmt.Errorf("parsing metrics: %w", err)
		}
		warnings = append(warnings, fmt.Sprintf("line %d skipped: %s", orig[pe.Line-1], pe.Msg))
		lines = append(lines[:pe.Line-1], lines[pe.Line:]...)
		orig = append(orig[:pe.Line-1], orig[pe.Line:]...)
	}
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
