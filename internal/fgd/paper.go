package fgd

import (
	"embed"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The paper's per-seed results on the default trace, copied from its
// artifact (experiments/analysis/expected_results/analysis_{allo,frag}_discrete.csv,
// the rows of openb_pod_list_default; Apache License 2.0, see paper/README.md):
// for each policy and seed 42..51, the value at every arrived percentage
// 0..130.
//
//go:embed paper/*.csv
var paperFiles embed.FS

// PaperPolicies maps the artifact's policy directories to the table's rows.
var PaperPolicies = []struct{ Dir, Name string }{
	{"01-Random", "Random"}, {"02-DotProd", "DotProd"}, {"03-GpuClustering", "GpuClustering"},
	{"04-GpuPacking", "GpuPacking"}, {"05-BestFit", "BestFit"}, {"06-FGD", "FGD"},
}

// PaperCurves are the paper's mean curves per policy: allocation and
// fragmentation ratios (%) at 0..130% arrived, NaN where a seed lacks a
// value.
type PaperCurves struct {
	Alloc, Frag map[string][]float64
}

// LoadPaper reads the embedded results and averages the seeds.
func LoadPaper() (*PaperCurves, error) {
	alloc, err := readPaper("paper/analysis_allo_discrete_default.csv")
	if err != nil {
		return nil, err
	}
	frag, err := readPaper("paper/analysis_frag_discrete_default.csv")
	if err != nil {
		return nil, err
	}
	return &PaperCurves{Alloc: alloc, Frag: frag}, nil
}

func readPaper(name string) (map[string][]float64, error) {
	f, err := paperFiles.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	dirs := map[string]string{}
	for _, p := range PaperPolicies {
		dirs[p.Dir] = p.Name
	}
	sums := map[string][]float64{}
	counts := map[string][]int{}
	for {
		row, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		p, ok := dirs[row[col["sc_policy"]]]
		if !ok {
			return nil, fmt.Errorf("%s: unknown policy %q", name, row[col["sc_policy"]])
		}
		if sums[p] == nil {
			sums[p], counts[p] = make([]float64, MaxPct+1), make([]int, MaxPct+1)
		}
		for x := 0; x <= MaxPct; x++ {
			i, ok := col[strconv.Itoa(x)]
			if !ok || strings.TrimSpace(row[i]) == "" {
				continue
			}
			v, err := strconv.ParseFloat(row[i], 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %s at %d: %w", name, p, x, err)
			}
			sums[p][x] += v
			counts[p][x]++
		}
	}
	out := map[string][]float64{}
	for p, s := range sums {
		out[p] = make([]float64, MaxPct+1)
		for x := range s {
			out[p][x] = math.NaN()
			if counts[p][x] > 0 {
				out[p][x] = s[x] / float64(counts[p][x])
			}
		}
	}
	return out, nil
}
