package report

import (
	"slices"
	"strings"
	"sync"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// ExplanationOf renders schedcore's Explanation as the report's schema: nodes in
// name order, scores per plugin by name (raw, normalized = weighted /
// weight, weighted), ranks. order[i] is the position in ex.Nodes of
// rep.Nodes[i] (ex.ByName, or the name order sorted here).
func ExplanationOf(ex *schedruntime.Explanation) (rep *Explanation, order []int32) {
	rep = &Explanation{
		Pod:                  schedcore.PodName(ex.Pod),
		Profile:              ex.Profile,
		PreFilter:            PreFilterOutcome{Code: ex.PreFilter.Code().String(), Plugin: ex.PreFilter.Plugin(), Reason: ex.PreFilter.Message()},
		SkippedFilterPlugins: nonNil(ex.SkippedFilterPlugins),
		SkippedScorePlugins:  nonNil(ex.SkippedScorePlugins),
		FilterPlugins:        nonNil(ex.FilterPlugins),
		ScorePluginWeights:   ex.ScoreWeights,
		NumNodes:             len(ex.Nodes),
		Selected:             ex.Selected,
	}
	if ex.FitError != nil {
		rep.Message = ex.FitError.Error()
	}
	if st := ex.PreEnqueue; st != nil {
		rep.PreEnqueue = &PreFilterOutcome{Code: st.Code().String(), Plugin: st.Plugin(), Reason: st.Message()}
		rep.PreFilter = PreFilterOutcome{Code: "NotRun"}
		rep.Message = st.Message()
	}
	// The ranking is schedcore's (read only), when it has one.
	rep.Ranking = ex.Ranking
	if rep.Ranking == nil || len(rep.Ranking) != len(ex.Scores) {
		rep.Ranking = make([]string, len(ex.Scores))
		for i := range ex.Scores {
			rep.Ranking[i] = ex.Scores[i].Name
		}
	}
	rep.TiedBest = tiedBest(ex.Tied, rep.Ranking)
	if len(ex.Scores) > 0 {
		rep.BestTotal = ex.Scores[0].TotalScore
	}
	maps := scoreLists{weights: ex.ScoreWeights}
	defer maps.release()
	order = ex.ByName
	if len(order) != len(ex.Nodes) {
		order = (*schedruntime.NameOrder)(nil).Of(ex.Nodes)
	}
	rep.Nodes = make([]ExplainNode, len(ex.Nodes))
	// The nodes without failures, scores or detail share empty ones (see
	// ExplainNode); Explain gives the nodes it details their own.
	// The rejected nodes' failures are shared where they read the same.
	fails := failureLists{}
	noFailures, noScores, noDetail := fails.empty(), &NodeScores{}, &NodeDetail{}
	for k, i := range order {
		ne := &ex.Nodes[i]
		n := &rep.Nodes[k]
		n.Node, n.Feasible = ne.Name, ne.Feasible
		n.NodeFailures, n.NodeScores, n.NodeDetail = noFailures, noScores, noDetail
		if ne.Feasible {
			rep.NumFeasible++
			if r := ne.Rank; r > 0 {
				n.Rank = r
				n.NodeScores = maps.of(&ex.Scores[r-1])
			}
			continue
		}
		n.NodeFailures = fails.of(ne)
	}
	return rep, order
}

// tiedBest is the report's list of the nodes tied for the best total:
// tied, which is the first nodes of the ranking (best first, ties in name
// order) when no seed broke the tie, shares the ranking's memory then.
func tiedBest(tied, ranking []string) []string {
	if len(tied) <= len(ranking) && slices.Equal(tied, ranking[:len(tied)]) {
		return ranking[:len(tied):len(tied)]
	}
	return nonNil(tied)
}

// scoreLists gives a feasible node's score maps (weighted, normalized,
// raw) and its total. The weighted and raw ones are the node's own score
// lists, which schedcore shares between nodes that score alike, so a
// report on thousands of nodes holds a few hundred distinct lists; the
// normalized map is the weighted list divided by the plugins' weights,
// which lists naming the plugins in the same order (all of an
// explanation's, as schedcore lists them) share. Nodes holding the same
// pair of lists (the same data and lengths) share all three maps, and the
// total when it is the same (the sum of the weighted scores, so it is).
// Readers of the report only read them.
type scoreLists struct {
	weights map[string]int64
	last    *sharedScores
	// byList finds the shared lists by the data of the node's Scores list;
	// from spareByList, given back by release.
	byList map[*schedcore.PluginScore]*sharedScores
	// empty is shared by the nodes without scores.
	empty *sharedScores
	// names[j] and div[j] are the name and weight of the j-th plugin of
	// the last list divided; div is shared by the lists naming the same
	// plugins in the same order, and never changed once handed out.
	names  []string
	div    *[]int64
	shared []sharedScores
}

// sharedScores are the maps of the nodes holding the lists scores and raws.
type sharedScores struct {
	scores, raws []schedcore.PluginScore
	// div are the weights of scores' plugins, one each.
	div   *[]int64
	total int64
	// ns are the nodes' scores: the maps of the lists above and total.
	ns NodeScores
}

// holds reports whether sc's lists are the very same as s's (the same
// data and lengths; a list's data is its first element).
func (s *sharedScores) holds(sc *schedcore.NodePluginScores) bool {
	return len(s.scores) > 0 && len(s.scores) == len(sc.Scores) && len(s.raws) == len(sc.RawScores) &&
		head(s.scores) == head(sc.Scores) && head(s.raws) == head(sc.RawScores)
}

// maps returns s's maps with a total of total: s's own when it is the
// same, else the same maps with a total of the node's own.
func (s *sharedScores) maps(total int64) *NodeScores {
	if s.ns.Total == nil {
		s.ns = NodeScores{Scores: NewScoreMapOf(&s.scores), NormalizedScores: NewScoreMapDivided(&s.scores, s.div),
			RawScores: NewScoreMapOf(&s.raws), Total: &s.total}
	}
	if s.total != total {
		own, t := s.ns, total
		own.Total = &t
		return &own
	}
	return &s.ns
}

func (m *scoreLists) of(sc *schedcore.NodePluginScores) *NodeScores {
	// Nodes alike are often next to each other in name order.
	if s := m.last; s != nil && s.holds(sc) {
		return s.maps(sc.TotalScore)
	}
	if len(sc.Scores) == 0 && len(sc.RawScores) == 0 {
		if m.empty == nil {
			m.empty = &sharedScores{scores: []schedcore.PluginScore{}, raws: []schedcore.PluginScore{}, div: &[]int64{}, total: sc.TotalScore}
		}
		return m.empty.maps(sc.TotalScore)
	}
	if s := m.byList[head(sc.Scores)]; s != nil && s.holds(sc) {
		m.last = s
		return s.maps(sc.TotalScore)
	}
	if len(m.shared) == cap(m.shared) {
		m.shared = make([]sharedScores, 0, 64)
	}
	m.shared = append(m.shared, sharedScores{scores: sc.Scores, raws: sc.RawScores, div: m.divisors(sc.Scores), total: sc.TotalScore})
	s := &m.shared[len(m.shared)-1]
	m.last = s
	if len(sc.Scores) > 0 {
		if m.byList == nil {
			m.byList, _ = spareByList.Get().(map[*schedcore.PluginScore]*sharedScores)
			if m.byList == nil {
				m.byList = map[*schedcore.PluginScore]*sharedScores{}
			}
		}
		if _, ok := m.byList[head(sc.Scores)]; !ok {
			m.byList[head(sc.Scores)] = s
		}
	}
	return s.maps(sc.TotalScore)
}

// spareByList holds scoreLists.byList maps, emptied, between
// explanations: a map of the few hundred distinct lists of 5000 nodes,
// grown entry by entry in every explanation, was a third of the time the
// report's scores took to build (a cleared map keeps its room).
var spareByList sync.Pool

// release gives m's map back, emptied: it holds the explanation's lists,
// which must not be kept alive by the pool (and m is not used again).
func (m *scoreLists) release() {
	if m.byList == nil {
		return
	}
	clear(m.byList)
	spareByList.Put(m.byList)
	m.byList = nil
}

// divisors returns the weights of the weighted list's plugins, one each,
// which divide its scores into the normalized ones (a weight of 0 leaves
// the plugin out): the last ones when the list names the same plugins in
// the same order.
func (m *scoreLists) divisors(weighted []schedcore.PluginScore) *[]int64 {
	if m.div != nil && len(weighted) == len(m.names) {
		same := true
		for j := range weighted {
			if weighted[j].Name != m.names[j] {
				same = false
				break
			}
		}
		if same {
			return m.div
		}
	}
	names, div := make([]string, len(weighted)), make([]int64, len(weighted))
	for j, p := range weighted {
		names[j], div[j] = p.Name, m.weights[p.Name]
	}
	m.names, m.div = names, &div
	return m.div
}

func failure(plugin string, s *schedcore.Status, first bool) Failure {
	return Failure{Plugin: plugin, Reason: strings.Join(s.Reasons(), "; "), Code: s.Code().String(), First: first}
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

// PreemptionOf renders what the profile's PostFilter says it would do
// (schedruntime.Framework.ExplainPostFilter); nil for nil.
func PreemptionOf(pf *schedcore.PostFilterExplanation) *PreemptionOutcome {
	if pf == nil {
		return nil
	}
	out := &PreemptionOutcome{Node: pf.Node, PDBViolations: pf.PDBViolations, Message: pf.Message, Victims: make([]string, len(pf.Victims))}
	for i, v := range pf.Victims {
		out.Victims[i] = schedcore.PodName(v)
	}
	return out
}
