package fgd

import (
	"compress/gzip"
	"embed"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The artifact's per-seed results (experiments/analysis/expected_results/
// analysis_{allo,frag}_discrete.csv of its commit 8f3d641, gzipped, unchanged;
// Apache License 2.0, see paper/README.md): for each of its 17 workloads,
// policy and seed 42..51, the value at every arrived percentage 0..130.
//
//go:embed paper/*.csv.gz
var paperFiles embed.FS

// PaperPolicies maps the artifact's policy directories to the table's rows.
var PaperPolicies = []struct{ Dir, Name string }{
	{"01-Random", "Random"}, {"02-DotProd", "DotProd"}, {"03-GpuClustering", "GpuClustering"},
	{"04-GpuPacking", "GpuPacking"}, {"05-BestFit", "BestFit"}, {"06-FGD", "FGD"},
}

// DefaultWorkload is the artifact's name of the trace the paper's
// headline table is measured on.
const DefaultWorkload = "openb_pod_list_default"

// PaperCurves are the paper's mean curves per policy: allocation and
// fragmentation ratios (%) at 0..130% arrived, NaN where a seed lacks a
// value.
type PaperCurves struct {
	Alloc, Frag map[string][]float64
}

// LoadPaper reads the embedded results of the default workload and
// averages the seeds.
func LoadPaper() (*PaperCurves, error) { return LoadExpected(DefaultWorkload) }

// LoadExpected reads the embedded results of one of the artifact's
// workloads ("openb_pod_list_gpushare40") and averages the seeds.
func LoadExpected(workload string) (*PaperCurves, error) {
	alloc, err := readPaper("paper/analysis_allo_discrete.csv.gz", workload)
	if err != nil {
		return nil, err
	}
	frag, err := readPaper("paper/analysis_frag_discrete.csv.gz", workload)
	if err != nil {
		return nil, err
	}
	return &PaperCurves{Alloc: alloc, Frag: frag}, nil
}

// ExpectedWorkloads lists the artifact's workloads, in its results' order.
func ExpectedWorkloads() ([]string, error) {
	var out []string
	err := eachPaperRow("paper/analysis_allo_discrete.csv.gz", func(col map[string]int, row []string) error {
		if w := row[col["workload"]]; len(out) == 0 || out[len(out)-1] != w {
			out = append(out, w)
		}
		return nil
	})
	return out, err
}

// eachPaperRow calls fn with every row of an embedded results file and
// its header's columns.
func eachPaperRow(name string, fn func(col map[string]int, row []string) error) error {
	f, err := paperFiles.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	r := csv.NewReader(z)
	head, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	for _, c := range []string{"workload", "sc_policy"} {
		if _, ok := col[c]; !ok {
			return fmt.Errorf("%s: no column %q", name, c)
		}
	}
	for {
		row, err := r.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := fn(col, row); err != nil {
			return err
		}
	}
}

func readPaper(name, workload string) (map[string][]float64, error) {
	dirs := map[string]string{}
	for _, p := range PaperPolicies {
		dirs[p.Dir] = p.Name
	}
	sums := map[string][]float64{}
	counts := map[string][]int{}
	err := eachPaperRow(name, func(col map[string]int, row []string) error {
		if row[col["workload"]] != workload {
			return nil
		}
		p, ok := dirs[row[col["sc_policy"]]]
		if !ok {
			return fmt.Errorf("%s: unknown policy %q", name, row[col["sc_policy"]])
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
				return fmt.Errorf("%s: %s %s at %d: %w", name, workload, p, x, err)
			}
			sums[p][x] += v
			counts[p][x]++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(sums) == 0 {
		return nil, fmt.Errorf("%s: no results for workload %q", name, workload)
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
