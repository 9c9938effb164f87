package podtopologyspread

import (
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// domainTotals is one hard constraint's PreFilter counts kept across
// cycles: the pods its selector matches in the pod's namespace, per domain
// of its topology key, over every node that counts (it has all the pod's
// constraints' topology keys and passes the constraint's node inclusion
// policies), and how many such nodes each domain has (a domain is counted
// when it has one, even with no matching pod). A cycle brings them up to
// date for the nodes replaced since the last one (schedcore.NodeSlots), so
// PreFilter reads the nodes that changed, not every node.
//
// Everything a node's share depends on but the node is in the totals' key
// (totalsKey): two pods with equal keys get each other's totals.
type domainTotals struct {
	mu   sync.Mutex
	used uint64
	snap *schedcore.Snapshot
	// nodes holds each listed node's share.
	nodes schedcore.NodeSlots[nodeShare]
	// counts and members are by domain id (the snapshot's label column
	// ids, stable for its lifetime).
	counts  []int64
	members []int32
}

// nodeShare is what one node adds to its domain: count matching pods, in
// domain dom, when in (the zero share, a fresh slot's, adds nothing).
type nodeShare struct {
	in    bool
	dom   schedcore.Domain
	count int64
}

// totalsCache holds the domainTotals of the last pods' constraints, at
// most maxTotals of them; the least recently used one goes first.
type totalsCache struct {
	mu     sync.Mutex
	byKey  map[string]*domainTotals
	clock  uint64
	maxLen int
}

// maxTotals bounds the constraints whose totals are kept: each holds a
// share per node.
const maxTotals = 64

func newTotalsCache() *totalsCache {
	return &totalsCache{byKey: map[string]*domainTotals{}, maxLen: maxTotals}
}

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

// get returns the totals of a key, locked: call unlock when done.
func (tc *totalsCache) get(k *schedcore.MemoKey) *domainTotals {
	key := k.Key()
	tc.mu.Lock()
	t := tc.byKey[key]
	if t == nil {
		if len(tc.byKey) >= tc.maxLen {
			var oldest string
			var at uint64
			first := true
			for k, t := range tc.byKey {
				if first || t.used < at {
					oldest, at, first = k, t.used, false
				}
			}
			delete(tc.byKey, oldest)
		}
		t = &domainTotals{}
		tc.byKey[key] = t
	}
	tc.clock++
	t.used = tc.clock
	tc.mu.Unlock()
	t.mu.Lock()
	return t
}

// sync brings the totals of constraint i in line with counts' snapshot:
// share computes a node's share for the nodes replaced since the last
// sync (all of them for another snapshot).
func (t *domainTotals) sync(snap *schedcore.Snapshot, share func(ni *schedcore.NodeInfo) nodeShare) {
	if t.snap != snap {
		// Domain ids are another snapshot's: start over.
		t.snap, t.nodes, t.counts, t.members = snap, schedcore.NodeSlots[nodeShare]{}, t.counts[:0], t.members[:0]
	}
	t.nodes.SyncSnapshot(snap, t.remove, func(ni *schedcore.NodeInfo, s *nodeShare) {
		t.remove(s)
		if ni.Node() == nil {
			return
		}
		*s = share(ni)
		if !s.in {
			return
		}
		for int(s.dom) >= len(t.counts) {
			t.counts, t.members = append(t.counts, 0), append(t.members, 0)
		}
		t.counts[s.dom] += s.count
		t.members[s.dom]++
	})
}

// remove takes a node's share out of the totals.
func (t *domainTotals) remove(s *nodeShare) {
	if s.in {
		t.counts[s.dom] -= s.count
		t.members[s.dom]--
	}
	*s = nodeShare{}
}

// hardCounts fills s.counts (key i: constraint i's topology key) from the
// constraints' totals, bringing them up to date first.
func (pl *PodTopologySpread) hardCounts(pod *v1.Pod, s *preFilterState, incl *inclusion) {
	snap := pl.handle.Snapshot()
	for i := range s.Constraints {
		c := &s.Constraints[i]
		t := pl.totals.get(totalsKey(pod, s.Constraints, i))
		t.sync(snap, func(ni *schedcore.NodeInfo) nodeShare {
			var buf [4]schedcore.Domain
			doms, all := s.counts.NodeDomains(ni, buf[:0])
			if !all || !c.includes(incl.verdict(ni)) {
				return nodeShare{}
			}
			return nodeShare{in: true, dom: doms[i], count: int64(schedcore.CountMatchingPods(ni.Pods, c.Selector, pod.Namespace))}
		})
		s.counts.Load(i, t.counts, t.members)
		t.mu.Unlock()
	}
}
