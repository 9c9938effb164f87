package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// serverCounts are counters read from the API server's /metrics: requests
// by verb and resource, watch events sent and their bytes by resource,
// watchers the server closed. TestRunThroughput logs what each run added,
// so that a run's cost to the API server can be told apart by what was
// asked of it (these depend less on the machine's load than CPU-seconds).
type serverCounts map[string]float64

// readServerCounts scrapes the API server; nil if it cannot.
func readServerCounts(ctx context.Context, client kubernetes.Interface) serverCounts {
	body, err := client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return nil
	}
	out := serverCounts{}
	label := func(m *dto.Metric, name string) string {
		for _, l := range m.GetLabel() {
			if l.GetName() == name {
				return l.GetValue()
			}
		}
		return ""
	}
	resource := func(m *dto.Metric) string {
		r := label(m, "resource")
		if s := label(m, "subresource"); s != "" {
			r += "/" + s
		}
		return r
	}
	for _, m := range mfs["apiserver_request_total"].GetMetric() {
		out[label(m, "verb")+" "+resource(m)] += m.GetCounter().GetValue()
	}
	for _, m := range mfs["apiserver_watch_events_total"].GetMetric() {
		out["watch-events "+resource(m)] += m.GetCounter().GetValue()
	}
	for _, m := range mfs["apiserver_watch_events_sizes"].GetMetric() {
		out["watch-KB "+resource(m)] += m.GetHistogram().GetSampleSum() / 1024
	}
	for _, m := range mfs["apiserver_terminated_watchers_total"].GetMetric() {
		out["terminated-watchers "+resource(m)] += m.GetCounter().GetValue()
	}
	for _, m := range mfs["apiserver_response_sizes"].GetMetric() {
		out["response-KB "+label(m, "verb")+" "+resource(m)] += m.GetHistogram().GetSampleSum() / 1024
	}
	return out
}

// minus is what was added since before, the non-zero entries only, as
// "key=n" sorted by key; "" if either scrape failed.
func (s serverCounts) minus(before serverCounts) string {
	if s == nil || before == nil {
		return ""
	}
	var parts []string
	for k, v := range s {
		if d := v - before[k]; d >= 0.5 {
			parts = append(parts, fmt.Sprintf("%s=%.0f", k, d))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
