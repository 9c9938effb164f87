package report

import (
	"reflect"
	"testing"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Nodes holding the same score lists share their maps, whether side by
// side or not; the same weighted list with other raw scores (or other
// lists of equal values) does not share the raw map.
func TestScoreListsShareOnlyTheSameLists(t *testing.T) {
	score := func(plugins ...string) *schedcore.NodePluginScores {
		s := &schedcore.NodePluginScores{}
		for i, p := range plugins {
			s.Scores = append(s.Scores, schedcore.PluginScore{Name: p, Score: int64(10 * (i + 1))})
			s.RawScores = append(s.RawScores, schedcore.PluginScore{Name: p, Score: int64(i + 1)})
			s.TotalScore += int64(10 * (i + 1))
		}
		return s
	}
	same := func(a, b ScoreMap) bool { return a.SameAs(b) }
	m := scoreLists{weights: map[string]int64{"A": 1, "B": 2, "C": 5}}
	ab := score("A", "B")
	of := func(sc *schedcore.NodePluginScores) (scores, normalized, raws ScoreMap, total *int64) {
		ns := m.of(sc)
		return ns.Scores, ns.NormalizedScores, ns.RawScores, ns.Total
	}
	a1, an1, ar1, t1 := of(ab)
	// The same lists with another total (a node's total is the sum of
	// its weighted scores, so schedcore never gives one; the total is
	// shared only when it is the same).
	a2, an2, ar2, t2 := of(&schedcore.NodePluginScores{Scores: ab.Scores, RawScores: ab.RawScores, TotalScore: 29})
	if !same(a1, a2) || !same(an1, an2) || !same(ar1, ar2) {
		t.Errorf("the same lists side by side got separate maps")
	}
	c, cn, cr, _ := of(score("A", "C"))
	other := score("D")
	m.of(other)
	_, an3, _, t3 := of(&schedcore.NodePluginScores{Scores: ab.Scores, RawScores: ab.RawScores, TotalScore: ab.TotalScore})
	if !same(an1, an3) {
		t.Errorf("the same lists, not side by side, got separate normalized maps")
	}
	if *t1 != 30 || *t2 != 29 || *t3 != 30 || t1 != t3 {
		t.Errorf("totals %d, %d, %d (shared %v), want 30, 29, 30 (shared)", *t1, *t2, *t3, t1 == t3)
	}
	// The same Scores list with other raw scores, right after and apart.
	rawsOf := &schedcore.NodePluginScores{Scores: ab.Scores, RawScores: []schedcore.PluginScore{{Name: "A", Score: 7}, {Name: "B", Score: 8}}}
	_, _, rr, _ := of(rawsOf)
	m.of(other)
	_, _, rr2, _ := of(rawsOf)
	// Equal values in other lists.
	b, bn, br, _ := of(score("A", "B"))
	for _, tc := range []struct {
		got  ScoreMap
		want map[string]int64
	}{
		{a1, map[string]int64{"A": 10, "B": 20}}, {an1, map[string]int64{"A": 10, "B": 10}}, {ar1, map[string]int64{"A": 1, "B": 2}},
		{c, map[string]int64{"A": 10, "C": 20}}, {cn, map[string]int64{"A": 10, "C": 4}}, {cr, map[string]int64{"A": 1, "C": 2}},
		{b, map[string]int64{"A": 10, "B": 20}}, {bn, map[string]int64{"A": 10, "B": 10}}, {br, map[string]int64{"A": 1, "B": 2}},
		{rr, map[string]int64{"A": 7, "B": 8}}, {rr2, map[string]int64{"A": 7, "B": 8}},
	} {
		if !reflect.DeepEqual(tc.got.Map(), tc.want) {
			t.Errorf("maps %v, want %v", tc.got.Map(), tc.want)
		}
	}
	// No scores at all: empty maps, left out of the
	e, en, er, _ := of(&schedcore.NodePluginScores{RawScores: []schedcore.PluginScore{}, Scores: []schedcore.PluginScore{}})
	for _, x := range []ScoreMap{e, en, er} {
		if !x.IsZero() || x.Map() == nil {
			t.Errorf("no scores: %v (zero %v)", x.Map(), x.IsZero())
		}
	}
}

// The map of a report's score lists goes back to the pool emptied: it
// must not keep an explanation's lists alive, nor give the next report
// another's maps.
func TestScoreListsReleaseEmptiesTheirMap(t *testing.T) {
	m := scoreLists{weights: map[string]int64{"A": 1}}
	for k := range 3 {
		m.of(&schedcore.NodePluginScores{Scores: []schedcore.PluginScore{{Name: "A", Score: int64(k)}}, RawScores: []schedcore.PluginScore{{Name: "A", Score: int64(k)}}})
	}
	held := m.byList
	if len(held) != 3 {
		t.Fatalf("%d lists in the map, want 3", len(held))
	}
	m.release()
	if len(held) != 0 || m.byList != nil {
		t.Errorf("after release: %d lists in the map given back, map kept: %v", len(held), m.byList != nil)
	}
}
