package report

import (
	"bytes"
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

type failureGroup struct {
	key   string
	nodes []string
}

// groupFailures groups rejected nodes by identical failure sets, biggest
// group first (then by failures text).
func groupFailures(nodes []ExplainNode) []failureGroup {
	idx := map[string]int{}
	var gs []failureGroup
	for _, n := range nodes {
		if n.Feasible {
			continue
		}
		k := failureSet(n.failures())
		i, ok := idx[k]
		if !ok {
			i = len(gs)
			idx[k] = i
			gs = append(gs, failureGroup{key: k})
		}
		gs[i].nodes = append(gs[i].nodes, n.Node)
	}
	sort.SliceStable(gs, func(i, j int) bool {
		if len(gs[i].nodes) != len(gs[j].nodes) {
			return len(gs[i].nodes) > len(gs[j].nodes)
		}
		return gs[i].key < gs[j].key
	})
	return gs
}

// failureSet renders failures as "*Plugin: reason (unresolvable); Plugin2: ...".
func failureSet(fs []Failure) string {
	parts := make([]string, 0, len(fs))
	for _, f := range fs {
		s := prefilterIfEmpty(f.Plugin) + ": " + f.Reason
		if f.First {
			s = "*" + s
		}
		if f.Code == "UnschedulableAndUnresolvable" {
			s += " (unresolvable)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// maxListed is how many names a one-line list of the table shows before
// "+N more".
const maxListed = 5

func examples(nodes []string, n int) string {
	if len(nodes) <= n {
		return strings.Join(nodes, ", ")
	}
	return fmt.Sprintf("%s, +%d more", strings.Join(nodes[:n], ", "), len(nodes)-n)
}

func nodeIndex(e *Explanation) map[string]*ExplainNode {
	m := make(map[string]*ExplainNode, len(e.Nodes))
	for i := range e.Nodes {
		m[e.Nodes[i].Node] = &e.Nodes[i]
	}
	return m
}

// freeString renders free resources: cpu, memory, pods, then the rest by name.
func freeString(free map[string]int64) string {
	if len(free) == 0 {
		return "-"
	}
	keys := []string{}
	for _, k := range []string{"cpu", "memory", "pods"} {
		if _, ok := free[k]; ok {
			keys = append(keys, k)
		}
	}
	var rest []string
	for k := range free {
		if k != "cpu" && k != "memory" && k != "pods" {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	parts := make([]string, 0, len(free))
	for _, k := range append(keys, rest...) {
		parts = append(parts, fmt.Sprintf("%s %s", k, schedcore.FormatQuantity(v1.ResourceName(k), free[k])))
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func without(list []string, s string) []string {
	out := make([]string, 0, len(list))
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

// prefilterIfEmpty names the phase of a failure without a plugin: a node
// rejected by PreFilter or left out by a PreFilterResult.
func prefilterIfEmpty(plugin string) string {
	if plugin == "" {
		return "(PreFilter)"
	}
	return plugin
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// writeGap writes a gap's line at indent and its details under it.
func writeGap(b *bytes.Buffer, indent string, g Gap) {
	fmt.Fprintf(b, "%s%s\n", indent, gapLine(g))
	for _, d := range g.Details {
		fmt.Fprintf(b, "%s  - %s\n", indent, d)
	}
}

// gapLine is "Plugin: gap", or the gap alone when it is about no one
// plugin (the pods nominated to the node, which every filter counts).
func gapLine(g Gap) string {
	if g.Plugin == "" {
		return g.Gap
	}
	return g.Plugin + ": " + g.Gap
}

// stateLine says which cluster state was explained.
func stateLine(e *Explanation) string {
	switch e.State {
	case "at-turn":
		t := e.Turn
		if t == nil {
			return "at its turn in a dry-run"
		}
		s := "at its turn in a dry-run: " + turnWhen(t)
		if t.Node != "" {
			return s + "; the dry-run places it on " + t.Node
		}
		return s + "; the dry-run leaves it unschedulable"
	case "as-listed":
		if e.Ahead == 0 {
			return "as listed (no pending pod is ahead of it in the queue)"
		}
		s := fmt.Sprintf("as listed, without the %s ahead of it in the queue, which a dry-run places first", plural(e.Ahead, "pending pod"))
		if e.AtTurn == nil {
			s += " (it may then answer otherwise: --at-turn)"
		}
		return s
	}
	return ""
}

// turnWhen is "attempt 1, after 7 placements (and 1 eviction)".
func turnWhen(t *ExplainTurn) string {
	if t.PlacedBefore == 0 && t.EvictedBefore == 0 {
		return fmt.Sprintf("attempt %d, nothing placed before it", t.Attempt)
	}
	s := fmt.Sprintf("attempt %d, after %s", t.Attempt, plural(t.PlacedBefore, "placement"))
	if t.EvictedBefore > 0 {
		s += " and " + plural(t.EvictedBefore, "eviction")
	}
	return s
}

// turnCheckLine says whether a dry-run agrees with the explanation as
// listed at the pod's turn (Explanation.AtTurn), and whether that is
// agreement.
func turnCheckLine(e *Explanation) (string, bool) {
	c := e.AtTurn
	switch {
	case c == nil:
		return "", true
	case !c.Checked:
		return "not checked: " + c.Skipped + "; --at-turn runs it", true
	case c.NeverAttempted != "" && c.Agrees:
		return "agrees: it never gets a scheduling cycle there either (" + c.NeverAttempted + ")", true
	case c.NeverAttempted != "":
		return "disagrees: it never gets a scheduling cycle there (" + c.NeverAttempted + ")", false
	}
	t := c.Turn
	at := "at its turn in the dry-run (" + turnWhen(t) + ")"
	const how = " (--at-turn explains that state)"
	switch {
	case !c.Agrees && t.Node == "":
		return "disagrees: " + at + " it is unschedulable: " + c.Message + how, false
	case !c.Agrees:
		return "disagrees: " + at + " it is placed on " + t.Node + how, false
	case t.Node == "":
		return "agrees: " + at + " it is unschedulable too", true
	case t.Node == e.Selected:
		return "agrees: " + at + " it is placed on " + t.Node + " too", true
	}
	return "agrees it is schedulable: " + at + " it is placed on " + t.Node + ", not " + e.Selected + " (the pods placed before it change the scores; " + how[2:], true
}
