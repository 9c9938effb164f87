package fgd

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// BarFigure is one of the artifact's bar charts of unallocated GPU at
// 100% arrived demand (experiments/plot/plot_openb_*_alloc_bar.py, the
// paper's Figs. 11-13): a group of bars per workload, a bar per policy.
type BarFigure struct {
	// Name is the artifact's figure file without its extension
	// ("openb_gpushare_alloc_bar"); Title the x axis' label.
	Name, Title string
	// Workloads are the artifact's workload names, in the chart's order,
	// with Labels the group labels ("40%").
	Workloads, Labels []string
}

// BarFigures are the artifact's four bar charts, with its workloads and
// labels.
var BarFigures = []BarFigure{
	{"openb_nongpu_alloc_bar", "Proportion of non-GPU workloads in terms of task number",
		[]string{"openb_pod_list_cpu050", "openb_pod_list_cpu100", "openb_pod_list_cpu200", "openb_pod_list_cpu250"}, []string{"5%", "10%", "20%", "25%"}},
	{"openb_gpushare_alloc_bar", "Proportion of GPU-sharing workloads in terms of GPU requests",
		[]string{"openb_pod_list_gpushare40", "openb_pod_list_gpushare60", "openb_pod_list_gpushare80", "openb_pod_list_gpushare100"}, []string{"40%", "60%", "80%", "100%"}},
	{"openb_multigpu_alloc_bar", "Proportion of multi-GPU workloads in terms of GPU requests",
		[]string{"openb_pod_list_multigpu20", "openb_pod_list_multigpu30", "openb_pod_list_multigpu40", "openb_pod_list_multigpu50"}, []string{"20%", "30%", "40%", "50%"}},
	{"openb_gpuspec_alloc_bar", "Proportion of workloads with GPU type constraints in terms of GPU requests",
		[]string{"openb_pod_list_gpuspec10", "openb_pod_list_gpuspec20", "openb_pod_list_gpuspec25", "openb_pod_list_gpuspec33"}, []string{"10%", "20%", "25%", "33%"}},
}

// BarPolicies are the charts' policies in their order (the artifact's
// policy_keep), by the table's names.
var BarPolicies = []string{"FGD", "BestFit", "GpuPacking", "GpuClustering", "DotProd", "Random"}

// barColors are the policies' colors, in BarPolicies' order.
var barColors = []string{"#d62728", "#ff7f0e", "#9467bd", "#2ca02c", "#1f77b4", "#7f7f7f"}

// Unallocated is one workload and policy of a bar chart: the unallocated
// GPU (100 - allocation, %) of every seed, ours and the artifact's.
type Unallocated struct {
	Ours, Paper []float64
}

// MeanSD returns the mean and the sample standard deviation (seaborn's
// errorbar="sd") of vs; NaN mean when vs is empty.
func MeanSD(vs []float64) (mean, sd float64) {
	if len(vs) == 0 {
		return math.NaN(), 0
	}
	for _, v := range vs {
		mean += v
	}
	mean /= float64(len(vs))
	if len(vs) > 1 {
		for _, v := range vs {
			sd += (v - mean) * (v - mean)
		}
		sd = math.Sqrt(sd / float64(len(vs)-1))
	}
	return mean, sd
}

// WriteBarsSVG draws fig: per workload (a group) and policy, our mean
// unallocated GPU (a solid bar) beside the artifact's (a hatched bar),
// each with its standard deviation over the seeds. data is by workload,
// then policy; a missing value leaves its bar out.
func WriteBarsSVG(w io.Writer, fig BarFigure, data map[string]map[string]Unallocated) error {
	const width, height = 1040.0, 400.0
	p := panel{x: 60, y: 40, w: 760, h: 290, xmin: 0, xmax: 1, ymin: 0, ymax: 21.7, title: "Unallocated GPU (%) at 100% arrived: " + fig.Name}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	b.WriteString(`<defs><pattern id="hatch" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="5" height="5" fill="white" fill-opacity="0.55"/><line x1="0" y1="0" x2="0" y2="5" stroke="black" stroke-width="1.2"/></pattern></defs>` + "\n")
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-weight="bold">%s</text>`+"\n", p.x, p.y-12, xmlEscape(p.title))
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", p.x, p.y, p.w, p.h)
	for _, t := range ticks(p.ymin, p.ymax) {
		y := p.py(t)
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#eee"/><text x="%.0f" y="%.1f" text-anchor="end">%g</text>`+"\n", p.x, y, p.x+p.w, y, p.x-6, y+4, t)
	}
	fmt.Fprintf(&b, `<text x="18" y="%.0f" transform="rotate(-90 18 %.0f)" text-anchor="middle">Unallocated GPU (%%)</text>`+"\n", p.y+p.h/2, p.y+p.h/2)
	groupW := p.w / float64(len(fig.Workloads))
	barW := groupW * 0.8 / float64(2*len(BarPolicies))
	for g, wl := range fig.Workloads {
		gx := p.x + float64(g)*groupW + groupW*0.1
		label := wl
		if g < len(fig.Labels) {
			label = fig.Labels[g]
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", gx+groupW*0.4, p.y+p.h+16, xmlEscape(label))
		for i, pol := range BarPolicies {
			u, ok := data[wl][pol]
			if !ok {
				continue
			}
			for j, vs := range [][]float64{u.Ours, u.Paper} {
				mean, sd := MeanSD(vs)
				if math.IsNaN(mean) {
					continue
				}
				x := gx + float64(2*i+j)*barW
				top := p.py(math.Min(mean, p.ymax))
				fill := barColors[i]
				fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" stroke="black" stroke-width="0.6"/>`+"\n", x, top, barW, p.py(0)-top, fill)
				if j == 1 {
					fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="url(#hatch)"/>`+"\n", x, top, barW, p.py(0)-top)
				}
				if sd > 0 {
					cx := x + barW/2
					fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="black"/>`+"\n", cx, p.py(math.Max(mean-sd, 0)), cx, p.py(math.Min(mean+sd, p.ymax)))
				}
			}
		}
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text>`+"\n", p.x+p.w/2, p.y+p.h+36, xmlEscape(fig.Title))
	lx, ly := 840.0, 50.0
	for i, pol := range BarPolicies {
		y := ly + float64(i)*20
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="14" height="12" fill="%s" stroke="black" stroke-width="0.6"/><text x="%.0f" y="%.0f">%s</text>`+"\n", lx, y-6, barColors[i], lx+20, y+4, xmlEscape(pol))
	}
	y := ly + float64(len(BarPolicies))*20 + 10
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="14" height="12" fill="#bbb" stroke="black" stroke-width="0.6"/><text x="%.0f" y="%.0f">kubectl-sched</text>`+"\n", lx, y-6, lx+20, y+4)
	fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="14" height="12" fill="#bbb" stroke="black" stroke-width="0.6"/><rect x="%.0f" y="%.0f" width="14" height="12" fill="url(#hatch)"/><text x="%.0f" y="%.0f">artifact</text>`+"\n", lx, y+14, lx, y+14, lx+20, y+24)
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" fill="#555">Bars: mean over the seeds; whiskers: standard deviation.</text>`+"\n", p.x, height-10)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// ExpectedAt returns the artifact's allocation (%) at pct arrived for
// every seed of workload, by policy (the table's names), in the results'
// order; a seed without a value there is left out.
func ExpectedAt(workload string, pct int) (map[string][]float64, error) {
	dirs := map[string]string{}
	for _, p := range PaperPolicies {
		dirs[p.Dir] = p.Name
	}
	out := map[string][]float64{}
	const name = "paper/analysis_allo_discrete.csv.gz"
	err := eachPaperRow(name, func(col map[string]int, row []string) error {
		if row[col["workload"]] != workload {
			return nil
		}
		p, ok := dirs[row[col["sc_policy"]]]
		if !ok {
			return fmt.Errorf("%s: unknown policy %q", name, row[col["sc_policy"]])
		}
		i, ok := col[fmt.Sprint(pct)]
		if !ok {
			return fmt.Errorf("%s: no column %d", name, pct)
		}
		if strings.TrimSpace(row[i]) == "" {
			return nil
		}
		var v float64
		if _, err := fmt.Sscan(row[i], &v); err != nil {
			return fmt.Errorf("%s: %s %s at %d: %w", name, workload, p, pct, err)
		}
		out[p] = append(out[p], v)
		return nil
	})
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("%s: no results for workload %q", name, workload)
	}
	return out, err
}
