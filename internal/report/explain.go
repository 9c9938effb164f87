package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// ExplainView tunes the table rendering of an Explanation.
type ExplainView struct {
	// Wide (-o wide) and AllNodes (--all-nodes) list every rejected node
	// on its own line and every feasible node in the ranking.
	Wide, AllNodes bool
	// Node (--node) shows that one node in full detail.
	Node string
	// Top is how many feasible nodes the ranking shows (0 = 10).
	Top int
	// Styles colour the output (the zero value is plain text).
	Styles Styles
}

// Styles colour parts of the table output; nil functions leave text as it
// is. The CLI sets them (lipgloss) only when stdout is a terminal.
type Styles struct {
	Title, Good, Bad, Mark, Dim func(string) string
}

func apply(f func(string) string, s string) string {
	if f == nil {
		return s
	}
	return f(s)
}

// WriteExplain renders an explanation in the given format.
func WriteExplain(w io.Writer, e *Explanation, format string, v ExplainView) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(e, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(e)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "table", "wide", "":
		if format == "wide" {
			v.Wide = true
		}
		return writeExplainTable(w, e, v)
	}
	return fmt.Errorf("unknown output format %q", format)
}

// shortPlugin are column headers for score plugins.
var shortPlugin = map[string]string{
	"NodeResourcesFit":                "FIT",
	"NodeResourcesBalancedAllocation": "BALANCED",
	"TaintToleration":                 "TAINTS",
	"NodeAffinity":                    "NODE-AFFINITY",
	"InterPodAffinity":                "POD-AFFINITY",
	"PodTopologySpread":               "SPREAD",
	"ImageLocality":                   "IMAGES",
	"VolumeBinding":                   "VOLUMES",
}

func pluginColumn(p string) string {
	if s, ok := shortPlugin[p]; ok {
		return s
	}
	return strings.ToUpper(p)
}

func writeExplainTable(w io.Writer, e *Explanation, v ExplainView) error {
	st := v.Styles
	var b bytes.Buffer
	title := func(s string) { fmt.Fprintln(&b, apply(st.Title, s)) }

	state := "pending"
	switch {
	case e.Source == "file":
		state = "hypothetical, from file"
	case e.BoundNode != "":
		state = "bound to " + e.BoundNode + ", explained as if pending"
	}
	kv := tabwriter.NewWriter(&b, 0, 4, 1, ' ', 0)
	fmt.Fprintf(kv, "Pod:\t%s (%s)\n", e.Pod, state)
	fmt.Fprintf(kv, "Profile:\t%s\n", e.Profile)
	if line := stateLine(e); line != "" {
		fmt.Fprintf(kv, "State:\t%s\n", line)
	}
	if line, agrees := turnCheckLine(e); line != "" {
		style := st.Good
		if !agrees {
			style = st.Bad
		}
		fmt.Fprintf(kv, "Dry-run:\t%s\n", apply(style, line))
	}
	switch {
	case e.PreEnqueue != nil:
		fmt.Fprintf(kv, "Verdict:\t%s\n", apply(st.Bad, fmt.Sprintf("unschedulable: held out of the scheduling queue by %s (PreEnqueue, %s): no cycle runs", orDash(e.PreEnqueue.Plugin), e.PreEnqueue.Code)))
	case e.PreFilter.Code != "Success" && e.PreFilter.Code != "":
		fmt.Fprintf(kv, "Verdict:\t%s\n", apply(st.Bad, fmt.Sprintf("unschedulable: rejected at PreFilter by %s (%s)", orDash(e.PreFilter.Plugin), e.PreFilter.Code)))
	case e.NumFeasible == 0:
		fmt.Fprintf(kv, "Verdict:\t%s\n", apply(st.Bad, "unschedulable: no node passes the filters"))
	default:
		fmt.Fprintf(kv, "Verdict:\t%s\n", apply(st.Good, fmt.Sprintf("schedulable: %d of %d nodes feasible", e.NumFeasible, e.NumNodes)))
		sel := fmt.Sprintf("%s (score %d)", e.Selected, e.BestTotal)
		if len(e.TiedBest) > 1 {
			// One line: a handful of names and how many more (-o json
			// lists them all).
			sel += fmt.Sprintf(", tied with %s", examples(without(e.TiedBest, e.Selected), maxListed))
		}
		if e.NominatedNode != "" && e.Selected == e.NominatedNode {
			sel = fmt.Sprintf("%s (its nominated node: kube-scheduler tries it first and takes it, unscored, when it fits)", e.Selected)
		}
		fmt.Fprintf(kv, "Would be placed on:\t%s\n", sel)
	}
	if e.BoundNode != "" {
		fmt.Fprintf(kv, "Bound node:\t%s\n", boundLine(e))
	}
	if e.NominatedNode != "" {
		fmt.Fprintf(kv, "Nominated node:\t%s\n", e.NominatedNode)
	}
	if e.Message != "" {
		fmt.Fprintf(kv, "Message:\t%s\n", e.Message)
	}
	if e.PreFilter.Reason != "" {
		fmt.Fprintf(kv, "PreFilter:\t%s: %s\n", orDash(e.PreFilter.Plugin), e.PreFilter.Reason)
	}
	if p := e.Preemption; p != nil {
		fmt.Fprintf(kv, "Preemption:\t%s\n", preemptionLine(p))
	}
	if err := kv.Flush(); err != nil {
		return err
	}

	if v.Node != "" {
		for i := range e.Nodes {
			if e.Nodes[i].Node == v.Node {
				fmt.Fprintln(&b)
				writeNodeDetail(&b, e, &e.Nodes[i], st)
			}
		}
		_, err := w.Write(b.Bytes())
		return err
	}

	rejected := 0
	for i := range e.Nodes {
		if !e.Nodes[i].Feasible {
			rejected++
		}
	}
	if rejected > 0 {
		fmt.Fprintln(&b)
		if v.Wide || v.AllNodes {
			title(fmt.Sprintf("Rejected nodes (%d; * = the filter kube-scheduler reports):", rejected))
			tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tFAILURES")
			for _, n := range e.Nodes {
				if !n.Feasible {
					fmt.Fprintf(tw, "%s\t%s\n", n.Node, failureSet(n.failures()))
				}
			}
			_ = tw.Flush()
		} else {
			groups := groupFailures(e.Nodes)
			title(fmt.Sprintf("Rejected nodes (%d in %s of identical failures; * = the filter kube-scheduler reports; --all-nodes lists each):", rejected, plural(len(groups), "group")))
			tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "COUNT\tNODES\tFAILURES")
			for _, g := range groups {
				fmt.Fprintf(tw, "%d\t%s\t%s\n", len(g.nodes), examples(g.nodes, 3), g.key)
			}
			_ = tw.Flush()
		}
	}

	if len(e.Ranking) > 0 {
		fmt.Fprintln(&b)
		writeRanking(&b, e, v)
	}

	if len(e.Nearest) > 0 {
		fmt.Fprintln(&b)
		if e.NumFeasible == 0 {
			title("What would make it fit (nearest nodes):")
		} else {
			title("Nearest rejected nodes:")
		}
		byName := nodeIndex(e)
		for _, name := range e.Nearest {
			n := byName[name]
			if n == nil {
				continue
			}
			fmt.Fprintf(&b, "  %s (%s; free %s):\n", n.Node, plural(len(n.failures()), "failure"), freeString(n.detail().Free))
			for _, g := range n.detail().Gaps {
				writeGap(&b, "    ", g)
			}
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// preemptionLine says what DefaultPreemption would do: the node and its
// victims, or kube's message when it cannot help.
func preemptionLine(p *PreemptionOutcome) string {
	if p.Node == "" {
		return strings.TrimPrefix(p.Message, "preemption: ")
	}
	line := fmt.Sprintf("would nominate %s, evicting %s: %s", p.Node, plural(len(p.Victims), "pod"), examples(p.Victims, maxListed))
	if p.PDBViolations > 0 {
		line += fmt.Sprintf(" (%d of them violating a PodDisruptionBudget)", p.PDBViolations)
	}
	return line
}

func boundLine(e *Explanation) string {
	if e.BoundNodeRank == 0 {
		if n := nodeIndex(e)[e.BoundNode]; n != nil && !n.Feasible {
			return fmt.Sprintf("%s, which no longer passes the filters (%s)", e.BoundNode, failureSet(n.failures()))
		}
		return fmt.Sprintf("%s, which no longer passes the filters (--node %s shows why)", e.BoundNode, e.BoundNode)
	}
	s := fmt.Sprintf("%s, ranked %d of %d (score %d", e.BoundNode, e.BoundNodeRank, e.NumFeasible, deref(e.BoundNodeTotal))
	if e.BoundNodeRank > 1 && len(e.Ranking) > 0 {
		s += fmt.Sprintf(" vs %d on %s", e.BestTotal, e.Ranking[0])
	}
	return s + ")"
}

func writeRanking(b *bytes.Buffer, e *Explanation, v ExplainView) {
	top := v.Top
	if top <= 0 {
		top = 10
	}
	if v.Wide || v.AllNodes {
		top = len(e.Ranking)
	}
	top = min(top, len(e.Ranking))
	byName := nodeIndex(e)
	plugins := scoredPlugins(e)
	what := "weighted scores"
	if v.Wide {
		what = "weighted (raw) scores"
	}
	fmt.Fprintln(b, apply(v.Styles.Title, fmt.Sprintf("Score ranking (top %d of %d feasible; %s; --node N for one node's detail):", top, len(e.Ranking), what)))
	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	hdr := []string{"RANK", "NODE", "TOTAL"}
	for _, p := range plugins {
		hdr = append(hdr, pluginColumn(p))
	}
	fmt.Fprintln(tw, strings.Join(hdr, "\t"))
	for i := 0; i < top; i++ {
		n := byName[e.Ranking[i]]
		ns := n.scores()
		row := []string{fmt.Sprint(n.Rank), n.Node, fmt.Sprint(deref(ns.Total))}
		for _, p := range plugins {
			cell := fmt.Sprint(ns.Scores.Get(p))
			if v.Wide {
				cell += fmt.Sprintf(" (%d)", ns.RawScores.Get(p))
			}
			row = append(row, cell)
		}
		line := strings.Join(row, "\t")
		if n.Node == e.BoundNode {
			line += "\t<- bound here"
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()
	if bn := byName[e.BoundNode]; bn != nil && bn.Rank > top {
		fmt.Fprintf(b, "... %s (bound) ranks %d with %d\n", bn.Node, bn.Rank, deref(bn.scores().Total))
	}
}

// scoredPlugins are the score plugins that ran, heaviest weight first, then
// by name.
func scoredPlugins(e *Explanation) []string {
	set := map[string]bool{}
	for i := range e.Nodes {
		for _, p := range e.Nodes[i].scores().Scores.List() {
			set[p.Name] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		wi, wj := e.ScorePluginWeights[out[i]], e.ScorePluginWeights[out[j]]
		if wi != wj {
			return wi > wj
		}
		return out[i] < out[j]
	})
	return out
}

func writeNodeDetail(b *bytes.Buffer, e *Explanation, n *ExplainNode, st Styles) {
	if !n.Feasible {
		fmt.Fprintln(b, apply(st.Title, fmt.Sprintf("Node %s: %s", n.Node, apply(st.Bad, "rejected"))))
		tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  \tFILTER\tCODE\tREASON")
		for _, f := range n.failures() {
			mark := ""
			if f.First {
				mark = "*"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", mark, prefilterIfEmpty(f.Plugin), f.Code, f.Reason)
		}
		_ = tw.Flush()
		fmt.Fprintln(b, "  (* = the filter kube-scheduler stops at and reports)")
		if gaps := n.detail().Gaps; len(gaps) > 0 {
			fmt.Fprintln(b, "What would make it fit here:")
			for _, g := range gaps {
				writeGap(b, "  ", g)
			}
		}
	} else {
		head := fmt.Sprintf("Node %s: %s", n.Node, apply(st.Good, "feasible"))
		ns := n.scores()
		if ns.Total != nil {
			head += fmt.Sprintf(", rank %d of %d, total %d", n.Rank, e.NumFeasible, *ns.Total)
			if n.Rank > 1 {
				head += fmt.Sprintf(" (best: %s with %d)", e.Ranking[0], e.BestTotal)
			}
		}
		fmt.Fprintln(b, apply(st.Title, head))
		if ns.Scores.Len() > 0 {
			tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  PLUGIN\tRAW\tNORMALIZED\tWEIGHT\tWEIGHTED")
			ps := make([]string, 0, ns.Scores.Len())
			for _, p := range ns.Scores.List() {
				ps = append(ps, p.Name)
			}
			sort.Strings(ps)
			for _, p := range ps {
				fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%d\n", p, ns.RawScores.Get(p), ns.NormalizedScores.Get(p), e.ScorePluginWeights[p], ns.Scores.Get(p))
			}
			fmt.Fprintf(tw, "  total\t\t\t\t%d\n", deref(ns.Total))
			_ = tw.Flush()
		}
	}
	if free := n.detail().Free; len(free) > 0 {
		fmt.Fprintf(b, "Free on the node: %s\n", freeString(free))
	}
}
