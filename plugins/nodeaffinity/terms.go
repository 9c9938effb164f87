package nodeaffinity

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// termMemoKeys bounds the distinct preferred terms whose matches the
// plugin remembers. Workloads share a few terms (a pool, a zone) with
// weights of their own: the framework's memo of Score's sums, keyed by
// the terms with their weights, holds one table per weighting, this one
// a table per term.
const termMemoKeys = 64

// The values the term memo holds for a node.
const (
	termNoMatch uint16 = 1
	termMatch   uint16 = 2
)

// termViews returns, for each of pref's terms, the view of the nodes
// remembered to match it or not, keyed by the term's selector (without
// its weight), and the terms bound to the label columns (nil when one
// does not bind); nil when the terms are not label selectors (matched by
// component-helpers) or there is no snapshot. Whether a node matches
// depends on its labels alone, which its generation covers.
func (pl *NodeAffinity) termViews(pref *helper.PreferredSchedulingTerms) ([]schedcore.VerdictView, []helper.BoundSelector) {
	if pref == nil || pl.handle == nil {
		return nil, nil
	}
	sels, _, ok := pref.Selectors()
	snap := pl.handle.Snapshot()
	if !ok || len(sels) == 0 || snap == nil || snap.NumNodes() == 0 {
		return nil, nil
	}
	views := make([]schedcore.VerdictView, len(sels))
	bound := make([]helper.BoundSelector, len(sels))
	allBound := true
	for i, sel := range sels {
		var k schedcore.MemoKey
		views[i] = pl.terms.View(k.Selector(sel), snap.NumNodes())
		var ok bool
		bound[i], ok = helper.BindSelector(sel, snap)
		allBound = allBound && ok
	}
	if !allBound {
		bound = nil
	}
	return views, bound
}

// scoreTerms is pref.Score on nodeInfo's node, each term's match read
// from its view when remembered for the node as it is, else computed
// (from the label columns, bound, when not nil and read from the node)
// and remembered. The node is found in the views by its list position and
// generation (pos, gen) when pos >= 0 (ScoreListed), else by nodeInfo.
func scoreTerms(pref *helper.PreferredSchedulingTerms, views []schedcore.VerdictView, bound []helper.BoundSelector, nodeInfo *schedcore.NodeInfo, pos int, gen int64) int64 {
	sels, weights, _ := pref.Selectors()
	var ls labels.Set
	var count int64
	for i, sel := range sels {
		var v uint16
		var ok bool
		if pos >= 0 {
			v, ok = views[i].GetAt(pos, gen)
		} else {
			v, ok = views[i].Get(nodeInfo)
		}
		if !ok {
			m, known := false, false
			if bound != nil {
				m, known = bound[i].Match(nodeInfo)
			}
			if !known {
				if ls == nil {
					ls = labels.Set(nodeInfo.Node().Labels)
				}
				m = sel.Matches(ls)
			}
			v = termNoMatch
			if m {
				v = termMatch
			}
			if pos >= 0 {
				views[i].PutAt(pos, gen, v)
			} else {
				views[i].Put(nodeInfo, v)
			}
		}
		if v == termMatch {
			count += weights[i]
		}
	}
	return count
}

// ScoreListed is Score for the node at list position pos with generation
// gen: with the terms' matches remembered for it, the node is not read.
func (pl *NodeAffinity) ScoreListed(ctx context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, pos int, gen int64) (int64, *schedcore.Status) {
	s, err := schedcore.ReadAs[*preScoreState](cycleState, preScoreStateKey)
	if err != nil || s.termViews == nil || pl.addedPrefSchedTerms != nil {
		return pl.Score(ctx, cycleState, pod, nodeInfo)
	}
	return scoreTerms(s.preferredNodeAffinity, s.termViews, s.bound, nodeInfo, pos, gen), nil
}
