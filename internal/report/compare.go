package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// CompareFormats are the -o formats of compare.
var CompareFormats = []string{"table", "json", "yaml"}

// compareMoves bounds the pods listed per run in the table.
const compareMoves = 10

// WriteCompare renders a comparison: a table with one column per
// configuration and the differences from the first, or the documented
// JSON/YAML.
func WriteCompare(w io.Writer, r *Compare, format string) error {
	switch format {
	case "json", "yaml":
		return writeDocument(w, r, format)
	case "table", "":
		return writeCompareTable(w, r)
	}
	return fmt.Errorf("unknown output format %q", format)
}

func writeCompareTable(w io.Writer, r *Compare) error {
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	row := func(label string, cell func(CompareRun) string) {
		cells := make([]string, 0, len(r.Runs))
		for _, run := range r.Runs {
			cells = append(cells, cell(run))
		}
		fmt.Fprintf(tw, "%s\t%s\n", label, strings.Join(cells, "\t"))
	}
	row("", func(run CompareRun) string { return strings.ToUpper(run.Name) })
	row("pods placed", func(run CompareRun) string { return fmt.Sprint(run.Stats.Placed) })
	row("pods unschedulable", func(run CompareRun) string { return fmt.Sprint(run.Stats.Unschedulable) })
	if len(r.Runs) > 0 {
		for k, rs := range r.Runs[0].Stats.Resources {
			stat := func(f func(CompareResourceStats) string) func(CompareRun) string {
				return func(run CompareRun) string {
					if k < len(run.Stats.Resources) {
						return f(run.Stats.Resources[k])
					}
					return "-"
				}
			}
			row(rs.Name+" utilisation", stat(func(s CompareResourceStats) string { return percent(s.Utilisation) }))
			row(rs.Name+" imbalance (std dev)", stat(func(s CompareResourceStats) string { return fmt.Sprintf("%.3f", s.Imbalance) }))
			row(rs.Name+" fragmentation", stat(func(s CompareResourceStats) string { return percent(s.Fragmentation) }))
		}
		if r.Runs[0].Stats.WaitP50Seconds != nil {
			row("wait p50", func(run CompareRun) string { return seconds(*run.Stats.WaitP50Seconds) })
			row("wait p99", func(run CompareRun) string { return seconds(*run.Stats.WaitP99Seconds) })
		}
	}
	row("nodes used", func(run CompareRun) string { return fmt.Sprint(run.Stats.NodesUsed) })
	groups := false
	for _, run := range r.Runs {
		groups = groups || run.Stats.PodGroups != nil
	}
	if groups {
		group := func(f func(*CompareGroupStats) int) func(CompareRun) string {
			return func(run CompareRun) string {
				if run.Stats.PodGroups == nil {
					return "0"
				}
				return fmt.Sprint(f(run.Stats.PodGroups))
			}
		}
		row("pod groups scheduled", group(func(g *CompareGroupStats) int { return g.Scheduled }))
		row("pod groups with members pending", group(func(g *CompareGroupStats) int { return g.Pending }))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range r.Diff.Runs {
		fmt.Fprintf(w, "\n%s vs %s: %d pods land on other nodes, %d became schedulable, %d became unschedulable\n",
			d.Run, r.Diff.Baseline, len(d.Moved), len(d.BecameSchedulable), len(d.BecameUnschedulable))
		if len(d.Moved)+len(d.BecameSchedulable)+len(d.BecameUnschedulable) == 0 {
			continue
		}
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  POD\t%s\t%s\n", strings.ToUpper(r.Diff.Baseline), strings.ToUpper(d.Run))
		n := 0
		list := func(ms []CompareMove) {
			for _, m := range ms {
				if n == compareMoves {
					return
				}
				fmt.Fprintf(tw, "  %s\t%s\t%s\n", m.Pod, orUnschedulable(m.From), orUnschedulable(m.To))
				n++
			}
		}
		list(d.BecameUnschedulable)
		list(d.BecameSchedulable)
		list(d.Moved)
		if err := tw.Flush(); err != nil {
			return err
		}
		if total := len(d.Moved) + len(d.BecameSchedulable) + len(d.BecameUnschedulable); total > n {
			fmt.Fprintf(w, "  ... %d more (-o json lists them all)\n", total-n)
		}
	}
	return nil
}

func orUnschedulable(node string) string {
	if node == "" {
		return "<unschedulable>"
	}
	return node
}
