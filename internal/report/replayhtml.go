package report

import (
	_ "embed"
	"encoding/json"
	"io"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

//go:embed replay.html
var replayHTML string

// htmlBuckets is how many slices of time the HTML report's curves have.
const htmlBuckets = 400

// htmlPending bounds the pending pods the HTML report lists.
const htmlPending = 50

// htmlData is what the report's script draws from.
type htmlData struct {
	Start       time.Time            `json:"start"`
	Span        float64              `json:"span"`
	Buckets     int                  `json:"buckets"`
	Summary     replay.Summary       `json:"summary"`
	Resources   []htmlResource       `json:"resources"`
	Pending     []float64            `json:"pending"`
	Running     []float64            `json:"running"`
	Attempts    []float64            `json:"attempts"`
	Failed      []float64            `json:"failed"`
	WaitP50     []float64            `json:"waitP50"`
	WaitP99     []float64            `json:"waitP99"`
	Reasons     []htmlReason         `json:"reasons"`
	Busiest     []replay.NodeStat    `json:"busiest"`
	PendingPods []replay.PendingPod  `json:"pendingPods"`
	PendingMore int                  `json:"pendingMore"`
	NodeEvents  int                  `json:"nodeEvents"`
	Extra       []replay.ExtraSeries `json:"extra"`
}

type htmlResource struct {
	Name          string    `json:"name"`
	Capacity      string    `json:"capacity"`
	Allocation    []float64 `json:"allocation"`
	Fragmentation []float64 `json:"fragmentation"`
}

type htmlReason struct {
	Plugin string    `json:"plugin"`
	Pods   []float64 `json:"pods"`
}

// WriteReplayHTML writes the replay as one self-contained HTML page (no
// network access: the data, styles and the script that draws the charts
// are inline): the curves, the pending reasons over time, the busiest nodes
// and the pods left pending.
func WriteReplayHTML(w io.Writer, r *replay.Result) error {
	s := &r.Series
	span := r.Summary.End.Sub(r.Summary.Start).Seconds()
	curve := func(v []float64) []float64 {
		return round(Curve{Times: s.Time, Values: v, Span: span}.Buckets(htmlBuckets))
	}
	d := htmlData{Start: r.Summary.Start, Span: span, Buckets: htmlBuckets, Summary: r.Summary, Busiest: r.Busiest, NodeEvents: len(r.NodeEvents)}
	for _, rs := range s.Resources {
		alloc, frag := make([]float64, len(rs.Capacity)), make([]float64, len(rs.Capacity))
		for i, c := range rs.Capacity {
			if c > 0 {
				alloc[i] = float64(rs.Allocated[i]) / float64(c)
				frag[i] = rs.Fragmentation[i] / float64(c)
			}
		}
		capacity := int64(0)
		if n := len(rs.Capacity); n > 0 {
			capacity = rs.Capacity[n-1]
		}
		d.Resources = append(d.Resources, htmlResource{Name: rs.Name, Capacity: schedcore.FormatQuantity(v1.ResourceName(rs.Name), capacity), Allocation: curve(alloc), Fragmentation: curve(frag)})
	}
	d.Pending, d.Running = curve(ints(s.Pending)), curve(ints(s.Running))
	d.Attempts, d.Failed = perBucket(s.Time, s.Attempts, span), perBucket(s.Time, s.FailedAttempts, span)
	d.WaitP50, d.WaitP99 = curve(s.WaitP50), curve(s.WaitP99)
	for _, rs := range topReasons(s.PendingReasons) {
		d.Reasons = append(d.Reasons, htmlReason{Plugin: rs.Plugin, Pods: curve(ints(rs.Pods))})
	}
	if d.Reasons == nil {
		d.Reasons = []htmlReason{}
	}
	d.Extra = s.Extra
	d.PendingPods = r.Pending
	if len(d.PendingPods) > htmlPending {
		d.PendingMore = len(d.PendingPods) - htmlPending
		d.PendingPods = d.PendingPods[:htmlPending]
	}
	if d.PendingPods == nil {
		d.PendingPods = []replay.PendingPod{}
	}
	// json.Marshal escapes <, > and & so the data cannot end the script.
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, strings.Replace(replayHTML, "{{DATA}}", string(b), 1))
	return err
}

// perBucket turns a cumulative count into how much it grew in each of the
// report's slices of time.
func perBucket(times []float64, cum []int, span float64) []float64 {
	out := make([]float64, htmlBuckets)
	prev := 0
	for i, t := range times {
		b := htmlBuckets - 1
		if span > 0 {
			b = min(int(t/span*htmlBuckets), htmlBuckets-1)
		}
		out[b] += float64(cum[i] - prev)
		prev = cum[i]
	}
	return out
}

// round keeps 4 significant decimals, to keep the page small.
func round(v []float64) []float64 {
	for i, x := range v {
		v[i] = float64(int64(x*1e4+0.5)) / 1e4
	}
	return v
}
