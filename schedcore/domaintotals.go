package schedcore

import "sync"

// DomainTotals keeps, across cycles, what a plugin would otherwise sum over
// every node of every cycle: per domain of one topology key, the sum of
// the nodes' shares (matching pods) and how many nodes have a share there.
// A node's share is a function of the node and of what the totals' key
// captures (selector, namespace, terms, policies...): the totals are
// brought up to date for the nodes the snapshot replaced since the last
// use (NodeSlots.SyncSnapshot), so a cycle reads the nodes that changed,
// not every node.
type DomainTotals struct {
	mu   sync.Mutex
	used uint64
	snap *Snapshot
	// nodes holds each listed node's share.
	nodes NodeSlots[nodeShare]
	// counts and members are by domain (the snapshot's label column ids,
	// stable for its lifetime).
	counts  []int64
	members []int32
}

// nodeShare is what one node adds: count in domain dom, when in (the zero
// share, a fresh slot's, adds nothing).
type nodeShare struct {
	in    bool
	dom   Domain
	count int64
}

// TotalsCache holds the DomainTotals of the last keys used, at most max of
// them; the least recently used one goes first. Safe for concurrent use.
type TotalsCache struct {
	mu     sync.Mutex
	byKey  map[string]*DomainTotals
	clock  uint64
	maxLen int
}

// NewTotalsCache returns a cache keeping at most maxKeys totals (each holds
// a share per node).
func NewTotalsCache(maxKeys int) *TotalsCache {
	return &TotalsCache{byKey: map[string]*DomainTotals{}, maxLen: max(maxKeys, 1)}
}

// SetMaxKeys changes how many totals are kept (tests make the cache small
// to exercise evictions).
func (c *TotalsCache) SetMaxKeys(n int) { c.maxLen = max(n, 1) }

// Load fills key k of into (a DomainCounts over snap) with the totals of
// the cache key mk: share gives a node's domain of that key and count, ok
// false when the node adds nothing (a domain is counted when some node
// adds to it, even 0). share runs for the nodes replaced since mk's totals
// were last used (for every node the first time, after an eviction, or
// when they are far behind), one at a time. The key must capture every
// input of share but the node: two calls with equal keys share totals.
func (c *TotalsCache) Load(mk *MemoKey, snap *Snapshot, into *DomainCounts, k int, share func(ni *NodeInfo) (dom Domain, count int64, ok bool)) {
	t := c.get(mk.Key())
	defer t.mu.Unlock()
	t.sync(snap, share)
	into.Load(k, t.counts, t.members)
}

// LoadSparse is Load for shares that only a few nodes have: when the
// totals are filled from scratch (first use, after an eviction or on
// another snapshot), candidates lists the nodes of snap that may have a
// share (a node listed twice counts once), ok false when it cannot tell:
// share then runs for them alone, every other node of snap adding
// nothing, instead of for every node. Later syncs read the replaced
// nodes, as Load.
func (c *TotalsCache) LoadSparse(mk *MemoKey, snap *Snapshot, into *DomainCounts, k int, share func(ni *NodeInfo) (dom Domain, count int64, ok bool), candidates func() ([]*NodeInfo, bool)) {
	t := c.get(mk.Key())
	defer t.mu.Unlock()
	if !t.fillSparse(snap, share, candidates) {
		t.sync(snap, share)
	}
	into.Load(k, t.counts, t.members)
}

// ShareAt gives the share of the node a snapshot lists at position pos,
// of generation gen, from what is known by position (label columns,
// memos): known false when it takes the node itself (then share reads
// it).
type ShareAt func(pos int, gen int64) (dom Domain, count int64, ok, known bool)

// LoadListed is Load that, when the totals are filled from scratch (first
// use, after an eviction, on another snapshot), goes through snap's list
// by position with shareAt, reading a node (share) only where shareAt
// does not know its share, instead of reading every node.
func (c *TotalsCache) LoadListed(mk *MemoKey, snap *Snapshot, into *DomainCounts, k int, share func(ni *NodeInfo) (dom Domain, count int64, ok bool), shareAt ShareAt) {
	t := c.get(mk.Key())
	defer t.mu.Unlock()
	if !t.fillListed(snap, share, shareAt) {
		t.sync(snap, share)
	}
	into.Load(k, t.counts, t.members)
}

// ReadListed is Read with LoadListed's fill from scratch.
func (c *TotalsCache) ReadListed(mk *MemoKey, snap *Snapshot, share func(ni *NodeInfo) (dom Domain, count int64, ok bool), shareAt ShareAt, fn func(counts []int64, members []int32)) {
	t := c.get(mk.Key())
	defer t.mu.Unlock()
	if !t.fillListed(snap, share, shareAt) {
		t.sync(snap, share)
	}
	fn(t.counts, t.members)
}

// Read is Load with the totals handed to fn, by domain, instead: counts
// and members (the nodes with a share there). fn must not keep them.
func (c *TotalsCache) Read(mk *MemoKey, snap *Snapshot, share func(ni *NodeInfo) (dom Domain, count int64, ok bool), fn func(counts []int64, members []int32)) {
	t := c.get(mk.Key())
	defer t.mu.Unlock()
	t.sync(snap, share)
	fn(t.counts, t.members)
}

// get returns the totals of a key, locked.
func (c *TotalsCache) get(key string) *DomainTotals {
	c.mu.Lock()
	t := c.byKey[key]
	if t == nil {
		if len(c.byKey) >= c.maxLen {
			evictOldest(c.byKey, func(t *DomainTotals) uint64 { return t.used })
		}
		t = &DomainTotals{}
		c.byKey[key] = t
	}
	c.clock++
	t.used = c.clock
	c.mu.Unlock()
	t.mu.Lock()
	return t
}

// sync brings the totals in line with snap's nodes.
func (t *DomainTotals) sync(snap *Snapshot, share func(ni *NodeInfo) (Domain, int64, bool)) {
	if t.snap != snap {
		// Domains are another snapshot's: start over.
		t.snap, t.nodes, t.counts, t.members = snap, NodeSlots[nodeShare]{}, t.counts[:0], t.members[:0]
	}
	t.nodes.SyncSnapshot(snap, t.remove, func(ni *NodeInfo, s *nodeShare) {
		t.remove(s)
		if ni.Node() == nil {
			return
		}
		dom, count, ok := share(ni)
		if !ok || dom < 0 {
			return
		}
		*s = nodeShare{in: true, dom: dom, count: count}
		for int(dom) >= len(t.counts) {
			t.counts, t.members = append(t.counts, 0), append(t.members, 0)
		}
		t.counts[dom] += count
		t.members[dom]++
	})
}

// remove takes a node's share out of the totals.
func (t *DomainTotals) remove(s *nodeShare) {
	if s.in {
		t.counts[s.dom] -= s.count
		t.members[s.dom]--
	}
	*s = nodeShare{}
}

// fillSparse fills the totals from scratch from the candidates' shares,
// when they are empty or another snapshot's (a full pass is due) and
// candidates can tell; false when it did not.
func (t *DomainTotals) fillSparse(snap *Snapshot, share func(ni *NodeInfo) (Domain, int64, bool), candidates func() ([]*NodeInfo, bool)) bool {
	list := snap.nodeInfoList
	if t.snap == snap && len(t.nodes.vals) > 0 || len(snap.listGens) != len(list) {
		return false
	}
	nodes, ok := candidates()
	if !ok {
		return false
	}
	t.snap, t.counts, t.members = snap, t.counts[:0], t.members[:0]
	t.nodes.fillZero(snap)
	for _, ni := range nodes {
		i := indexIn(list, ni)
		if i < 0 || t.nodes.vals[i].in || ni.Node() == nil {
			continue
		}
		ni = list[i]
		dom, count, ok := share(ni)
		if !ok || dom < 0 {
			continue
		}
		t.fill(i, dom, count)
	}
	return true
}

// fill counts the node at list position i in domain dom, count times, in
// a fill from scratch.
func (t *DomainTotals) fill(i int, dom Domain, count int64) {
	t.nodes.vals[i] = nodeShare{in: true, dom: dom, count: count}
	for int(dom) >= len(t.counts) {
		t.counts, t.members = append(t.counts, 0), append(t.members, 0)
	}
	t.counts[dom] += count
	t.members[dom]++
}

// fillListed fills the totals from scratch, node by node by position
// (shareAt, else share), when they are empty or another snapshot's (a full
// pass is due); false when it did not.
func (t *DomainTotals) fillListed(snap *Snapshot, share func(ni *NodeInfo) (Domain, int64, bool), shareAt ShareAt) bool {
	list := snap.nodeInfoList
	if t.snap == snap && len(t.nodes.vals) > 0 || len(snap.listGens) != len(list) {
		return false
	}
	t.snap, t.counts, t.members = snap, t.counts[:0], t.members[:0]
	t.nodes.fillZero(snap)
	for i, gen := range snap.listGens {
		dom, count, ok, known := shareAt(i, gen)
		if !known {
			ni := list[i]
			if ni.Node() == nil {
				continue
			}
			dom, count, ok = share(ni)
		}
		if !ok || dom < 0 {
			continue
		}
		t.fill(i, dom, count)
	}
	return true
}

// fillZero sets a zero slot for every node of snap's list, as computed
// from the node listed now (its generation, from the snapshot's column),
// and puts the slots in line with snap's change log.
func (n *NodeSlots[S]) fillZero(snap *Snapshot) {
	size := len(snap.nodeInfoList)
	if cap(n.vals) >= size {
		n.vals = n.vals[:size]
		clear(n.vals)
	} else {
		n.vals = make([]S, size)
	}
	n.gens = append(n.gens[:0], snap.listGens...)
	n.epoch, n.seq = snap.changes.epoch, snap.changes.seq
}
