package podtopologyspread

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// maxTotals bounds the hard constraints whose counts per domain are kept
// across cycles (schedcore.TotalsCache): each holds a share per node.
const maxTotals = 64

// totalsKey captures what a node's share of constraint i depends on: the
// pod's namespace, the constraint's selector and inclusion policies, every
// constraint's topology key (in order; key i is the constraint's), and the
// pod's required node affinity and tolerations when a policy honours them.
func totalsKey(pod *v1.Pod, constraints []topologySpreadConstraint, i int) *schedcore.MemoKey {
	c := &constraints[i]
	k := new(schedcore.MemoKey).String(pod.Namespace).Selector(c.Selector).Int(int64(i)).
		String(string(c.NodeAffinityPolicy)).String(string(c.NodeTaintsPolicy)).Int(int64(len(constraints)))
	for j := range constraints {
		k.String(constraints[j].TopologyKey)
	}
	if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor || c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
		k = helper.TolerationsKey(helper.RequiredAffinityKey(k, pod), pod)
	}
	return k
}

// hardCounts fills s.counts (key i: constraint i's topology key) with the
// pods each constraint matches per domain over every node that counts (it
// has all the constraints' topology keys and passes the constraint's
// inclusion policies), from totals kept across cycles: only the nodes
// replaced since a constraint's totals were last used are read.
func (pl *PodTopologySpread) hardCounts(pod *v1.Pod, s *preFilterState, incl *inclusion) {
	snap := pl.handle.Snapshot()
	for i := range s.Constraints {
		lc := &lazyCount{pl: pl, snap: snap, ns: pod.Namespace, c: &s.Constraints[i]}
		pl.totals.LoadListed(totalsKey(pod, s.Constraints, i), snap, s.counts, i, shareOf(lc, s.Constraints, i, s.counts, incl), shareAt(lc, s.Constraints, i, s.counts, incl))
		lc.done()
	}
}

// shareOf returns a node's share of constraint i's totals: its matching
// pods in its domain, when it has every constraint's key (counts' keys)
// and passes the constraint's inclusion policies.
func shareOf(lc *lazyCount, constraints []topologySpreadConstraint, i int, counts *schedcore.DomainCounts, incl *inclusion) func(ni *schedcore.NodeInfo) (schedcore.Domain, int64, bool) {
	c := &constraints[i]
	return func(ni *schedcore.NodeInfo) (schedcore.Domain, int64, bool) {
		var buf [4]schedcore.Domain
		doms, all := counts.NodeDomains(ni, buf[:0])
		if !all || !c.includes(incl.verdict(ni)) {
			return 0, 0, false
		}
		return doms[i], lc.count(ni), true
	}
}

// shareAt is shareOf for the node the snapshot lists at a position, from
// what is known there: the domains from the label columns, the inclusion
// verdict from its memo, the count from the plugin's MatchCounter (set up
// at once: shareAt serves a fill from scratch); known false when one of
// them needs the node.
func shareAt(lc *lazyCount, constraints []topologySpreadConstraint, i int, counts *schedcore.DomainCounts, incl *inclusion) schedcore.ShareAt {
	c := &constraints[i]
	return func(pos int, gen int64) (schedcore.Domain, int64, bool, bool) {
		var buf [4]schedcore.Domain
		doms, all, ok := counts.NodeDomainsAt(lc.snap, pos, buf[:0])
		if !ok {
			return 0, 0, false, false
		}
		if !all {
			return 0, 0, false, true
		}
		v, known := incl.verdictAt(pos)
		if !known {
			return 0, 0, false, false
		}
		if !c.includes(v) {
			return 0, 0, false, true
		}
		n, known := lc.countAt(pos, gen)
		if !known {
			return 0, 0, false, false
		}
		return doms[i], n, true, true
	}
}

// lazyCount counts a constraint's matching pods on the nodes totals
// refresh: the first few by reading their pods, and once many nodes are
// refreshed (totals filled for the first time) from the plugin's
// MatchCounter, which reads only the pods carrying the selector's label
// pair and remembers per node counts across cycles.
type lazyCount struct {
	pl      *PodTopologySpread
	snap    *schedcore.Snapshot
	ns      string
	c       *topologySpreadConstraint
	calls   int
	sc      *schedcore.SelectorCount
	release func()
}

// lazyCountAfter is how many nodes are read directly before the counter is
// set up (which costs about a pass over the candidate nodes); tests lower
// it to exercise both ways.
var lazyCountAfter = 64

func (l *lazyCount) count(ni *schedcore.NodeInfo) int64 {
	l.calls++
	if l.sc == nil && l.calls > lazyCountAfter {
		cs, release := l.pl.counts.Counts(l.snap, l.ns, []labels.Selector{l.c.Selector})
		l.sc, l.release = &cs[0], release
	}
	if l.sc != nil {
		return int64(l.sc.Count(ni))
	}
	return int64(schedcore.CountMatchingPods(ni.Pods, l.c.Selector, l.ns))
}

// countAt is count for the node the snapshot lists at pos with generation
// gen, from the counter; false when the counter needs the node.
func (l *lazyCount) countAt(pos int, gen int64) (int64, bool) {
	if l.sc == nil {
		l.calls = lazyCountAfter
		cs, release := l.pl.counts.Counts(l.snap, l.ns, []labels.Selector{l.c.Selector})
		l.sc, l.release = &cs[0], release
	}
	v, ok := l.sc.CountAt(l.snap, pos, gen)
	return int64(v), ok
}

// done releases the counter, if one was set up.
func (l *lazyCount) done() {
	if l.release != nil {
		l.release()
	}
}

// softCounts adds to s.counts, in each domain counted there (the feasible
// nodes'), the pods each non-hostname soft constraint matches over every
// node that counts (as hardCounts: only with requireAllTopologies, when a
// node without every key counts nowhere), from the same totals.
func (pl *PodTopologySpread) softCounts(pod *v1.Pod, s *preScoreState, incl *inclusion) {
	snap := pl.handle.Snapshot()
	var doms []schedcore.Domain
	for i := range s.Constraints {
		if s.Constraints[i].TopologyKey == v1.LabelHostname {
			continue
		}
		doms = doms[:0]
		s.counts.ForEach(i, func(dom schedcore.Domain, _ int64) { doms = append(doms, dom) })
		if len(doms) == 0 {
			continue
		}
		lc := &lazyCount{pl: pl, snap: snap, ns: pod.Namespace, c: &s.Constraints[i]}
		pl.totals.ReadListed(totalsKey(pod, s.Constraints, i), snap, shareOf(lc, s.Constraints, i, s.counts, incl), shareAt(lc, s.Constraints, i, s.counts, incl), func(counts []int64, _ []int32) {
			for _, dom := range doms {
				if int(dom) < len(counts) && counts[dom] != 0 {
					s.counts.Add(i, dom, counts[dom])
				}
			}
		})
		lc.done()
	}
}
