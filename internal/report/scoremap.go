package report

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ScoreMap is one node's scores by plugin name. It is written (JSON, and
// YAML through JSON) exactly as a map[string]int64 is: an object with the
// names sorted. It holds a list rather than a map because an explanation
// on thousands of nodes has as many of them (hundreds distinct): nodes that
// score alike share one list, which is read only. The zero value is empty.
type ScoreMap struct {
	// list points at the scores, one per plugin, names unique, in any
	// order (the profile's, as schedcore lists them).
	list *[]schedcore.PluginScore
	// div, when not nil, points at the weights the scores are divided
	// by, (*div)[j] for (*list)[j]; scores of weight 0 are left out
	// (NewScoreMapDivided).
	div *[]int64
}

// NewScoreMap returns the scores of list, which it keeps (read only).
func NewScoreMap(list []schedcore.PluginScore) ScoreMap {
	return ScoreMap{list: &list}
}

// NewScoreMapOf returns the scores *list holds, sharing the list and its
// header (read only): many nodes' ScoreMaps point at one list without a
// header of their own each.
func NewScoreMapOf(list *[]schedcore.PluginScore) ScoreMap {
	return ScoreMap{list: list}
}

// NewScoreMapDivided returns the scores *list holds divided by the
// weights *div holds ((*div)[j] for (*list)[j], the same length), those of
// weight 0 left out, sharing both (read only): a node's normalized scores
// read off its weighted ones, where a list of their own for each distinct
// list of weighted scores was a tenth of what an explanation allocated.
func NewScoreMapDivided(list *[]schedcore.PluginScore, div *[]int64) ScoreMap {
	return ScoreMap{list: list, div: div}
}

// at returns the j-th score of m's list, and whether m holds it (a
// divided map does not hold the scores of weight 0).
func (m ScoreMap) at(j int) (schedcore.PluginScore, bool) {
	p := (*m.list)[j]
	if m.div == nil {
		return p, true
	}
	w := (*m.div)[j]
	if w == 0 {
		return p, false
	}
	return schedcore.PluginScore{Name: p.Name, Score: p.Score / w}, true
}

// size is the length of m's list (held or not).
func (m ScoreMap) size() int {
	if m.list == nil {
		return 0
	}
	return len(*m.list)
}

// SameAs reports whether m and o are the very same scores (the same
// lists): tests of what explanations share read it.
func (m ScoreMap) SameAs(o ScoreMap) bool {
	return m.size() > 0 && m.size() == o.size() && &(*m.list)[0] == &(*o.list)[0] && m.div == o.div
}

// ScoreMapOf returns the scores of m.
func ScoreMapOf(m map[string]int64) ScoreMap {
	list := make([]schedcore.PluginScore, 0, len(m))
	for name, v := range m {
		list = append(list, schedcore.PluginScore{Name: name, Score: v})
	}
	slices.SortFunc(list, func(a, b schedcore.PluginScore) int { return strings.Compare(a.Name, b.Name) })
	return NewScoreMap(list)
}

// List returns the scores, one per plugin, in no particular order; callers
// only read it. A divided map's list is made on each call.
func (m ScoreMap) List() []schedcore.PluginScore {
	if m.list == nil {
		return nil
	}
	if m.div == nil {
		return *m.list
	}
	out := make([]schedcore.PluginScore, 0, m.Len())
	for j := range m.size() {
		if p, ok := m.at(j); ok {
			out = append(out, p)
		}
	}
	return out
}

// Len is the number of plugins with a score.
func (m ScoreMap) Len() int {
	if m.div == nil {
		return m.size()
	}
	n := 0
	for _, w := range *m.div {
		if w != 0 {
			n++
		}
	}
	return n
}

// IsZero reports whether m has no score (JSON's omitzero leaves it out, as
// omitempty leaves out an empty map).
func (m ScoreMap) IsZero() bool { return m.Len() == 0 }

// Lookup returns plugin's score and whether it has one.
func (m ScoreMap) Lookup(plugin string) (int64, bool) {
	for j := range m.size() {
		if p, ok := m.at(j); ok && p.Name == plugin {
			return p.Score, true
		}
	}
	return 0, false
}

// Get returns plugin's score, 0 when it has none.
func (m ScoreMap) Get(plugin string) int64 {
	v, _ := m.Lookup(plugin)
	return v
}

// Map returns the scores as a new map; nil for the zero ScoreMap.
func (m ScoreMap) Map() map[string]int64 {
	if m.list == nil {
		return nil
	}
	out := make(map[string]int64, m.Len())
	for j := range m.size() {
		if p, ok := m.at(j); ok {
			out[p.Name] = p.Score
		}
	}
	return out
}

// Equal reports whether m and o hold the same scores (go-cmp uses it).
func (m ScoreMap) Equal(o ScoreMap) bool {
	if m.Len() != o.Len() {
		return false
	}
	for j := range m.size() {
		if p, ok := m.at(j); ok {
			if v, found := o.Lookup(p.Name); !found || v != p.Score {
				return false
			}
		}
	}
	return true
}

// MarshalJSON writes the scores as encoding/json writes a
// map[string]int64: {"name":score,...}, names sorted byte-wise, each
// quoted as json.Marshal quotes a string.
func (m ScoreMap) MarshalJSON() ([]byte, error) {
	var list []schedcore.PluginScore
	if m.list != nil {
		list = *m.list
	}
	var small [16]int
	idx := small[:0]
	for i := range list {
		if m.div == nil || (*m.div)[i] != 0 {
			idx = append(idx, i)
		}
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(list[a].Name, list[b].Name) })
	out := make([]byte, 0, 2+len(idx)*32)
	out = append(out, '{')
	for k, i := range idx {
		if k > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = appendJSONString(out, list[i].Name); err != nil {
			return nil, err
		}
		out = append(out, ':')
		p, _ := m.at(i)
		out = strconv.AppendInt(out, p.Score, 10)
	}
	return append(out, '}'), nil
}

// appendJSONString appends s quoted as json.Marshal quotes it: letters,
// digits and a few marks as they are, anything else through json.Marshal.
func appendJSONString(out []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/') {
			b, err := json.Marshal(s)
			return append(out, b...), err
		}
	}
	out = append(out, '"')
	out = append(out, s...)
	return append(out, '"'), nil
}

// UnmarshalJSON reads what MarshalJSON writes (any JSON object of
// integers; null is the zero ScoreMap).
func (m *ScoreMap) UnmarshalJSON(b []byte) error {
	var raw map[string]int64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*m = ScoreMap{}
		return nil
	}
	*m = ScoreMapOf(raw)
	return nil
}
