package report

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

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
