package nodeaffinity

import (
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
// and remembered.
func scoreTerms(pref *helper.PreferredSchedulingTerms, views []schedcore.VerdictView, bound []helper.BoundSelector, nodeInfo *schedcore.NodeInfo) int64 {
	sels, weights, _ := pref.Selectors()
	var ls labels.Set
	var count int64
	for i, sel := range sels {
		v, ok := views[i].Get(nodeInfo)
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
			views[i].Put(nodeInfo, v)
		}
		if v == termMatch {
			count += weights[i]
		}
	}
	return count
}
