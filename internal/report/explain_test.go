package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sample() *Explanation {
	total := int64(412)
	return &Explanation{
		Pod: "shop/web", Profile: "default-scheduler", Source: "snapshot",
		PreFilter: PreFilterOutcome{Code: "Success"}, NumNodes: 3, NumFeasible: 1,
		ScorePluginWeights: map[string]int64{"NodeResourcesFit": 1, "TaintToleration": 3},
		Nodes: []ExplainNode{
			{Node: "a", NodeFailures: &NodeFailures{Failures: []Failure{{Plugin: "NodeResourcesFit", Reason: "Insufficient cpu", Code: "Unschedulable", First: true}}}},
			{Node: "b", NodeFailures: &NodeFailures{Failures: []Failure{{Plugin: "NodeResourcesFit", Reason: "Insufficient cpu", Code: "Unschedulable", First: true}}}},
			{Node: "c", Feasible: true, Rank: 1, NodeScores: &NodeScores{Total: &total, Scores: ScoreMapOf(map[string]int64{"NodeResourcesFit": 112, "TaintToleration": 300})}},
		},
		Ranking: []string{"c"}, Selected: "c", TiedBest: []string{"c"}, BestTotal: 412, Nearest: []string{},
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestExplainTableColoursOnlyWithStyles(t *testing.T) {
	var plain, coloured bytes.Buffer
	if err := WriteExplain(&plain, sample(), "table", ExplainView{}); err != nil {
		t.Fatal(err)
	}
	bold := func(s string) string { return "\x1b[1m" + s + "\x1b[0m" }
	st := Styles{Title: bold, Good: bold, Bad: bold, Mark: bold, Dim: bold}
	if err := WriteExplain(&coloured, sample(), "table", ExplainView{Styles: st}); err != nil {
		t.Fatal(err)
	}
	if ansi.MatchString(plain.String()) {
		t.Error("plain output has escape codes")
	}
	if !ansi.MatchString(coloured.String()) {
		t.Error("styled output has no escape codes")
	}
	if d := cmp.Diff(plain.String(), ansi.ReplaceAllString(coloured.String(), "")); d != "" {
		t.Errorf("styles change more than colours (-plain +stripped):\n%s", d)
	}
}

func TestExplainTableGroupsIdenticalFailures(t *testing.T) {
	var b bytes.Buffer
	if err := WriteExplain(&b, sample(), "table", ExplainView{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "2      a, b   *NodeResourcesFit: Insufficient cpu\n") {
		t.Errorf("no group of a and b:\n%s", b.String())
	}
	b.Reset()
	if err := WriteExplain(&b, sample(), "table", ExplainView{AllNodes: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "a     *NodeResourcesFit: Insufficient cpu\nb     *NodeResourcesFit") {
		t.Errorf("--all-nodes does not list a and b:\n%s", b.String())
	}
}

func TestExplainUnknownFormat(t *testing.T) {
	if err := WriteExplain(&bytes.Buffer{}, sample(), "xml", ExplainView{}); err == nil {
		t.Error("no error for xml")
	}
}

func TestExplainTableSummaryLines(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Explanation)
		want string
	}{
		{"the best node", func(*Explanation) {}, "Would be placed on: c (score 412)\n"},
		{"the nominated node kube tries first", func(e *Explanation) { e.NominatedNode = "c" },
			"Would be placed on: c (its nominated node: kube-scheduler tries it first and takes it, unscored, when it fits)\nNominated node:     c\n"},
		{"a gap about no one plugin has no plugin prefix", func(e *Explanation) {
			e.Nearest = []string{"a"}
			e.Nodes[0].NodeDetail = &NodeDetail{}
			e.Nodes[0].Gaps = []Gap{{Gap: "preemption nominated this node for ns/x (priority 9): the filters count them as running here"}, {Plugin: "NodeResourcesFit", Gap: "needs 1 cpu more"}}
		}, "    preemption nominated this node for ns/x (priority 9): the filters count them as running here\n    NodeResourcesFit: needs 1 cpu more\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := sample()
			tt.edit(e)
			var b bytes.Buffer
			if err := WriteExplain(&b, e, "table", ExplainView{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), tt.want) {
				t.Errorf("table lacks %q:\n%s", tt.want, b.String())
			}
		})
	}
}

// TestExplainTableCapsOneLineLists: 999 nodes tied for the best score, or
// many victims, fit on one line: a few names and how many more.
func TestExplainTableCapsOneLineLists(t *testing.T) {
	e := sample()
	e.NumFeasible = 1000
	e.TiedBest = []string{"c"}
	for i := range 999 {
		e.TiedBest = append(e.TiedBest, fmt.Sprintf("n%03d", i))
	}
	var b bytes.Buffer
	if err := WriteExplain(&b, e, "table", ExplainView{}); err != nil {
		t.Fatal(err)
	}
	if want := "Would be placed on: c (score 412), tied with n000, n001, n002, n003, n004, +994 more\n"; !strings.Contains(b.String(), want) {
		t.Errorf("no capped tie line %q in:\n%s", want, b.String())
	}
	e = sample()
	e.NumFeasible = 0
	e.Preemption = &PreemptionOutcome{Node: "a", Victims: []string{"ns/v1", "ns/v2", "ns/v3", "ns/v4", "ns/v5", "ns/v6", "ns/v7"}}
	b.Reset()
	if err := WriteExplain(&b, e, "table", ExplainView{}); err != nil {
		t.Fatal(err)
	}
	if want := "would nominate a, evicting 7 pods: ns/v1, ns/v2, ns/v3, ns/v4, ns/v5, +2 more"; !strings.Contains(b.String(), want) {
		t.Errorf("no capped victims %q in:\n%s", want, b.String())
	}
}

// TestStateLineSaysWhichStateWasExplained: the State line of the table
// says whether pending pods were placed before the pod, and how many.
func TestStateLineSaysWhichStateWasExplained(t *testing.T) {
	tests := []struct {
		name string
		e    Explanation
		want string
	}{
		{"as listed, first in the queue", Explanation{State: "as-listed"}, "as listed (no pending pod is ahead of it in the queue)"},
		{"as listed, one ahead", Explanation{State: "as-listed", Ahead: 1},
			"as listed, without the 1 pending pod ahead of it in the queue, which a dry-run places first (it may then answer otherwise: --at-turn)"},
		{"as listed, several ahead", Explanation{State: "as-listed", Ahead: 14},
			"as listed, without the 14 pending pods ahead of it in the queue, which a dry-run places first (it may then answer otherwise: --at-turn)"},
		{"at its turn, placed", Explanation{State: "at-turn", Turn: &ExplainTurn{Attempt: 1, PlacedBefore: 3, Node: "n1"}},
			"at its turn in a dry-run: attempt 1, after 3 placements; the dry-run places it on n1"},
		{"at its turn after preemption", Explanation{State: "at-turn", Turn: &ExplainTurn{Attempt: 2, PlacedBefore: 1, EvictedBefore: 1, Node: "n1"}},
			"at its turn in a dry-run: attempt 2, after 1 placement and 1 eviction; the dry-run places it on n1"},
		{"at its turn, first", Explanation{State: "at-turn", Turn: &ExplainTurn{Attempt: 1}},
			"at its turn in a dry-run: attempt 1, nothing placed before it; the dry-run leaves it unschedulable"},
		{"no state (an older document)", Explanation{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := stateLine(&tt.e); got != tt.want {
				t.Errorf("stateLine = %q, want %q", got, tt.want)
			}
			var b strings.Builder
			if err := WriteExplain(&b, &tt.e, "table", ExplainView{}); err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(b.String(), "State:"); has != (tt.want != "") {
				t.Errorf("table has a State line: %v, want %v:\n%s", has, tt.want != "", b.String())
			}
		})
	}
}

// TestTurnCheckLineSaysWhetherTheDryRunAgrees: the Dry-run line of the
// table, for each outcome of explain's check at the pod's turn.
func TestTurnCheckLineSaysWhetherTheDryRunAgrees(t *testing.T) {
	turn := func(placed, evicted int, node string) *ExplainTurn {
		return &ExplainTurn{Attempt: 1 + evicted, PlacedBefore: placed, EvictedBefore: evicted, Node: node}
	}
	tests := []struct {
		name       string
		selected   string
		c          *TurnCheck
		want       string
		wantAgrees bool
	}{
		{"not checked: no line", "n1", nil, "", true},
		{"over the bound", "n1", &TurnCheck{Skipped: "too big"}, "not checked: too big; --at-turn runs it", true},
		{"the same node", "n1", &TurnCheck{Checked: true, Agrees: true, Turn: turn(3, 0, "n1")},
			"agrees: at its turn in the dry-run (attempt 1, after 3 placements) it is placed on n1 too", true},
		{"another node", "n1", &TurnCheck{Checked: true, Agrees: true, Turn: turn(3, 0, "n2")},
			"agrees it is schedulable: at its turn in the dry-run (attempt 1, after 3 placements) it is placed on n2, not n1 (the pods placed before it change the scores; --at-turn explains that state)", true},
		{"unschedulable both ways", "", &TurnCheck{Checked: true, Agrees: true, Turn: turn(0, 0, ""), Message: "0/2 nodes are available."},
			"agrees: at its turn in the dry-run (attempt 1, nothing placed before it) it is unschedulable too", true},
		{"fits as listed, not at its turn", "n1", &TurnCheck{Checked: true, Turn: turn(1, 0, ""), Message: "0/2 nodes are available: 2 Insufficient cpu."},
			"disagrees: at its turn in the dry-run (attempt 1, after 1 placement) it is unschedulable: 0/2 nodes are available: 2 Insufficient cpu. (--at-turn explains that state)", false},
		{"placed at its turn after preemption", "", &TurnCheck{Checked: true, Turn: turn(0, 1, "n1")},
			"disagrees: at its turn in the dry-run (attempt 2, after 0 placements and 1 eviction) it is placed on n1 (--at-turn explains that state)", false},
		{"never attempted, held both ways", "", &TurnCheck{Checked: true, Agrees: true, NeverAttempted: "it has scheduling gates"},
			"agrees: it never gets a scheduling cycle there either (it has scheduling gates)", true},
		{"never attempted at its turn only", "n1", &TurnCheck{Checked: true, NeverAttempted: "Coscheduling: waiting for 2 more members"},
			"disagrees: it never gets a scheduling cycle there (Coscheduling: waiting for 2 more members)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Explanation{State: "as-listed", Ahead: 3, Selected: tt.selected, AtTurn: tt.c}
			got, agrees := turnCheckLine(e)
			if got != tt.want || agrees != tt.wantAgrees {
				t.Errorf("turnCheckLine = %q, %v; want %q, %v", got, agrees, tt.want, tt.wantAgrees)
			}
			var b strings.Builder
			if err := WriteExplain(&b, e, "table", ExplainView{}); err != nil {
				t.Fatal(err)
			}
			if has := strings.Contains(b.String(), "Dry-run:"); has != (tt.want != "") {
				t.Errorf("table has a Dry-run line: %v, want %v:\n%s", has, tt.want != "", b.String())
			}
			// The State line points to --at-turn only when nothing was checked.
			if hint := strings.Contains(stateLine(e), "--at-turn"); hint != (tt.c == nil) {
				t.Errorf("State line %q: --at-turn hint %v, want %v", stateLine(e), hint, tt.c == nil)
			}
		})
	}
}
