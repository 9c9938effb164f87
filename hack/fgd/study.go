package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-sched/kubectl-sched/internal/fgd"
	"github.com/kubectl-sched/kubectl-sched/internal/sweep"
)

// studyRow is one workload and policy of an FGD study: our curve (the mean
// over the seeds at each arrived percentage) beside the artifact's.
type studyRow struct {
	Workload, Policy string
	Seeds            int
	Ours, Paper      []float64
	// At100 are our seeds' allocations at 100% arrived (the bar charts').
	At100 []float64
	// MaxDiff is the largest |ours - paper| at a percentage both have,
	// MaxAt that percentage.
	MaxDiff float64
	MaxAt   int
}

// compareStudy merges a sweep's results (as `kubectl sched sweep --collect`
// does) and compares every FGD trace and fgdPolicy configuration of the
// six paper policies with the artifact's expected results of the same
// workload (named by the pod list's file: openb_pod_list_cpu050.csv.gz is
// openb_pod_list_cpu050).
func compareStudy(path, results string) ([]studyRow, error) {
	s, err := sweep.ReadStudy(path)
	if err != nil {
		return nil, err
	}
	p, err := sweep.Prepare(path, s, nil)
	if err != nil {
		return nil, err
	}
	if results == "" {
		results = strings.TrimSuffix(path, filepath.Ext(path)) + ".results"
	}
	m, err := p.Merge(results)
	if err != nil {
		return nil, err
	}
	paperNames := map[string]bool{}
	for _, pp := range fgd.PaperPolicies {
		paperNames[pp.Name] = true
	}
	type key struct{ trace, config string }
	sums := map[key][]float64{}
	counts := map[key][]int{}
	seeds := map[key]int{}
	at100 := map[key][]float64{}
	var order []key
	for _, c := range m.Cells {
		k := key{c.Axes.Trace, c.Axes.Config}
		var rec sweep.ReplayRecord
		if err := json.Unmarshal(c.Result, &rec); err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.ID, err)
		}
		if rec.FGD == nil {
			continue
		}
		if sums[k] == nil {
			sums[k], counts[k] = make([]float64, fgd.MaxPct+1), make([]int, fgd.MaxPct+1)
			order = append(order, k)
		}
		seeds[k]++
		if len(rec.FGD.Alloc) > 100 && rec.FGD.Alloc[100] != nil {
			at100[k] = append(at100[k], *rec.FGD.Alloc[100])
		}
		for x, v := range rec.FGD.Alloc {
			if v != nil && x <= fgd.MaxPct {
				sums[k][x] += *v
				counts[k][x]++
			}
		}
	}
	traces := map[string]sweep.Trace{}
	for _, t := range s.Axes.Traces {
		traces[t.Name] = t
	}
	policies := map[string]string{}
	for _, c := range s.Axes.Configs {
		policies[c.Name] = c.FGDPolicy
	}
	var rows []studyRow
	expected := map[string]*fgd.PaperCurves{}
	for _, k := range order {
		policy := policies[k.config]
		if !paperNames[policy] {
			continue
		}
		workload := filepath.Base(traces[k.trace].OpenbPods)
		workload = strings.TrimSuffix(strings.TrimSuffix(workload, ".gz"), ".csv")
		pc := expected[workload]
		if pc == nil {
			if pc, err = fgd.LoadExpected(workload); err != nil {
				return nil, fmt.Errorf("trace %s: %w", k.trace, err)
			}
			expected[workload] = pc
		}
		r := studyRow{Workload: workload, Policy: policy, Seeds: seeds[k], Ours: make([]float64, fgd.MaxPct+1), Paper: pc.Alloc[policy], MaxAt: -1, At100: at100[k]}
		for x := range r.Ours {
			r.Ours[x] = math.NaN()
			if counts[k][x] > 0 {
				r.Ours[x] = sums[k][x] / float64(counts[k][x])
			}
			if d := math.Abs(r.Ours[x] - r.Paper[x]); !math.IsNaN(d) && d >= r.MaxDiff {
				r.MaxDiff, r.MaxAt = d, x
			}
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no FGD cell of the paper's policies (a trace with fgdTune and a config with fgdPolicy Random, DotProd, GpuClustering, GpuPacking, BestFit or FGD)", path)
	}
	return rows, nil
}

// printStudy writes the comparison: per workload and policy the largest
// difference from the artifact's mean allocation curve and where, and
// the allocation at 100% and 130% arrived, ours and the artifact's; then
// the worst row.
func printStudy(w io.Writer, rows []studyRow) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "WORKLOAD\tPOLICY\tSEEDS\tMAX |DIFF|\tAT\tALLOC@100% OURS\tPAPER\tALLOC@130% OURS\tPAPER\t")
	worst := 0
	for i, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%d%%\t%s\t%s\t%s\t%s\t\n", strings.TrimPrefix(r.Workload, "openb_pod_list_"), r.Policy, r.Seeds, r.MaxDiff, r.MaxAt,
			pct(r.Ours[100]), pct(r.Paper[100]), pct(r.Ours[130]), pct(r.Paper[130]))
		if r.MaxDiff > rows[worst].MaxDiff {
			worst = i
		}
	}
	tw.Flush()
	r := rows[worst]
	within := 0
	for _, row := range rows {
		if row.MaxDiff <= 1.0 {
			within++
		}
	}
	fmt.Fprintf(w, "\n%d of %d workload × policy curves within 1.0 point of the artifact's at every arrived percentage 0..130; the worst: %s %s, %.2f points at %d%% (ours %.2f, the artifact's %.2f)\n",
		within, len(rows), strings.TrimPrefix(r.Workload, "openb_pod_list_"), r.Policy, r.MaxDiff, r.MaxAt, r.Ours[r.MaxAt], r.Paper[r.MaxAt])
}

func pct(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

// writeFigures draws the artifact's four bar charts (fgd.BarFigures) from
// the rows into dir, one NAME.svg each, and writes their numbers to w as
// Markdown tables: unallocated GPU at 100% arrived, ours and the
// artifact's, mean ± standard deviation over the seeds. A figure none of
// whose workloads the rows have is skipped.
func writeFigures(dir string, rows []studyRow, w io.Writer) error {
	ours := map[string]map[string][]float64{}
	for _, r := range rows {
		if ours[r.Workload] == nil {
			ours[r.Workload] = map[string][]float64{}
		}
		for _, v := range r.At100 {
			ours[r.Workload][r.Policy] = append(ours[r.Workload][r.Policy], 100-v)
		}
	}
	for _, fig := range fgd.BarFigures {
		data := map[string]map[string]fgd.Unallocated{}
		for _, wl := range fig.Workloads {
			if ours[wl] == nil {
				continue
			}
			paper, err := fgd.ExpectedAt(wl, 100)
			if err != nil {
				return err
			}
			data[wl] = map[string]fgd.Unallocated{}
			for _, pol := range fgd.BarPolicies {
				u := fgd.Unallocated{Ours: ours[wl][pol]}
				for _, v := range paper[pol] {
					u.Paper = append(u.Paper, 100-v)
				}
				data[wl][pol] = u
			}
		}
		if len(data) == 0 {
			continue
		}
		var b strings.Builder
		if err := fgd.WriteBarsSVG(&b, fig, data); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, fig.Name+".svg"), []byte(b.String()), 0o644); err != nil {
			return err
		}
		fmt.Fprintf(w, "\n%s (unallocated GPU %%, at 100%% arrived; ours / the artifact's, mean ± sd over the seeds)\n\n", fig.Name)
		fmt.Fprintf(w, "| %s | %s |\n|---|%s\n", "workload", strings.Join(fgd.BarPolicies, " | "), strings.Repeat("---|", len(fgd.BarPolicies)))
		for g, wl := range fig.Workloads {
			if data[wl] == nil {
				continue
			}
			fmt.Fprintf(w, "| %s", fig.Labels[g])
			for _, pol := range fgd.BarPolicies {
				om, osd := fgd.MeanSD(data[wl][pol].Ours)
				pm, psd := fgd.MeanSD(data[wl][pol].Paper)
				fmt.Fprintf(w, " | %s±%.1f / %s±%.1f", pct(om), osd, pct(pm), psd)
			}
			fmt.Fprintln(w, " |")
		}
	}
	return nil
}
