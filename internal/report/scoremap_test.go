package report

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// A ScoreMap is written byte for byte as the map[string]int64 it stands
// for, in a node (left out when empty) and on its own, in JSON and YAML,
// whatever the order of its list and the characters of the names; and it
// reads back as the same scores.
func TestScoreMapIsWrittenAsAMap(t *testing.T) {
	// mapNode is ExplainNode's score fields as they were: maps.
	type mapNode struct {
		Node             string           `json:"node"`
		Scores           map[string]int64 `json:"scores,omitempty"`
		RawScores        map[string]int64 `json:"rawScores,omitempty"`
		NormalizedScores map[string]int64 `json:"normalizedScores,omitempty"`
	}
	type listNode struct {
		Node             string   `json:"node"`
		Scores           ScoreMap `json:"scores,omitzero"`
		RawScores        ScoreMap `json:"rawScores,omitzero"`
		NormalizedScores ScoreMap `json:"normalizedScores,omitzero"`
	}
	for _, tc := range []struct {
		name string
		list []schedcore.PluginScore
	}{
		{"profile order", []schedcore.PluginScore{ps("TaintToleration", 300), ps("NodeResourcesFit", -12), ps("ImageLocality", 0), ps("A", 9223372036854775807)}},
		{"marks and html", []schedcore.PluginScore{ps("b<&>", 1), ps("a\"q\\", 2), ps("é-ü", 3), ps("x.y/z_w-1", 4), ps("tab\t", 5), ps("Z", 6), ps("a", 7)}},
		{"one", []schedcore.PluginScore{ps("Only", 42)}},
		{"empty", []schedcore.PluginScore{}},
		{"none", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]int64
			if tc.list != nil {
				m = map[string]int64{}
				for _, p := range tc.list {
					m[p.Name] = p.Score
				}
			}
			var sm ScoreMap
			if tc.list != nil {
				sm = NewScoreMap(tc.list)
			}
			want, err := json.Marshal(mapNode{Node: "n", Scores: m, RawScores: m, NormalizedScores: m})
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(listNode{Node: "n", Scores: sm, RawScores: sm, NormalizedScores: sm})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("JSON (-map +ScoreMap):\n%s", d)
			}
			wantIndent, _ := json.MarshalIndent(m, "", "  ")
			gotIndent, _ := json.MarshalIndent(sm, "", "  ")
			if len(m) > 0 && string(wantIndent) != string(gotIndent) {
				t.Errorf("indented JSON %s, want %s", gotIndent, wantIndent)
			}
			wantY, _ := yaml.Marshal(mapNode{Node: "n", Scores: m})
			gotY, _ := yaml.Marshal(listNode{Node: "n", Scores: sm})
			if d := cmp.Diff(string(wantY), string(gotY)); d != "" {
				t.Errorf("YAML (-map +ScoreMap):\n%s", d)
			}
			var back listNode
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			if len(m) > 0 && !back.Scores.Equal(sm) {
				t.Errorf("read back %v, want %v", back.Scores.Map(), m)
			}
			if len(m) > 0 && !cmp.Equal(m, back.RawScores.Map()) {
				t.Errorf("read back %v, want %v", back.RawScores.Map(), m)
			}
			for _, p := range tc.list {
				if v, ok := sm.Lookup(p.Name); !ok || v != p.Score || sm.Get(p.Name) != p.Score {
					t.Errorf("Lookup(%q) = %d, %v, want %d", p.Name, v, ok, p.Score)
				}
			}
			if _, ok := sm.Lookup("missing"); ok {
				t.Errorf("Lookup(missing) found a score")
			}
		})
	}
}

func ps(name string, v int64) schedcore.PluginScore {
	return schedcore.PluginScore{Name: name, Score: v}
}

// Equal compares the scores, not the lists' order or identity.
func TestScoreMapEqual(t *testing.T) {
	a := NewScoreMap([]schedcore.PluginScore{ps("A", 1), ps("B", 2)})
	for _, tc := range []struct {
		b    ScoreMap
		want bool
	}{
		{NewScoreMap([]schedcore.PluginScore{ps("B", 2), ps("A", 1)}), true},
		{ScoreMapOf(map[string]int64{"A": 1, "B": 2}), true},
		{NewScoreMap([]schedcore.PluginScore{ps("A", 1), ps("B", 3)}), false},
		{NewScoreMap([]schedcore.PluginScore{ps("A", 1), ps("C", 2)}), false},
		{NewScoreMap([]schedcore.PluginScore{ps("A", 1)}), false},
		{ScoreMap{}, false},
	} {
		if got := a.Equal(tc.b); got != tc.want || tc.b.Equal(a) != tc.want {
			t.Errorf("%v.Equal(%v) = %v, want %v", a.Map(), tc.b.Map(), got, tc.want)
		}
	}
}

// A divided ScoreMap holds each score divided by its weight, those of
// weight 0 left out, and reads and writes as the map of those: the same
// JSON, lookups, length, list and equality.
func TestScoreMapDivided(t *testing.T) {
	for _, tc := range []struct {
		name string
		list []schedcore.PluginScore
		div  []int64
		want map[string]int64
	}{
		{"weights", []schedcore.PluginScore{ps("Z", 300), ps("B", -12), ps("A", 7)}, []int64{3, 2, 1}, map[string]int64{"Z": 100, "B": -6, "A": 7}},
		{"a weight of 0", []schedcore.PluginScore{ps("Z", 300), ps("Off", 0), ps("A", 7)}, []int64{3, 0, 7}, map[string]int64{"Z": 100, "A": 1}},
		{"every weight 0", []schedcore.PluginScore{ps("Off", 0)}, []int64{0}, map[string]int64{}},
		{"empty", []schedcore.PluginScore{}, []int64{}, map[string]int64{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewScoreMapDivided(&tc.list, &tc.div)
			want, err := json.Marshal(tc.want)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("JSON %s, want %s", got, want)
			}
			if m.Len() != len(tc.want) || m.IsZero() != (len(tc.want) == 0) || len(m.List()) != len(tc.want) {
				t.Errorf("Len %d, IsZero %v, %d listed; want %d", m.Len(), m.IsZero(), len(m.List()), len(tc.want))
			}
			if !cmp.Equal(tc.want, m.Map()) {
				t.Errorf("Map %v, want %v", m.Map(), tc.want)
			}
			for _, p := range tc.list {
				v, ok := m.Lookup(p.Name)
				if w, in := tc.want[p.Name]; ok != in || v != w {
					t.Errorf("Lookup(%q) = %d, %v, want %d, %v", p.Name, v, ok, w, in)
				}
			}
			if o := ScoreMapOf(tc.want); !m.Equal(o) || !o.Equal(m) {
				t.Errorf("not Equal to the map of its scores")
			}
		})
	}
}
