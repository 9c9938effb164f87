package podtopologyspread

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// maxTotals bounds the counts kept across cycles (schedcore.TotalsCache):
// each holds a share per node with matching pods (or per node, for a
// selector the pod label index cannot serve).
const maxTotals = 64

// maxMembers bounds the members kept across cycles: each holds a share
// per node. Workloads share them (membersKey), so they are few.
const maxMembers = 64

// membersKey captures what decides whether a node counts for constraint
// i, and in which domain: the constraint's inclusion policies, every
// constraint's topology key (in order; key i is the constraint's), and the
// pod's required node affinity and tolerations when a policy honours
// them. Neither the selector nor the namespace: the constraints of many
// workloads share these totals, so a workload seen for the first time
// reads the nodes holding its matching pods (countsKey), not every node.
func membersKey(pod *v1.Pod, constraints []topologySpreadConstraint, i int) *schedcore.MemoKey {
	c := &constraints[i]
	k := new(schedcore.MemoKey).String("members").Int(int64(i)).
		String(string(c.NodeAffinityPolicy)).String(string(c.NodeTaintsPolicy)).Int(int64(len(constraints)))
	for j := range constraints {
		k.String(constraints[j].TopologyKey)
	}
	if c.NodeAffinityPolicy == v1.NodeInclusionPolicyHonor || c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
		k = helper.TolerationsKey(helper.RequiredAffinityKey(k, pod), pod)
	}
	return k
}

// countsKey captures what a node's count for constraint i depends on:
// membersKey's inputs (only a node that counts has a count), the pod's
// namespace and the constraint's selector.
func countsKey(pod *v1.Pod, constraints []topologySpreadConstraint, i int) *schedcore.MemoKey {
	return membersKey(pod, constraints, i).String("counts").String(pod.Namespace).Selector(constraints[i].Selector)
}

// hardCounts fills s.counts (key i: constraint i's topology key) with the
// pods each constraint matches per domain over every node that counts (it
// has all the constraints' topology keys and passes the constraint's
// inclusion policies), from totals kept across cycles: the nodes that
// count per domain (membersKey) and their matching pods (countsKey), each
// reading only the nodes replaced since it was last used. Counts filled
// from scratch read the nodes holding matching pods alone.
func (pl *PodTopologySpread) hardCounts(pod *v1.Pod, s *preFilterState, incl *inclusion) {
	snap := pl.handle.Snapshot()
	for i := range s.Constraints {
		lc := &lazyCount{pl: pl, snap: snap, ns: pod.Namespace, c: &s.Constraints[i]}
		pl.totals.ReadSparse(countsKey(pod, s.Constraints, i), snap, countOf(lc, s.Constraints, i, s.counts, incl), lc.candidates, lc.counts, func(counts []int64, _ []int32) {
			pl.members.Read(membersKey(pod, s.Constraints, i), snap, memberOf(s.Constraints, i, s.counts, incl), func(_ []int64, members []int32) {
				s.counts.Load(i, counts, members)
			})
		})
		lc.done()
	}
}

// memberOf returns a node's share of constraint i's members: its domain,
// when it has every constraint's key (counts' keys) and passes the
// constraint's inclusion policies.
func memberOf(constraints []topologySpreadConstraint, i int, counts *schedcore.DomainCounts, incl *inclusion) func(ni *schedcore.NodeInfo) (schedcore.Domain, int64, bool) {
	c := &constraints[i]
	return func(ni *schedcore.NodeInfo) (schedcore.Domain, int64, bool) {
		var buf [4]schedcore.Domain
		doms, all := counts.NodeDomains(ni, buf[:0])
		if !all || !c.includes(incl.verdict(ni)) {
			return 0, 0, false
		}
		return doms[i], 0, true
	}
}

// countOf returns a node's share of constraint i's counts: its matching
// pods in its domain, when it counts (memberOf) and holds some.
func countOf(lc *lazyCount, constraints []topologySpreadConstraint, i int, counts *schedcore.DomainCounts, incl *inclusion) func(ni *schedcore.NodeInfo) (schedcore.Domain, int64, bool) {
	member := memberOf(constraints, i, counts, incl)
	return func(ni *schedcore.NodeInfo) (schedcore.Domain, int64, bool) {
		dom, _, ok := member(ni)
		if !ok {
			return 0, 0, false
		}
		n := lc.count(ni)
		return dom, n, n > 0
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

// counts tells whether count counts a pod (countOf's shares keep across
// a pod it does not count: PodCounts).
func (l *lazyCount) counts(pi *schedcore.PodInfo) bool {
	return schedcore.PodCounted(pi, l.c.Selector, l.ns)
}

// candidates returns the nodes that may hold matching pods, from the
// counter (set up now), when it counts from the pod label index; false
// when any node may.
func (l *lazyCount) candidates() ([]*schedcore.NodeInfo, bool) {
	l.setUp()
	return l.sc.NonZero()
}

// setUp sets up the counter, if it is not yet.
func (l *lazyCount) setUp() {
	if l.sc == nil {
		l.calls = lazyCountAfter
		cs, release := l.pl.counts.Counts(l.snap, l.ns, []labels.Selector{l.c.Selector})
		l.sc, l.release = &cs[0], release
	}
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
// node without every key counts nowhere), from the same totals of counts.
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
		pl.totals.ReadSparse(countsKey(pod, s.Constraints, i), snap, countOf(lc, s.Constraints, i, s.counts, incl), lc.candidates, lc.counts, func(counts []int64, _ []int32) {
			for _, dom := range doms {
				if int(dom) < len(counts) && counts[dom] != 0 {
					s.counts.Add(i, dom, counts[dom])
				}
			}
		})
		lc.done()
	}
}
