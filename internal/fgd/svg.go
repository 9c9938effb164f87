package fgd

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// seriesColors are the policies' colors, in table order.
var seriesColors = []string{"#7f7f7f", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#d62728", "#8c564b", "#e377c2"}

// panel is one chart: its place in the picture and the data range shown.
type panel struct {
	x, y, w, h             float64
	xmin, xmax, ymin, ymax float64
	title                  string
}

// WriteAllocSVG draws the GPU allocation ratio over the arrived demand, the
// paper's Fig. 9(a): our mean curve of each row (solid) and the paper's
// (dashed), on the whole range and zoomed on the end where the policies
// part. rows gives the order and the curves; paper may lack a row.
func WriteAllocSVG(w io.Writer, rows []Row, paper map[string][]float64) error {
	const width, height = 1040.0, 440.0
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	panels := []panel{
		{x: 60, y: 40, w: 330, h: 300, xmin: 0, xmax: MaxPct, ymin: 0, ymax: 100, title: "GPU allocation (%) by arrived GPU demand (%)"},
		{x: 470, y: 40, w: 330, h: 300, xmin: 80, xmax: MaxPct, ymin: 84, ymax: 98, title: "zoom: 80-130% arrived"},
	}
	for _, p := range panels {
		drawAxes(&b, p)
		for i, r := range rows {
			color := seriesColors[i%len(seriesColors)]
			polyline(&b, p, r.Curve, color, "")
			if c, ok := paper[r.Policy]; ok {
				polyline(&b, p, c, color, ` stroke-dasharray="5,4"`)
			}
		}
	}
	// Legend.
	lx, ly := 820.0, 50.0
	for i, r := range rows {
		color := seriesColors[i%len(seriesColors)]
		y := ly + float64(i)*20
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="%s" stroke-width="2"/>`+"\n", lx, y, lx+24, y, color)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", lx+30, y+4, xmlEscape(r.Policy))
	}
	y := ly + float64(len(rows))*20 + 10
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black" stroke-width="2"/><text x="%.0f" y="%.0f">kubectl-sched</text>`+"\n", lx, y, lx+24, y, lx+30, y+4)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black" stroke-width="2" stroke-dasharray="5,4"/><text x="%.0f" y="%.0f">paper</text>`+"\n", lx, y+20, lx+24, y+20, lx+30, y+24)
	fmt.Fprintf(&b, `<text x="60" y="%.0f" fill="#555">Means over the seeds; paper: the artifact's expected results (openb_pod_list_default).</text>`+"\n", height-20)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func (p panel) px(x float64) float64 { return p.x + (x-p.xmin)/(p.xmax-p.xmin)*p.w }
func (p panel) py(y float64) float64 { return p.y + p.h - (y-p.ymin)/(p.ymax-p.ymin)*p.h }

func drawAxes(b *strings.Builder, p panel) {
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", p.x, p.y-12, xmlEscape(p.title))
	fmt.Fprintf(b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", p.x, p.y, p.w, p.h)
	for _, t := range ticks(p.xmin, p.xmax) {
		x := p.px(t)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#eee"/><text x="%.1f" y="%.0f" text-anchor="middle">%g</text>`+"\n", x, p.y, x, p.y+p.h, x, p.y+p.h+16, t)
	}
	for _, t := range ticks(p.ymin, p.ymax) {
		y := p.py(t)
		fmt.Fprintf(b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eee"/><text x="%.0f" y="%.1f" text-anchor="end">%g</text>`+"\n", p.x, y, p.x+p.w, y, p.x-6, y+4, t)
	}
}

// ticks returns round values across [lo, hi], about six of them.
func ticks(lo, hi float64) []float64 {
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 20, 25, 50} {
		if (hi-lo)/s <= 7 {
			step = s
			break
		}
	}
	var out []float64
	for t := math.Ceil(lo/step) * step; t <= hi+1e-9; t += step {
		out = append(out, t)
	}
	return out
}

// polyline draws a curve over 0..MaxPct, within the panel's ranges,
// breaking it where a value is missing.
func polyline(b *strings.Builder, p panel, curve []float64, color, extra string) {
	var pts []string
	flush := func() {
		if len(pts) > 1 {
			fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"/>`+"\n", color, extra, strings.Join(pts, " "))
		}
		pts = pts[:0]
	}
	for x, v := range curve {
		fx := float64(x)
		if math.IsNaN(v) || fx < p.xmin || fx > p.xmax || v < p.ymin || v > p.ymax {
			flush()
			continue
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", p.px(fx), p.py(v)))
	}
	flush()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
