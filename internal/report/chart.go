package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// Curve is a step function over virtual time: Values[i] holds from
// Times[i] (seconds since the start) until the next sample, the last until
// Span; before the first sample the value is 0.
type Curve struct {
	Times  []float64
	Values []float64
	Span   float64
}

// Buckets returns the curve's time-weighted mean over n equal slices of
// [0, Span]; with a span of 0 every bucket is the last value.
func (c Curve) Buckets(n int) []float64 {
	out := make([]float64, n)
	if len(c.Values) == 0 || n == 0 {
		return out
	}
	if c.Span <= 0 {
		for i := range out {
			out[i] = c.Values[len(c.Values)-1]
		}
		return out
	}
	width := c.Span / float64(n)
	for i := range c.Values {
		from := c.Times[i]
		to := c.Span
		if i+1 < len(c.Times) {
			to = c.Times[i+1]
		}
		if to <= from {
			continue
		}
		for b := int(from / width); b < n && float64(b)*width < to; b++ {
			lo, hi := math.Max(from, float64(b)*width), math.Min(to, float64(b+1)*width)
			if hi > lo {
				out[b] += c.Values[i] * (hi - lo) / width
			}
		}
	}
	return out
}

// blocks are the eighths of a character cell, from empty to full.
var blocks = []rune{' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'}

// chartWidth and chartHeight size the terminal charts.
const (
	chartWidth  = 64
	chartHeight = 6
)

// writeChart draws a curve as an area of block characters, chartHeight
// rows tall, with the top value and 0 on the axis and the start, middle and
// end times under it. top is the axis maximum (0: the curve's maximum).
func writeChart(w io.Writer, title string, c Curve, start time.Time, top float64, format func(float64) string) {
	vals := c.Buckets(chartWidth)
	if top <= 0 {
		for _, v := range vals {
			top = math.Max(top, v)
		}
	}
	fmt.Fprintf(w, "%s\n", title)
	labelTop, labelZero := format(top), format(0)
	if top <= 0 {
		labelTop = labelZero
	}
	lw := max(len(labelTop), len(labelZero))
	for row := chartHeight - 1; row >= 0; row-- {
		label := ""
		switch row {
		case chartHeight - 1:
			label = labelTop
		case 0:
			label = labelZero
		}
		var b strings.Builder
		for _, v := range vals {
			cells := 0.0
			if top > 0 {
				cells = v / top * chartHeight
			}
			eighths := int(math.Round((cells - float64(row)) * 8))
			b.WriteRune(blocks[min(max(eighths, 0), 8)])
		}
		fmt.Fprintf(w, "%*s ┤%s\n", lw, label, strings.TrimRight(b.String(), " "))
	}
	fmt.Fprintf(w, "%*s └%s\n", lw, "", strings.Repeat("─", chartWidth))
	end := start.Add(time.Duration(c.Span * float64(time.Second)))
	mid := start.Add(time.Duration(c.Span / 2 * float64(time.Second)))
	l, m, r := shortTime(start, c.Span), shortTime(mid, c.Span), shortTime(end, c.Span)
	gap1 := chartWidth/2 - len(l) - len(m)/2
	gap2 := chartWidth - len(l) - gap1 - len(m) - len(r)
	if gap1 < 1 || gap2 < 1 {
		fmt.Fprintf(w, "%*s  %s … %s\n", lw, "", l, r)
		return
	}
	fmt.Fprintf(w, "%*s  %s%s%s%s%s\n", lw, "", l, strings.Repeat(" ", gap1), m, strings.Repeat(" ", gap2), r)
}

// shortTime formats an axis time to what the span needs: dates for spans
// over two days, times of day otherwise.
func shortTime(t time.Time, span float64) string {
	t = t.UTC()
	switch {
	case span > 2*86400:
		return t.Format("2006-01-02")
	case span >= 60:
		return t.Format("01-02 15:04")
	default:
		return t.Format("15:04:05.000")
	}
}

func percent(v float64) string {
	switch {
	case v == 0:
		return "0%"
	case v < 0.001:
		return fmt.Sprintf("%.3f%%", 100*v)
	case v < 0.1:
		return fmt.Sprintf("%.2f%%", 100*v)
	default:
		return fmt.Sprintf("%.1f%%", 100*v)
	}
}

func count(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.1f", v)
}

// seconds formats a duration in seconds of virtual time.
func seconds(v float64) string {
	d := time.Duration(v * float64(time.Second))
	switch {
	case d == 0:
		return "0s"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	default:
		d = d.Round(time.Minute)
		days := d / (24 * time.Hour)
		rest := strings.TrimSuffix((d - days*24*time.Hour).String(), "0s")
		if rest == "0" || rest == "" {
			return fmt.Sprintf("%dd", days)
		}
		return fmt.Sprintf("%dd%s", days, rest)
	}
}

// Percent renders a fraction as the tables do ("39.0%", "2.11%").
func Percent(v float64) string { return percent(v) }

// Seconds renders seconds as the tables do ("2h57m", "350ms").
func Seconds(v float64) string { return seconds(v) }

// Round4 rounds the values to four decimals in place, as the HTML reports
// embed them, and returns them.
func Round4(v []float64) []float64 { return round(v) }

// HTMLBuckets is the points per curve of the HTML reports.
const HTMLBuckets = htmlBuckets
