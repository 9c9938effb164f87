package explain

import (
	"slices"
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
// Nodes whose score lists are the same lists (schedcore shares them
// between nodes that score alike) share maps without a comparison; others
// are found by a hash of the scores' values, and a hit is used only when
// its scores, values and plugin names, are the node's.
type scoreMaps struct {
	weights map[string]int64
	last    *sharedScores
	// byList finds maps by the data of the node's Scores list.
	byList map[*schedcore.PluginScore]*sharedScores
	seen   map[uint64][]*sharedScores
}

type sharedScores struct {
	from                     *schedcore.NodePluginScores
	scores, normalized, raws map[string]int64
}

func (m *scoreMaps) of(sc *schedcore.NodePluginScores) (scores, normalized, raws map[string]int64) {
	// Nodes alike are often next to each other in name order.
	if s := m.last; s != nil && (sameLists(s.from, sc) || sameScores(s.from, sc)) {
		return s.scores, s.normalized, s.raws
	}
	if s := m.byList[head(sc.Scores)]; s != nil && sameLists(s.from, sc) {
		m.last = s
		return s.scores, s.normalized, s.raws
	}
	h := scoresHash(sc)
	for _, s := range m.seen[h] {
		if sameScores(s.from, sc) {
			m.remember(sc, s)
			return s.scores, s.normalized, s.raws
		}
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
		m.seen = map[uint64][]*sharedScores{}
	}
	m.seen[h] = append(m.seen[h], s)
	m.remember(sc, s)
	return s.scores, s.normalized, s.raws
}

// remember makes s the maps found last, and by sc's lists.
func (m *scoreMaps) remember(sc *schedcore.NodePluginScores, s *sharedScores) {
	m.last = s
	if len(sc.Scores) == 0 {
		return
	}
	if m.byList == nil {
		m.byList = map[*schedcore.PluginScore]*sharedScores{}
	}
	if _, ok := m.byList[head(sc.Scores)]; !ok {
		m.byList[head(sc.Scores)] = &sharedScores{from: sc, scores: s.scores, normalized: s.normalized, raws: s.raws}
	}
}

// sameLists reports whether a and b hold the very same score lists (the
// same data, lengths and, for an empty list, both empty).
func sameLists(a, b *schedcore.NodePluginScores) bool {
	return len(a.Scores) > 0 && len(a.Scores) == len(b.Scores) && len(a.RawScores) == len(b.RawScores) &&
		head(a.Scores) == head(b.Scores) && head(a.RawScores) == head(b.RawScores)
}

// scoresHash mixes the values of sc's scores (not the plugin names, which
// are most often the same for every node).
func scoresHash(sc *schedcore.NodePluginScores) uint64 {
	h := uint64(len(sc.Scores))<<32 | uint64(len(sc.RawScores))
	for _, ps := range [2][]schedcore.PluginScore{sc.Scores, sc.RawScores} {
		for _, p := range ps {
			h = (h ^ uint64(p.Score)) * 0x9e3779b97f4a7c15
			h ^= h >> 29
		}
	}
	return h
}

// sameScores reports whether a and b have the same scores: the same
// plugins in the same order, with the same values.
func sameScores(a, b *schedcore.NodePluginScores) bool {
	return slices.Equal(a.Scores, b.Scores) && slices.Equal(a.RawScores, b.RawScores)
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

// head is the first element of a non-empty list of scores, which names its data.
func head(ps []schedcore.PluginScore) *schedcore.PluginScore {
	if len(ps) == 0 {
		return nil
	}
	return &ps[0]
}
