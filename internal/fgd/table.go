package fgd

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// Row is one policy's means over its seeds, with the paper's figures.
type Row struct {
	Policy               string  `json:"policy"`
	Seeds                int     `json:"seeds"`
	AllocAt100           float64 `json:"allocAt100"`
	AllocAt130           float64 `json:"allocAt130"`
	UnallocatedGPUsAt130 float64 `json:"unallocatedGPUsAt130"`
	FragAt130            float64 `json:"fragAt130"`
	// Paper is the paper's row (nil for rows it does not have).
	Paper *Row `json:"paper,omitempty"`
	// Curve is the mean allocation ratio at 0..130% arrived demand.
	Curve []float64 `json:"curve,omitempty"`
}

// rowJSON is Row in JSON, a figure the row does not have (NaN: the DRA
// row's fragmentation, a percentage no event reached) as null.
type rowJSON struct {
	Policy               string     `json:"policy"`
	Seeds                int        `json:"seeds"`
	AllocAt100           *float64   `json:"allocAt100"`
	AllocAt130           *float64   `json:"allocAt130"`
	UnallocatedGPUsAt130 *float64   `json:"unallocatedGPUsAt130"`
	FragAt130            *float64   `json:"fragAt130"`
	Paper                *Row       `json:"paper,omitempty"`
	Curve                []*float64 `json:"curve,omitempty"`
}

func orNull(x float64) *float64 {
	if math.IsNaN(x) {
		return nil
	}
	return &x
}

func orNaN(x *float64) float64 {
	if x == nil {
		return math.NaN()
	}
	return *x
}

// MarshalJSON writes NaN as null.
func (r Row) MarshalJSON() ([]byte, error) {
	j := rowJSON{Policy: r.Policy, Seeds: r.Seeds, AllocAt100: orNull(r.AllocAt100), AllocAt130: orNull(r.AllocAt130),
		UnallocatedGPUsAt130: orNull(r.UnallocatedGPUsAt130), FragAt130: orNull(r.FragAt130), Paper: r.Paper}
	for _, x := range r.Curve {
		j.Curve = append(j.Curve, orNull(x))
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads null as NaN.
func (r *Row) UnmarshalJSON(data []byte) error {
	var j rowJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return err
	}
	*r = Row{Policy: j.Policy, Seeds: j.Seeds, AllocAt100: orNaN(j.AllocAt100), AllocAt130: orNaN(j.AllocAt130),
		UnallocatedGPUsAt130: orNaN(j.UnallocatedGPUsAt130), FragAt130: orNaN(j.FragAt130), Paper: j.Paper}
	for _, x := range j.Curve {
		r.Curve = append(r.Curve, orNaN(x))
	}
	return nil
}

// PaperRows are the paper's figures for the default trace: the means over
// its 10 seeds of the artifact's expected results
// (experiments/analysis/expected_results/analysis_{allo,frag}_discrete.csv).
var PaperRows = map[string]Row{
	"Random":        {Policy: "Random", Seeds: 10, AllocAt100: 86.30, AllocAt130: 87.47, UnallocatedGPUsAt130: 778, FragAt130: 12.43},
	"DotProd":       {Policy: "DotProd", Seeds: 10, AllocAt100: 90.62, AllocAt130: 90.85, UnallocatedGPUsAt130: 568, FragAt130: 9.08},
	"GpuClustering": {Policy: "GpuClustering", Seeds: 10, AllocAt100: 91.65, AllocAt130: 91.88, UnallocatedGPUsAt130: 505, FragAt130: 8.00},
	"GpuPacking":    {Policy: "GpuPacking", Seeds: 10, AllocAt100: 91.78, AllocAt130: 92.00, UnallocatedGPUsAt130: 497, FragAt130: 7.91},
	"BestFit":       {Policy: "BestFit", Seeds: 10, AllocAt100: 92.86, AllocAt130: 93.08, UnallocatedGPUsAt130: 430, FragAt130: 6.85},
	"FGD":           {Policy: "FGD", Seeds: 10, AllocAt100: 95.23, AllocAt130: 95.39, UnallocatedGPUsAt130: 286, FragAt130: 4.57},
}

// Summarize averages the runs per policy, in the order they first appear.
func Summarize(runs []*Run) []Row {
	var order []string
	by := map[string][]*Run{}
	for _, r := range runs {
		if _, ok := by[r.Policy]; !ok {
			order = append(order, r.Policy)
		}
		by[r.Policy] = append(by[r.Policy], r)
	}
	var rows []Row
	for _, p := range order {
		rs := by[p]
		row := Row{Policy: p, Seeds: len(rs), Curve: make([]float64, MaxPct+1)}
		for _, r := range rs {
			row.AllocAt100 += r.Metrics.Alloc[100]
			row.AllocAt130 += r.Metrics.Alloc[MaxPct]
			row.UnallocatedGPUsAt130 += r.Metrics.UnallocatedAt130
			row.FragAt130 += r.Metrics.Frag[MaxPct]
			for x := range row.Curve {
				row.Curve[x] += r.Metrics.Alloc[x]
			}
		}
		n := float64(len(rs))
		row.AllocAt100 = round2(row.AllocAt100 / n)
		row.AllocAt130 = round2(row.AllocAt130 / n)
		row.UnallocatedGPUsAt130 = math.Round(row.UnallocatedGPUsAt130 / n)
		row.FragAt130 = round2(row.FragAt130 / n)
		for x := range row.Curve {
			row.Curve[x] = round2(row.Curve[x] / n)
		}
		row.Paper = paperOf(p)
		rows = append(rows, row)
	}
	return rows
}

// paperOf is the paper's row for a row of ours (nil for the kube rows).
func paperOf(policy string) *Row {
	if pr, ok := PaperRows[strings.TrimSuffix(policy, "/uniform-ties")]; ok {
		return &pr
	}
	return nil
}

// PrintTable writes the rows beside the paper's.
func PrintTable(w io.Writer, rows []Row) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tseeds\talloc@100\tpaper\talloc@130\tpaper\tΔ130\tunalloc GPUs@130\tpaper\tfrag%@130\tpaper\t")
	for _, r := range rows {
		if r.Paper == nil {
			r.Paper = paperOf(r.Policy)
		}
		if r.Paper == nil {
			fmt.Fprintf(tw, "%s\t%d\t%s\t-\t%s\t-\t-\t%s\t-\t%s\t-\t\n", r.Policy, r.Seeds, fig(r.AllocAt100, "%.2f"), fig(r.AllocAt130, "%.2f"), fig(r.UnallocatedGPUsAt130, "%.0f"), fig(r.FragAt130, "%.2f"))
			continue
		}
		p := r.Paper
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.2f\t%s\t%.2f\t%s\t%s\t%.0f\t%s\t%.2f\t\n", r.Policy, r.Seeds, fig(r.AllocAt100, "%.2f"), p.AllocAt100, fig(r.AllocAt130, "%.2f"), p.AllocAt130, fig(r.AllocAt130-p.AllocAt130, "%+.2f"), fig(r.UnallocatedGPUsAt130, "%.0f"), p.UnallocatedGPUsAt130, fig(r.FragAt130, "%.2f"), p.FragAt130)
	}
	tw.Flush()
}

// fig formats a figure, "-" for NaN (one the row does not have).
func fig(x float64, format string) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf(format, x)
}
