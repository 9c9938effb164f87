package sweep

import (
	_ "embed"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/kubectl-sched/kubectl-sched/internal/replay"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
)

// Formats are the -o formats of sweep.
var Formats = []string{"table", "json", "csv"}

// WriteSweep renders a sweep's merged results: table (one row per cell,
// its axes and its summary), json (the documented Merged) or csv
// (the table's numbers, unrounded).
func WriteSweep(w io.Writer, m *Merged, format string) error {
	switch format {
	case "json":
		return writeJSON(w, m)
	case "csv", "table", "":
	default:
		return fmt.Errorf("unknown output format %q", format)
	}
	switch m.Verb {
	case VerbDryRun:
		return writeDryRunSweep(w, m, format)
	case VerbCapacity:
		return writeCapacitySweep(w, m, format)
	}
	rows, resources, err := sweepRows(m)
	if err != nil {
		return err
	}
	if format == "csv" {
		return writeSweepCSV(w, rows, resources)
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprint(tw, "TRACE\tCONFIG\tGATES\tSEED\tPLACED\tPENDING\tWAIT P99\tNODES USED")
	for _, r := range resources {
		fmt.Fprintf(tw, "\t%s ALLOC\t%s FRAG", strings.ToUpper(r), strings.ToUpper(r))
	}
	withFGD := hasFGD(rows)
	if withFGD {
		fmt.Fprint(tw, "\tGPU ALLOC@100%\tGPU ALLOC@130%\tGPU FRAG@100%\tGPU FRAG@130%")
	}
	fmt.Fprintln(tw)
	for _, row := range rows {
		s := row.rec.Summary
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%d", row.axes.Trace, row.axes.Config, row.axes.FeatureGates, seedText(row.axes.Seed), s.Placed, s.Pending, report.Seconds(s.WaitP99Seconds), s.NodesUsed)
		for _, r := range resources {
			if rs, ok := row.res[r]; ok {
				fmt.Fprintf(tw, "\t%s\t%s", report.Percent(rs.MeanAllocation), report.Percent(rs.MeanFragmentation))
			} else {
				fmt.Fprint(tw, "\t-\t-")
			}
		}
		if withFGD {
			for _, v := range fgdPoints(row.rec.FGD) {
				if v == nil {
					fmt.Fprint(tw, "\t-")
				} else {
					fmt.Fprintf(tw, "\t%.2f%%", *v)
				}
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

type sweepRow struct {
	id   string
	axes CellAxes
	rec  ReplayRecord
	res  map[string]replay.ResourceSummary
}

// sweepRows decodes the cells' records and lists the resources of every
// cell, in the order the cells first name them.
func sweepRows(m *Merged) ([]sweepRow, []string, error) {
	rows := make([]sweepRow, 0, len(m.Cells))
	var resources []string
	seen := map[string]bool{}
	for _, c := range m.Cells {
		row := sweepRow{id: c.ID, axes: c.Axes, res: map[string]replay.ResourceSummary{}}
		if err := json.Unmarshal(c.Result, &row.rec); err != nil {
			return nil, nil, fmt.Errorf("cell %s: decoding its result: %w", c.ID, err)
		}
		for _, r := range row.rec.Summary.Resources {
			row.res[r.Name] = r
			if !seen[r.Name] {
				seen[r.Name] = true
				resources = append(resources, r.Name)
			}
		}
		rows = append(rows, row)
	}
	return rows, resources, nil
}

// hasFGD says whether some cell is an FGD experiment.
func hasFGD(rows []sweepRow) bool {
	for _, r := range rows {
		if r.rec.FGD != nil {
			return true
		}
	}
	return false
}

// fgdPoints are an FGD cell's allocation at 100% and 130% arrived, then
// its fragmentation there (nil where not measured, or not an FGD cell).
func fgdPoints(f *FGDRecord) [4]*float64 {
	var out [4]*float64
	if f == nil {
		return out
	}
	at := func(v []*float64, x int) *float64 {
		if x < len(v) {
			return v[x]
		}
		return nil
	}
	return [4]*float64{at(f.Alloc, 100), at(f.Alloc, 130), at(f.Frag, 100), at(f.Frag, 130)}
}

func seedText(s *int64) string {
	if s == nil {
		return "-"
	}
	return strconv.FormatInt(*s, 10)
}

// writeSweepCSV writes one row per cell: id, the axes, the pod counts and
// waits, then per resource R: R_mean_allocation, R_peak_allocation,
// R_final_allocation, R_mean_fragmentation, R_imbalance (empty for a
// resource the cell's trace lacks).
func writeSweepCSV(w io.Writer, rows []sweepRow, resources []string) error {
	cw := csv.NewWriter(w)
	head := []string{"id", "trace", "config", "feature_gates", "seed", "pods", "placed", "running", "departed", "deleted", "preempted", "pending", "attempts", "failed_attempts", "wait_p50_seconds", "wait_p99_seconds", "wait_max_seconds", "nodes_used"}
	for _, r := range resources {
		head = append(head, r+"_mean_allocation", r+"_peak_allocation", r+"_final_allocation", r+"_mean_fragmentation", r+"_imbalance")
	}
	withFGD := hasFGD(rows)
	if withFGD {
		head = append(head, "fgd_failed", "fgd_gpu_alloc_100", "fgd_gpu_alloc_130", "fgd_gpu_frag_100", "fgd_gpu_frag_130")
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	d := strconv.Itoa
	for _, row := range rows {
		s := row.rec.Summary
		seed := ""
		if row.axes.Seed != nil {
			seed = strconv.FormatInt(*row.axes.Seed, 10)
		}
		rec := []string{row.id, row.axes.Trace, row.axes.Config, row.axes.FeatureGates, seed, d(s.Pods), d(s.Placed), d(s.Running), d(s.Departed), d(s.Deleted), d(s.Preempted), d(s.Pending), d(s.Attempts), d(s.FailedAttempts), f(s.WaitP50Seconds), f(s.WaitP99Seconds), f(s.WaitMaxSeconds), d(s.NodesUsed)}
		for _, r := range resources {
			if rs, ok := row.res[r]; ok {
				rec = append(rec, f(rs.MeanAllocation), f(rs.PeakAllocation), f(rs.FinalAllocation), f(rs.MeanFragmentation), f(rs.Imbalance))
			} else {
				rec = append(rec, "", "", "", "", "")
			}
		}
		if withFGD {
			failed := ""
			if row.rec.FGD != nil {
				failed = d(row.rec.FGD.Failed)
			}
			rec = append(rec, failed)
			for _, v := range fgdPoints(row.rec.FGD) {
				if v == nil {
					rec = append(rec, "")
				} else {
					rec = append(rec, f(*v))
				}
			}
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

//go:embed sweep.html
var sweepHTML string

type sweepHTMLData struct {
	Verb      string          `json:"verb"`
	Span      float64         `json:"span"`
	Buckets   int             `json:"buckets"`
	Resources []string        `json:"resources"`
	Cells     []sweepHTMLCell `json:"cells"`
}

type sweepHTMLCell struct {
	ID            string               `json:"id"`
	Axes          CellAxes             `json:"axes"`
	Summary       replay.Summary       `json:"summary"`
	Allocation    map[string][]float64 `json:"allocation"`
	Fragmentation map[string][]float64 `json:"fragmentation"`
	Pending       []float64            `json:"pending"`
}

// WriteSweepHTML writes one self-contained page with every cell's curves
// overlaid (allocation and fragmentation per resource, pending pods, from
// each cell's start) and the table of cells. Every cell must have recorded
// its series.
func WriteSweepHTML(w io.Writer, m *Merged) error {
	if m.Verb != VerbReplay {
		return fmt.Errorf("--html draws replays' curves: a %s study has none", m.Verb)
	}
	rows, resources, err := sweepRows(m)
	if err != nil {
		return err
	}
	d := sweepHTMLData{Verb: m.Verb, Buckets: report.HTMLBuckets, Resources: resources}
	for _, row := range rows {
		if row.rec.Series == nil {
			return fmt.Errorf("cell %s: no series recorded (the study's record needs series for --html)", row.id)
		}
		d.Span = max(d.Span, row.rec.Summary.End.Sub(row.rec.Summary.Start).Seconds())
	}
	if d.Resources == nil {
		d.Resources = []string{}
	}
	for _, row := range rows {
		s := row.rec.Series
		curve := func(v []float64) []float64 {
			return report.Round4(report.Curve{Times: s.Time, Values: v, Span: d.Span}.Buckets(report.HTMLBuckets))
		}
		c := sweepHTMLCell{ID: row.id, Axes: row.axes, Summary: row.rec.Summary, Allocation: map[string][]float64{}, Fragmentation: map[string][]float64{}, Pending: curve(floats(s.Pending))}
		for _, rs := range s.Resources {
			alloc, frag := make([]float64, len(rs.Capacity)), make([]float64, len(rs.Capacity))
			for i, cp := range rs.Capacity {
				if cp > 0 {
					alloc[i] = float64(rs.Allocated[i]) / float64(cp)
					frag[i] = rs.Fragmentation[i] / float64(cp)
				}
			}
			c.Allocation[rs.Name], c.Fragmentation[rs.Name] = curve(alloc), curve(frag)
		}
		d.Cells = append(d.Cells, c)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, strings.Replace(sweepHTML, "{{DATA}}", string(b), 1))
	return err
}

// writeJSON writes v as indented JSON and a newline, as the other verbs'
// -o json.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func floats(v []int) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// writeDryRunSweep writes a dryrun study's cells, one row each: the axes,
// the dry-run's counts and, per resource, the share of the nodes'
// allocatable requested after the run (the table) or the sums before and
// after (the CSV).
func writeDryRunSweep(w io.Writer, m *Merged, format string) error {
	type row struct {
		cell MergedCell
		rec  DryRunRecord
		res  map[string]ResourceUse
	}
	rows := make([]row, 0, len(m.Cells))
	var resources []string
	seen := map[string]bool{}
	for _, c := range m.Cells {
		r := row{cell: c, res: map[string]ResourceUse{}}
		if err := json.Unmarshal(c.Result, &r.rec); err != nil {
			return fmt.Errorf("cell %s: decoding its result: %w", c.ID, err)
		}
		for _, u := range r.rec.Summary.Resources {
			r.res[u.Name] = u
			if !seen[u.Name] {
				seen[u.Name] = true
				resources = append(resources, u.Name)
			}
		}
		rows = append(rows, r)
	}
	d := strconv.Itoa
	if format == "csv" {
		cw := csv.NewWriter(w)
		head := []string{"id", "trace", "config", "feature_gates", "seed", "nodes", "pending", "scheduled", "unschedulable", "evictions", "nodes_used"}
		for _, r := range resources {
			head = append(head, r+"_allocatable", r+"_requested_before", r+"_requested_after")
		}
		if err := cw.Write(head); err != nil {
			return err
		}
		for _, r := range rows {
			s, a := r.rec.Summary, r.cell.Axes
			seed := ""
			if a.Seed != nil {
				seed = strconv.FormatInt(*a.Seed, 10)
			}
			rec := []string{r.cell.ID, a.Trace, a.Config, a.FeatureGates, seed, d(s.Nodes), d(s.Pending), d(s.Scheduled), d(s.Unschedulable), d(s.Evictions), d(s.NodesUsed)}
			for _, name := range resources {
				if u, ok := r.res[name]; ok {
					rec = append(rec, strconv.FormatInt(u.Allocatable, 10), strconv.FormatInt(u.Before, 10), strconv.FormatInt(u.After, 10))
				} else {
					rec = append(rec, "", "", "")
				}
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprint(tw, "TRACE\tCONFIG\tGATES\tSEED\tNODES\tPENDING\tSCHEDULED\tUNSCHEDULABLE\tEVICTIONS\tNODES USED")
	for _, r := range resources {
		fmt.Fprintf(tw, "\t%s ALLOC", strings.ToUpper(r))
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		s, a := r.rec.Summary, r.cell.Axes
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d", a.Trace, a.Config, a.FeatureGates, seedText(a.Seed), s.Nodes, s.Pending, s.Scheduled, s.Unschedulable, s.Evictions, s.NodesUsed)
		for _, name := range resources {
			if u, ok := r.res[name]; ok && u.Allocatable > 0 {
				fmt.Fprintf(tw, "\t%s", report.Percent(float64(u.After)/float64(u.Allocatable)))
			} else {
				fmt.Fprint(tw, "\t-")
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// writeCapacitySweep writes a capacity study's counts, one row per cell
// and spec: the axes, the nodes (and template nodes added), the spec, its
// count and what ended it.
func writeCapacitySweep(w io.Writer, m *Merged, format string) error {
	type row struct {
		cell MergedCell
		rec  CapacityRecord
	}
	rows := make([]row, 0, len(m.Cells))
	for _, c := range m.Cells {
		r := row{cell: c}
		if err := json.Unmarshal(c.Result, &r.rec); err != nil {
			return fmt.Errorf("cell %s: decoding its result: %w", c.ID, err)
		}
		rows = append(rows, r)
	}
	d := strconv.Itoa
	if format == "csv" {
		cw := csv.NewWriter(w)
		if err := cw.Write([]string{"id", "trace", "workload", "config", "feature_gates", "nodes", "added_nodes", "complete", "spec", "kind", "unit", "replicas", "count", "limited_by", "method"}); err != nil {
			return err
		}
		for _, r := range rows {
			s, a := r.rec.Summary, r.cell.Axes
			for _, sp := range s.Specs {
				if err := cw.Write([]string{r.cell.ID, a.Trace, a.Workload, a.Config, a.FeatureGates, d(s.Nodes), d(s.AddedNodes), strconv.FormatBool(s.Complete), sp.Name, sp.Kind, sp.Unit, d(sp.Replicas), d(sp.Count), sp.LimitedBy, sp.Method}); err != nil {
					return err
				}
			}
		}
		cw.Flush()
		return cw.Error()
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "TRACE\tWORKLOAD\tCONFIG\tGATES\tNODES\tADDED\tSPEC\tREPLICAS\tCOUNT\tLIMITED BY\tCOMPLETE")
	for _, r := range rows {
		s, a := r.rec.Summary, r.cell.Axes
		for _, sp := range s.Specs {
			replicas := "-"
			if sp.Replicas > 0 {
				replicas = d(sp.Replicas)
			}
			count := d(sp.Count)
			if sp.Unit != "" && sp.Unit != "pods" {
				count += " " + sp.Unit
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s %s\t%s\t%s\t%s\t%s\n", a.Trace, a.Workload, a.Config, a.FeatureGates, s.Nodes, s.AddedNodes, sp.Kind, sp.Name, replicas, count, sp.LimitedBy, yesNo(s.Complete))
		}
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
