package report

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// writeStructured writes v as indented JSON or as YAML; ok is false for a
// table format, and an unknown format is an error.
func writeStructured(w io.Writer, v any, format string) (ok bool, err error) {
	var b []byte
	switch format {
	case "json":
		if b, err = json.MarshalIndent(v, "", "  "); err == nil {
			b = append(b, '\n')
		}
	case "yaml":
		b, err = yaml.Marshal(v)
	case "table", "wide", "":
		return false, nil
	default:
		return true, fmt.Errorf("unknown output format %q", format)
	}
	if err != nil {
		return true, err
	}
	_, err = w.Write(b)
	return true, err
}

// topNodes is how many nodes the table lists per spec (-o wide: all).
const topNodes = 10

// WriteCapacity renders a capacity report: a table (wide: every node and
// its free resources), JSON or YAML.
func WriteCapacity(w io.Writer, r *Capacity, format string) error {
	if ok, err := writeStructured(w, r, format); ok {
		return err
	}
	wide := format == "wide"
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SPEC\tKIND\tCOUNT\tLIMITED BY\tMETHOD")
	for _, s := range r.Specs {
		count := fmt.Sprint(s.Count)
		if s.Replicas > 0 {
			count = fmt.Sprintf("%d/%d", s.Count, s.Replicas)
		}
		switch s.Unit {
		case "groups":
			count += fmt.Sprintf(" groups of %d", s.PodsPerGroup)
		case "workloads":
			count += fmt.Sprintf(" workloads of %d", s.PodsPerGroup)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Kind, count, s.LimitedBy, s.Method)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	nodes := fmt.Sprintf("%d nodes", r.Nodes)
	if r.AddedNodes > 0 || r.NodeTemplate != "" {
		nodes += fmt.Sprintf(" + %d from template %s", r.AddedNodes, r.NodeTemplate)
	}
	fmt.Fprintf(w, "\nCluster: %s (%s)\n", nodes, r.Source)
	if r.MinNodes != nil {
		writeMinNodes(w, r)
	}
	for i := range r.Specs {
		writeSpecDetail(w, &r.Specs[i], r.Leftover.Nodes, wide)
	}
	writeLeftover(w, r.Leftover)
	return nil
}

func writeMinNodes(w io.Writer, r *Capacity) {
	m := r.MinNodes
	var tried []string
	for _, e := range m.Evaluations {
		mark := ""
		if e.Enough {
			mark = " (enough)"
		}
		tried = append(tried, fmt.Sprintf("%d -> %s%s", e.Nodes, joinInts(e.Counts), mark))
	}
	if m.Reachable {
		fmt.Fprintf(w, "\nNodes needed: %d of template %s (%s, monotonicity %s)\n", m.NodesNeeded, r.NodeTemplate, m.Method, m.Monotonicity)
	} else if m.Unreachable {
		fmt.Fprintf(w, "\nNodes needed: not reachable with template %s: %s\n", r.NodeTemplate, m.Message)
	} else {
		fmt.Fprintf(w, "\nNodes needed: not found with template %s: %s\n", r.NodeTemplate, m.Message)
	}
	fmt.Fprintf(w, "Tried (template nodes -> count): %s\n", strings.Join(tried, ", "))
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, "+")
}

func writeSpecDetail(w io.Writer, s *CapacitySpec, free map[string]map[string]int64, wide bool) {
	unit := "pods"
	if s.Unit == "groups" || s.Unit == "workloads" {
		unit = fmt.Sprintf("%s (%d pods)", s.Unit, s.Count*s.PodsPerGroup)
	}
	fmt.Fprintf(w, "\n%s: %d %s\n", s.Name, s.Count, unit)
	writeCopyGroups(w, s.Groups)
	if len(s.Zones) > 0 && s.Count > 0 {
		writeCounts(w, "ZONE", s.Zones)
	}
	labels := make([]string, 0, len(s.Labels))
	for l := range s.Labels {
		labels = append(labels, l)
	}
	sort.Strings(labels)
	for _, l := range labels {
		writeCounts(w, strings.ToUpper(l), s.Labels[l])
	}
	if s.NodesNote != "" {
		fmt.Fprintf(w, "  Where they land: %s\n", s.NodesNote)
	}
	if len(s.Nodes) > 0 {
		limit := topNodes
		if wide {
			limit = 0
		}
		writeNodeCounts(w, s.Nodes, free, limit, wide)
	}
	if s.StoppedBy != "" {
		fmt.Fprintf(w, "  The next one fits nowhere: %s\n", s.StoppedBy)
	}
	writeNextCopy(w, s.NextCopy)
	if len(s.Nearest) > 0 {
		fmt.Fprintln(w, "  Nearest nodes, and what would make it fit there:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, n := range s.Nearest {
			gaps := n.Gaps
			if len(gaps) == 0 {
				gaps = n.Reasons
			}
			for i, g := range gaps {
				name := n.Node
				if i > 0 {
					name = ""
				}
				fmt.Fprintf(tw, "    %s\t%s\n", name, g)
				if len(n.Gaps) > 0 && i < len(n.Details) {
					for _, d := range n.Details[i] {
						fmt.Fprintf(tw, "    \t  - %s\n", d)
					}
				}
			}
		}
		_ = tw.Flush()
	}
	if len(s.NotPlaced) > 0 {
		fmt.Fprintf(w, "  Does not fit on %d node(s) it targets:\n", len(s.NotPlaced))
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, n := range s.NotPlaced {
			msg := n.Message
			if !wide {
				msg = ShortReason(msg)
			}
			fmt.Fprintf(tw, "    %s\t%s\n", n.Node, msg)
		}
		_ = tw.Flush()
	}
}

// writeCounts writes a two-column table of counts by key, largest first.
func writeCounts(w io.Writer, header string, m map[string]int) {
	keys := sortedByCount(m)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  %s\tPODS\n", header)
	for _, k := range keys {
		fmt.Fprintf(tw, "  %s\t%d\n", orNone(k), m[k])
	}
	_ = tw.Flush()
}

func writeNodeCounts(w io.Writer, m map[string]int, free map[string]map[string]int64, limit int, wide bool) {
	keys := sortedByCount(m)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if wide {
		fmt.Fprintln(tw, "  NODE\tPODS\tFREE CPU\tFREE MEMORY\tFREE PODS")
	} else {
		fmt.Fprintln(tw, "  NODE\tPODS")
	}
	more := 0
	for i, k := range keys {
		if limit > 0 && i == limit {
			more = len(keys) - limit
			break
		}
		if wide {
			f := free[k]
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s\t%d\n", k, m[k], humanQuantity("cpu", f["cpu"]), humanQuantity("memory", f["memory"]), f["pods"])
		} else {
			fmt.Fprintf(tw, "  %s\t%d\n", k, m[k])
		}
	}
	_ = tw.Flush()
	if more > 0 {
		fmt.Fprintf(w, "  (%d more nodes: -o wide lists them)\n", more)
	}
}

func sortedByCount(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func writeLeftover(w io.Writer, l Leftover) {
	if len(l.Allocatable) == 0 {
		return
	}
	names := []string{"cpu", "memory", "pods"}
	var more []string
	for k := range l.Allocatable {
		if k != "cpu" && k != "memory" && k != "pods" {
			more = append(more, k)
		}
	}
	sort.Strings(more)
	var parts []string
	for _, k := range append(names, more...) {
		a := l.Allocatable[k]
		parts = append(parts, fmt.Sprintf("%s %s of %s", k, humanQuantity(k, l.Free[k]), humanQuantity(k, a)))
	}
	note := ""
	if l.Note != "" {
		note = " (" + l.Note + ")"
	}
	fmt.Fprintf(w, "\nLeft over (free of allocatable, all nodes%s): %s\n", note, strings.Join(parts, ", "))
}

// humanQuantity rounds large cpu and byte amounts for reading (the JSON
// keeps exact values): cores and Gi/Ti with one decimal.
func humanQuantity(name string, v int64) string {
	const gi, ti = 1 << 30, 1 << 40
	abs := v
	if abs < 0 {
		abs = -abs
	}
	switch {
	case name == "cpu" && abs >= 10000:
		return fmt.Sprintf("%.1f", float64(v)/1000)
	case (name == "memory" || name == "ephemeral-storage") && abs >= ti:
		return fmt.Sprintf("%.1fTi", float64(v)/ti)
	case (name == "memory" || name == "ephemeral-storage") && abs >= 10*gi:
		return fmt.Sprintf("%.1fGi", float64(v)/gi)
	}
	return schedcore.FormatQuantity(v1.ResourceName(name), v)
}

// writeCopyGroups says what one copy of a pod-group-cycle spec is.
func writeCopyGroups(w io.Writer, groups []CapacityGroup) {
	for _, g := range groups {
		policy := "basic"
		if g.Policy == "gang" {
			policy = fmt.Sprintf("gang, minCount %d", g.MinCount)
		}
		topo := ""
		if g.TopologyKey != "" {
			topo = ", in one " + g.TopologyKey + " domain"
		}
		fmt.Fprintf(w, "  Each copy: PodGroup %s (%s, %d pods%s), scheduled by the pod-group cycle\n", g.Name, policy, g.Members, topo)
	}
}

// writeNextCopy says, group by group, what the pod-group cycle did with
// the copy that stopped the count, and each topology domain it tried.
func writeNextCopy(w io.Writer, out []CapacityGroupOutcome) {
	if len(out) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, o := range out {
		fmt.Fprintf(tw, "    %s\t%d/%d bound\t%s\n", o.PodGroup, o.Bound, o.Members, o.Message)
		if o.Note != "" {
			fmt.Fprintf(tw, "    \t\t%s\n", o.Note)
		}
		if len(o.Shortfall) > 0 {
			fmt.Fprintf(tw, "    \tall nodes\tshort of at least %s\n", ShortfallText(o.Shortfall))
		}
		for _, p := range o.Placements {
			result := p.Message
			if p.Feasible {
				result = "feasible"
			}
			fmt.Fprintf(tw, "    \t%s (%d nodes)\t%s\n", p.Name, p.Nodes, result)
			if len(p.Shortfall) > 0 {
				fmt.Fprintf(tw, "    \t\tshort of at least %s\n", ShortfallText(p.Shortfall))
			}
		}
	}
	_ = tw.Flush()
}
