package report

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// Nodes share a list of failures only when theirs read the same, side by
// side or not, and even when their keys collide; each list is the one
// failure would make.
func TestFailureListsShareOnlyTheSameText(t *testing.T) {
	st := func(code schedcore.Code, plugin string, reasons ...string) *schedcore.Status {
		return schedcore.NewStatus(code, reasons...).WithPlugin(plugin)
	}
	v := func(s *schedcore.Status) schedruntime.FilterVerdict {
		return schedruntime.FilterVerdict{Plugin: s.Plugin(), Status: s}
	}
	u, uu := schedcore.Unschedulable, schedcore.UnschedulableAndUnresolvable
	nodes := []schedruntime.NodeExplanation{
		{Failures: []schedruntime.FilterVerdict{v(st(u, "A", "x"))}},
		{Failures: []schedruntime.FilterVerdict{v(st(u, "A", "x"))}},      // same text, other status
		{Failures: []schedruntime.FilterVerdict{v(st(u, "A", "y"))}},      // other reason
		{Failures: []schedruntime.FilterVerdict{v(st(uu, "A", "x"))}},     // other code
		{Failures: []schedruntime.FilterVerdict{v(st(u, "B", "x"))}},      // other plugin
		{Failures: []schedruntime.FilterVerdict{v(st(u, "A", "x", "y"))}}, // more reasons
		{Failures: []schedruntime.FilterVerdict{v(st(u, "A", "x; y"))}},   // the same joined
		{Failures: []schedruntime.FilterVerdict{v(st(u, "A", "x")), v(st(u, "B", "x"))}},
		{Status: st(uu, "P", "x")}, // no filter ran
		{Status: st(uu, "P", "x")},
		{Failures: []schedruntime.FilterVerdict{v(st(u, "A", "x"))}}, // not side by side
		{},
	}
	// Lists made afresh, and which of them should be shared.
	want := make([][]Failure, len(nodes))
	for i := range nodes {
		eachVerdict(&nodes[i], func(j int, plugin string, s *schedcore.Status) bool {
			if nodes[i].Status != nil || len(nodes[i].Failures) > 0 {
				want[i] = append(want[i], failure(plugin, s, j == 0))
			}
			return true
		})
	}
	for name, hash := range map[string]func(*failureLists, *schedruntime.NodeExplanation) uint64{
		"hashed":   nil,
		"collided": func(*failureLists, *schedruntime.NodeExplanation) uint64 { return 7 },
	} {
		fl := failureLists{hash: hash}
		got := make([][]Failure, len(nodes))
		for i := range nodes {
			got[i] = fl.of(&nodes[i]).Failures
			if !reflect.DeepEqual(got[i], want[i]) {
				t.Errorf("%s: node %d: got %+v, want %+v", name, i, got[i], want[i])
			}
		}
		shared := func(i, k int) bool { return len(got[i]) > 0 && &got[i][0] == &got[k][0] }
		if !shared(0, 1) || !shared(8, 9) {
			t.Errorf("%s: nodes side by side reading the same got separate lists", name)
		}
		if name == "hashed" && !shared(0, 10) {
			t.Errorf("%s: nodes reading the same, not side by side, got separate lists", name)
		}
		if len(got[11]) != 0 {
			t.Errorf("%s: a node without verdicts got %v", name, got[11])
		}
	}
}

func TestJoined(t *testing.T) {
	for _, parts := range [][]string{nil, {""}, {"a"}, {"a", "b"}, {"a; b"}, {"a", ""}, {"", "a"}} {
		for _, s := range []string{"", "a", "a; b", "a; ", "; a", "ab", "a;b"} {
			if got, want := joined(s, parts), s == strings.Join(parts, "; "); got != want {
				t.Errorf("joined(%q, %q) = %v, want %v", s, parts, got, want)
			}
		}
	}
}
