package schedcore

import (
	"context"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/labels"
)

// MatchCounter counts, per node, the pods of a namespace that a selector
// matches, across cycles: a node's count is remembered while the node is
// unchanged (its generation), and a selector with an equality requirement
// is counted from the snapshot's PodLabelIndex, visiting only the pods
// carrying the label pair (remembered per node only when they are many:
// denseCandidates).
type MatchCounter struct {
	memo *NodeMemo[int32]
}

// NewMatchCounter returns a counter remembering at most maxSelectors
// selectors' counts.
func NewMatchCounter(maxSelectors int) *MatchCounter {
	return &MatchCounter{memo: NewNodeMemo[int32](maxSelectors)}
}

// SelectorCount is one selector's counts for a cycle (from Counts).
type SelectorCount struct {
	t   *memoTable[int32]
	sel labels.Selector
	ns  string
	// list and byPos hold the counts by list position: every node's from
	// the index (nodes without a candidate pod count 0) when the selector
	// has an equality requirement, else (after Settle) the given nodes',
	// -1 for the others. Count finds a node's position once. An indexed
	// count with few non-zero nodes (sparseCounts) has no byPos: their
	// positions, ascending, and counts are in nzPos and nzCount.
	list    []*NodeInfo
	byPos   []int32
	nzPos   []int32
	nzCount []int32
	// nonZero are the nodes whose index count is not 0 (indexed only).
	nonZero []*NodeInfo
	indexed bool
}

// Counts returns a SelectorCount per selector for namespace ns over snap
// (equal selectors share one); call release when the cycle's counting is
// done. An empty selector counts nothing.
func (m *MatchCounter) Counts(snap *Snapshot, ns string, sels []labels.Selector) (cs []SelectorCount, release func()) {
	cs = make([]SelectorCount, len(sels))
	keys := make([]string, len(sels))
	var held []*memoTable[int32]
next:
	for i, sel := range sels {
		cs[i] = SelectorCount{sel: sel, ns: ns}
		if sel.Empty() {
			continue
		}
		key := new(MemoKey).String(ns).Selector(sel)
		keys[i] = key.Key()
		for j := 0; j < i; j++ {
			if keys[j] == keys[i] {
				cs[i] = cs[j]
				continue next
			}
		}
		list := snap.nodeInfoList
		var nzPos, nzCount []int32
		var nonZero []*NodeInfo
		var t *memoTable[int32]
		indexed := snap.podIndex.candidates(snap, sel, ns, func(candidates int) func(ni *NodeInfo, pods []*PodInfo) {
			if denseCandidates(candidates, snap.NumNodes()) {
				t = m.memo.acquire(key, snap.NumNodes())
			}
			// At most one node per candidate pod has a count: sized at
			// once up to what sparse counts keep (past that, byPos).
			if c := min(candidates, max(8, len(list)/16)+1); c > 0 {
				nzPos, nzCount, nonZero = make([]int32, 0, c), make([]int32, 0, c), make([]*NodeInfo, 0, c)
			}
			return func(ni *NodeInfo, pods []*PodInfo) {
				var c int32
				if t == nil {
					c = countOf(CountMatchingPods(pods, sel, ns))
				} else if v, ok := t.get(ni); ok {
					c = v
				} else {
					c = countOf(CountMatchingPods(pods, sel, ns))
					t.put(ni, c)
				}
				j := indexIn(list, ni)
				if c == 0 || j < 0 {
					return
				}
				nzPos, nzCount = append(nzPos, int32(j)), append(nzCount, c)
				nonZero = append(nonZero, ni)
			}
		})
		if t != nil {
			t.release()
		}
		if indexed {
			cs[i].list, cs[i].nonZero, cs[i].indexed = list, nonZero, true
			if sparseCounts(nzPos, len(list)) {
				cs[i].nzPos, cs[i].nzCount = nzPos, nzCount
			} else if len(nzPos) > 0 {
				byPos := make([]int32, len(list))
				for k, j := range nzPos {
					byPos[j] = nzCount[k]
				}
				cs[i].byPos = byPos
			}
			continue
		}
		t = m.memo.acquire(key, snap.NumNodes())
		cs[i].t = t
		held = append(held, t)
	}
	return cs, func() {
		for _, t := range held {
			t.release()
		}
	}
}

// sparseCounts reports whether the non-zero counts at positions pos (in
// the order the index visited them) of a list of n nodes are kept as they
// are, looked up by binary search, rather than spread into a count per
// position: when they are few (a 20 KB column per selector and cycle at
// 5000 nodes was a tenth of the bytes a dry-run allocated) and ascending.
func sparseCounts(pos []int32, n int) bool {
	if len(pos) > max(8, n/16) {
		return false
	}
	for k := 1; k < len(pos); k++ {
		if pos[k] <= pos[k-1] {
			return false
		}
	}
	return true
}

// sparseAt is the indexed count at list position i from nzPos/nzCount.
func (c *SelectorCount) sparseAt(i int) int32 {
	if k, ok := slices.BinarySearch(c.nzPos, int32(i)); ok {
		return c.nzCount[k]
	}
	return 0
}

// NonZero returns the nodes of the snapshot whose count may not be 0,
// with ok, when the counts came from the index: every other node of the
// snapshot counts 0, so a pass summing counts per domain visits these
// alone. ok is false when any node may count.
func (c SelectorCount) NonZero() (nodes []*NodeInfo, ok bool) {
	if c.sel == nil || c.sel.Empty() {
		return nil, true
	}
	return c.nonZero, c.indexed
}

// Settle returns the counter with the counts of nodes computed now (in
// parallel), for reading after the cycle's release (in Score): a counter
// from the index is returned as it is. The other nodes are counted when
// asked.
func (c SelectorCount) Settle(ctx context.Context, par Parallelizer, snap *Snapshot, nodes []*NodeInfo) SelectorCount {
	if c.indexed || c.t == nil {
		return c
	}
	list := snap.nodeInfoList
	byPos := make([]int32, len(list))
	for i := range byPos {
		byPos[i] = -1
	}
	par.Until(ctx, len(nodes), func(n int) {
		if i := indexIn(list, nodes[n]); i >= 0 {
			byPos[i] = int32(c.Count(nodes[n]))
		}
	})
	return SelectorCount{sel: c.sel, ns: c.ns, list: list, byPos: byPos}
}

// Count returns the node's count. Safe in parallel for distinct nodes.
// A node of the snapshot list is matched by its position and node object,
// so a copy of it with pods added (nominated pods, preemption's what-ifs)
// gets the listed node's count: callers pass the snapshot's own NodeInfos,
// as PreFilter and PreScore do.
func (c SelectorCount) Count(ni *NodeInfo) int {
	switch {
	case c.list != nil:
		if i := indexIn(c.list, ni); i >= 0 {
			if c.byPos == nil {
				return int(c.sparseAt(i))
			}
			if v := c.byPos[i]; v >= 0 {
				return int(v)
			}
		}
		return CountMatchingPods(ni.Pods, c.sel, c.ns)
	case c.t == nil:
		return 0
	}
	if v, ok := c.t.get(ni); ok {
		return int(v)
	}
	v := CountMatchingPods(ni.Pods, c.sel, c.ns)
	c.t.put(ni, countOf(v))
	return v
}

// countOf is a node's count of matching pods as remembered: a node's pods
// are far fewer than 1<<31.
func countOf(n int) int32 { return int32(min(n, math.MaxInt32)) }

// TermCounter counts, per node, the pods an incoming pod's affinity term
// matches (terminating pods included, as kube's InterPodAffinity counts
// them): from the snapshot's PodLabelIndex when the term's selector has an equality
// requirement and its namespaces are a list, visiting only the pods
// carrying the label pair; else node by node. Either way a node's count is
// remembered across cycles while the node is unchanged.
type TermCounter struct {
	memo *NodeMemo[int32]
}

// NewTermCounter returns a counter remembering at most maxTerms terms'
// node-by-node counts.
func NewTermCounter(maxTerms int) *TermCounter {
	return &TermCounter{memo: NewNodeMemo[int32](maxTerms)}
}

// Counts returns the nodes of snap where the term matches some pod, with
// how many, in no particular order. A node may be listed once per
// namespace of the term, with that namespace's count: a caller sums them.
// The term's namespace selector is read with no namespace labels: merge it
// into Namespaces first (kube's mergeAffinityTermNamespacesIfNotEmpty).
func (tc *TermCounter) Counts(ctx context.Context, par Parallelizer, snap *Snapshot, term *AffinityTerm) (nodes []*NodeInfo, counts []int32) {
	if !term.NamespaceSelector.Matches(labels.Set(nil)) {
		indexed := true
		for ns := range term.Namespaces {
			// A node's count in ns is remembered while the node is
			// unchanged when the candidate pods are many
			// (denseCandidates): a label pair most pods carry.
			var t *memoTable[int32]
			indexed = snap.podIndex.candidates(snap, term.Selector, ns, func(candidates int) func(ni *NodeInfo, pods []*PodInfo) {
				if denseCandidates(candidates, snap.NumNodes()) {
					t = tc.memo.acquire(new(MemoKey).AffinityTerm(term).String(ns), snap.NumNodes())
				}
				return func(ni *NodeInfo, pods []*PodInfo) {
					var c int32
					ok := false
					if t != nil {
						c, ok = t.get(ni)
					}
					if !ok {
						for _, pi := range pods {
							if term.Matches(pi.Pod, nil) {
								c++
							}
						}
						if t != nil {
							t.put(ni, c)
						}
					}
					if c == 0 {
						return
					}
					nodes, counts = append(nodes, ni), append(counts, c)
				}
			})
			if t != nil {
				t.release()
			}
			if !indexed {
				break
			}
		}
		if indexed {
			return nodes, counts
		}
		nodes, counts = nil, nil
	}
	all := snap.List()
	byNode := tc.memo.Values(ctx, par, new(MemoKey).AffinityTerm(term), all, func(ni *NodeInfo) (c int32) {
		for _, pi := range ni.Pods {
			if term.Matches(pi.Pod, nil) {
				c++
			}
		}
		return c
	})
	for n, c := range byNode {
		if c != 0 {
			nodes, counts = append(nodes, all[n]), append(counts, c)
		}
	}
	return nodes, counts
}

// CountMatchingPods counts the pods of namespace ns that the selector
// matches, skipping terminating pods (kube #87621). An empty selector
// counts nothing.
func CountMatchingPods(pods []*PodInfo, sel labels.Selector, ns string) int {
	if sel.Empty() {
		return 0
	}
	n := 0
	for _, pi := range pods {
		if podMatches(pi, sel, ns) {
			n++
		}
	}
	return n
}

// PodCounted reports whether CountMatchingPods counts pi (for sel and
// ns), so that totals of such counts can tell a pod that changes nothing
// (PodCounts).
func PodCounted(pi *PodInfo, sel labels.Selector, ns string) bool {
	return !sel.Empty() && podMatches(pi, sel, ns)
}

func podMatches(pi *PodInfo, sel labels.Selector, ns string) bool {
	p := pi.Pod
	return p.DeletionTimestamp == nil && p.Namespace == ns && sel.Matches(labels.Set(p.Labels))
}

// LazyCount counts one selector's matching pods node by node, for a pass
// over the nodes a TotalsCache refreshes: the first After nodes by
// reading their pods, and past them (totals filled for the first time)
// through the MatchCounter, which reads only the pods carrying the
// selector's label pair and remembers per node counts across cycles.
// Call Done when the pass is over.
type LazyCount struct {
	m    *MatchCounter
	snap *Snapshot
	ns   string
	sel  labels.Selector
	// After is how many nodes are read directly before the counter is set
	// up (which costs about a pass over the candidate nodes).
	After   int
	calls   int
	sc      *SelectorCount
	release func()
}

// Lazy returns a LazyCount of sel's matching pods of namespace ns, set up
// after 64 nodes.
func (m *MatchCounter) Lazy(snap *Snapshot, ns string, sel labels.Selector) *LazyCount {
	return &LazyCount{m: m, snap: snap, ns: ns, sel: sel, After: 64}
}

// Count returns the node's matching pods.
func (l *LazyCount) Count(ni *NodeInfo) int64 {
	l.calls++
	if l.sc == nil && l.calls > l.After {
		l.setUp()
	}
	if l.sc != nil {
		return int64(l.sc.Count(ni))
	}
	return int64(CountMatchingPods(ni.Pods, l.sel, l.ns))
}

// Counts tells whether Count counts a pod (a PodCounts for the totals).
func (l *LazyCount) Counts(pi *PodInfo) bool { return PodCounted(pi, l.sel, l.ns) }

// Candidates returns the nodes that may hold matching pods, from the
// counter (set up now), when it counts from the pod label index; false
// when any node may.
func (l *LazyCount) Candidates() ([]*NodeInfo, bool) {
	l.setUp()
	return l.sc.NonZero()
}

func (l *LazyCount) setUp() {
	if l.sc == nil {
		cs, release := l.m.Counts(l.snap, l.ns, []labels.Selector{l.sel})
		l.sc, l.release = &cs[0], release
	}
}

// Done releases the counter, if one was set up.
func (l *LazyCount) Done() {
	if l.release != nil {
		l.release()
	}
}

// NodesWithMatches returns the nodes the counts for which use is true may
// count pods on: the union of their NonZero nodes (in order, without
// repeats), or all when one of them cannot tell.
func NodesWithMatches(all []*NodeInfo, counts []SelectorCount, use func(i int) bool) []*NodeInfo {
	var lists [][]*NodeInfo
	for i := range counts {
		if !use(i) {
			continue
		}
		nodes, ok := counts[i].NonZero()
		if !ok {
			return all
		}
		if len(nodes) > 0 && (len(lists) == 0 || &lists[0][0] != &nodes[0]) {
			lists = append(lists, nodes)
		}
	}
	switch len(lists) {
	case 0:
		return nil
	case 1:
		return lists[0]
	}
	seen := map[*NodeInfo]bool{}
	var out []*NodeInfo
	for _, l := range lists {
		for _, ni := range l {
			if !seen[ni] {
				seen[ni] = true
				out = append(out, ni)
			}
		}
	}
	return out
}
