package explain

import (
	"encoding/binary"
	"strings"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// convert renders schedcore's Explanation as the report's schema: nodes in
// name order, scores per plugin by name (raw, normalized = weighted /
// weight, weighted), ranks. order[i] is the position in ex.Nodes of
// rep.Nodes[i] (ex.ByName, or the name order sorted here).
func convert(ex *schedcore.Explanation) (rep *report.Explanation, order []int32) {
	rep = &report.Explanation{
		Pod:                  schedcore.PodName(ex.Pod),
		Profile:              ex.Profile,
		PreFilter:            report.PreFilterOutcome{Code: ex.PreFilter.Code().String(), Plugin: ex.PreFilter.Plugin(), Reason: ex.PreFilter.Message()},
		SkippedFilterPlugins: nonNil(ex.SkippedFilterPlugins),
		SkippedScorePlugins:  nonNil(ex.SkippedScorePlugins),
		FilterPlugins:        nonNil(ex.FilterPlugins),
		ScorePluginWeights:   ex.ScoreWeights,
		NumNodes:             len(ex.Nodes),
		Selected:             ex.Selected,
		TiedBest:             nonNil(ex.Tied),
		Ranking:              make([]string, 0, len(ex.Scores)),
	}
	if ex.FitError != nil {
		rep.Message = ex.FitError.Error()
	}
	if st := ex.PreEnqueue; st != nil {
		rep.PreEnqueue = &report.PreFilterOutcome{Code: st.Code().String(), Plugin: st.Plugin(), Reason: st.Message()}
		rep.PreFilter = report.PreFilterOutcome{Code: "NotRun"}
		rep.Message = st.Message()
	}
	for i := range ex.Scores {
		rep.Ranking = append(rep.Ranking, ex.Scores[i].Name)
	}
	if len(ex.Scores) > 0 {
		rep.BestTotal = ex.Scores[0].TotalScore
	}
	totals := make([]int64, len(ex.Scores))
	maps := scoreMaps{weights: ex.ScoreWeights}
	order = ex.ByName
	if len(order) != len(ex.Nodes) {
		order = (*schedcore.NameOrder)(nil).Of(ex.Nodes)
	}
	rep.Nodes = make([]report.ExplainNode, len(ex.Nodes))
	// The rejected nodes' failures share one array (thousands of small
	// slices otherwise); each node's slice is capped at its own length.
	nf := 0
	for i := range ex.Nodes {
		if ne := &ex.Nodes[i]; !ne.Feasible {
			nf += max(len(ne.Failures), 1)
		}
	}
	failures := make([]report.Failure, 0, nf)
	for k, i := range order {
		ne := &ex.Nodes[i]
		n := &rep.Nodes[k]
		n.Node, n.Feasible = ne.Name, ne.Feasible
		if ne.Feasible {
			rep.NumFeasible++
			if r := ne.Rank; r > 0 {
				sc := &ex.Scores[r-1]
				totals[r-1] = sc.TotalScore
				n.Total, n.Rank = &totals[r-1], r
				n.Scores, n.NormalizedScores, n.RawScores = maps.of(sc)
			}
			continue
		}
		start := len(failures)
		if len(ne.Failures) > 0 {
			for j, f := range ne.Failures {
				failures = append(failures, failure(f.Plugin, f.Status, j == 0))
			}
		} else if ne.Status != nil {
			// Rejected before any filter ran on it: by PreFilter, or left
			// out by a PreFilterResult.
			failures = append(failures, failure(ne.Status.Plugin(), ne.Status, true))
		}
		if len(failures) > start {
			n.Failures = failures[start:len(failures):len(failures)]
		}
	}
	return rep, order
}

// scoreMaps builds a feasible node's score maps (weighted, normalized,
// raw: plugin name to score). Nodes with the same scores share one set of
// maps, which readers of the report only read: on a large cluster most
// nodes score alike, and three maps per node were most of the conversion.
// The maps are found by the scores' values; a hit is used only when its
// plugin names are the node's too.
type scoreMaps struct {
	weights map[string]int64
	key     []byte
	seen    map[string]*sharedScores
}

type sharedScores struct {
	from                     *schedcore.NodePluginScores
	scores, normalized, raws map[string]int64
}

func (m *scoreMaps) of(sc *schedcore.NodePluginScores) (scores, normalized, raws map[string]int64) {
	m.key = m.key[:0]
	m.key = binary.AppendUvarint(m.key, uint64(len(sc.Scores)))
	for _, p := range sc.Scores {
		m.key = binary.AppendVarint(m.key, p.Score)
	}
	m.key = binary.AppendUvarint(m.key, uint64(len(sc.RawScores)))
	for _, p := range sc.RawScores {
		m.key = binary.AppendVarint(m.key, p.Score)
	}
	if s, ok := m.seen[string(m.key)]; ok && samePlugins(s.from, sc) {
		return s.scores, s.normalized, s.raws
	}
	s := &sharedScores{from: sc, scores: make(map[string]int64, len(sc.Scores)), normalized: make(map[string]int64, len(sc.Scores)),
		raws: make(map[string]int64, len(sc.RawScores))}
	for _, p := range sc.Scores {
		s.scores[p.Name] = p.Score
		if w := m.weights[p.Name]; w != 0 {
			s.normalized[p.Name] = p.Score / w
		}
	}
	for _, p := range sc.RawScores {
		s.raws[p.Name] = p.Score
	}
	if m.seen == nil {
		m.seen = map[string]*sharedScores{}
	}
	if _, ok := m.seen[string(m.key)]; !ok {
		m.seen[string(m.key)] = s
	}
	return s.scores, s.normalized, s.raws
}

// samePlugins reports whether a and b score the same plugins in the same order.
func samePlugins(a, b *schedcore.NodePluginScores) bool {
	if len(a.Scores) != len(b.Scores) || len(a.RawScores) != len(b.RawScores) {
		return false
	}
	for i := range a.Scores {
		if a.Scores[i].Name != b.Scores[i].Name {
			return false
		}
	}
	for i := range a.RawScores {
		if a.RawScores[i].Name != b.RawScores[i].Name {
			return false
		}
	}
	return true
}

func failure(plugin string, s *schedcore.Status, first bool) report.Failure {
	return report.Failure{Plugin: plugin, Reason: strings.Join(s.Reasons(), "; "), Code: s.Code().String(), First: first}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
