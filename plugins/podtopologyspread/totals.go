package podtopologyspread

import (
	v1 "k8s.io/api/core/v1"

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
// i, and in which domain: its inclusion policies, every constraint's
// topology key, and the pod's required node affinity and tolerations when
// a policy honours them. Not the selector: many workloads share them.
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

// hardCounts fills s.counts with the pods each constraint matches per
// domain over every node that counts (it has all the topology keys and
// passes the inclusion policies), from totals kept across cycles (members
// per domain: membersKey, matching pods: readCounts).
func (pl *PodTopologySpread) hardCounts(pod *v1.Pod, s *preFilterState, incl *inclusion) {
	snap := pl.handle.Snapshot()
	for i := range s.Constraints {
		pl.readCounts(pod, s.Constraints, i, s.counts, incl, func(counts []int64) {
			pl.members.Read(membersKey(pod, s.Constraints, i), snap, memberOf(s.Constraints, i, s.counts, incl), func(_ []int64, members []int32) {
				s.counts.Load(i, counts, members)
			})
		})
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

// readCounts calls fn with constraint i's matching pods per domain (by
// counts' domains) over every node that counts (memberOf), from totals
// kept across cycles (countsKey), which read only the nodes replaced
// since; filled from scratch, only the nodes with matching pods (a
// LazyCount: tests lower lazyCountAfter to exercise both of its ways).
func (pl *PodTopologySpread) readCounts(pod *v1.Pod, constraints []topologySpreadConstraint, i int, counts *schedcore.DomainCounts, incl *inclusion, fn func(counts []int64)) {
	snap := pl.handle.Snapshot()
	lc := pl.counts.Lazy(snap, pod.Namespace, constraints[i].Selector)
	if lazyCountAfter >= 0 {
		lc.After = lazyCountAfter
	}
	member := memberOf(constraints, i, counts, incl)
	pl.totals.ReadSparse(countsKey(pod, constraints, i), snap, func(ni *schedcore.NodeInfo) (schedcore.Domain, int64, bool) {
		dom, _, ok := member(ni)
		if !ok {
			return 0, 0, false
		}
		n := lc.Count(ni)
		return dom, n, n > 0
	}, lc.Candidates, lc.Counts, func(c []int64, _ []int32) { fn(c) })
	lc.Done()
}

// lazyCountAfter, when not negative, replaces LazyCount.After (tests).
var lazyCountAfter = -1

// softCounts adds to s.counts, in each domain counted there (the feasible
// nodes'), the pods each non-hostname soft constraint matches over every
// node that counts (as hardCounts: only with requireAllTopologies, when a
// node without every key counts nowhere), from the same totals of counts.
func (pl *PodTopologySpread) softCounts(pod *v1.Pod, s *preScoreState, incl *inclusion) {
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
		pl.readCounts(pod, s.Constraints, i, s.counts, incl, func(counts []int64) {
			for _, dom := range doms {
				if int(dom) < len(counts) && counts[dom] != 0 {
					s.counts.Add(i, dom, counts[dom])
				}
			}
		})
	}
}
