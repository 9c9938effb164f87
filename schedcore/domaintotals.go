package schedcore

import (
	"math"
	"sync"
)

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
	// shares holds each listed node's share (a nodeShare), by list
	// position, as of the snapshot's change log position epoch, seq: a
	// position the log has not named since holds the node the share was
	// computed from (the snapshot puts a fresh NodeInfo at a position
	// whose node changed). Totals filled from a few candidates
	// (fillSparse) hold them in sparse instead, by position, the
	// positions without a share left out; shares is then nil.
	shares []nodeShare
	sparse map[int32]nodeShare
	// size is the length of the list the shares are for.
	size  int
	epoch int64
	seq   uint64
	// wide holds, by list position, the shares that do not fit a
	// nodeShare.
	wide map[int32]wideShare
	// counts and members are by domain (the snapshot's label column ids,
	// stable for its lifetime).
	counts  []int64
	members []int32
	// values is how many domains the key has (its label column's
	// values), when the caller tells (Load*): the first growth of counts
	// and members takes them to that length at once.
	values int
	// nodeShares is the cache's (NewNodeTotalsCache); nodesVersion is
	// the snapshot's nodesVersion the shares were last brought up to.
	nodeShares   bool
	nodesVersion int64
}

// nodeShare is what one node adds, in 4 bytes: count (the low
// shareCountBits) in domain dom-1 (the high bits), when dom > 0 (the zero
// share adds nothing); wideShareMark when the share is in
// DomainTotals.wide. Most shares are a few pods in one of a few
// thousand domains; a table of them per key and per node is kept for
// dozens of keys.
type nodeShare uint32

// wideShare is a share that does not fit a nodeShare.
type wideShare struct {
	dom   Domain
	count int64
}

const (
	shareCountBits = 12
	shareCountMask = 1<<shareCountBits - 1
	// wideShareMark marks a share held in DomainTotals.wide; no packed
	// share has all bits set (packShare).
	wideShareMark nodeShare = math.MaxUint32
)

// packShare returns the nodeShare of count in domain dom, false when it
// does not fit one.
func packShare(dom Domain, count int64) (nodeShare, bool) {
	d := int64(dom) + 1
	if count < 0 || count > shareCountMask || d <= 0 || d >= 1<<(32-shareCountBits)-1 {
		return 0, false
	}
	return nodeShare(d<<shareCountBits | count), true
}

// unpack returns a packed share's domain and count (dom -1: none).
func (s nodeShare) unpack() (dom Domain, count int64) {
	return Domain(s>>shareCountBits) - 1, int64(s & shareCountMask)
}

// TotalsCache holds the DomainTotals of the last keys used, at most max of
// them; the least recently used one goes first. Safe for concurrent use.
type TotalsCache struct {
	mu     sync.Mutex
	byKey  map[string]*DomainTotals
	clock  uint64
	maxLen int
	// nodeShares: see NewNodeTotalsCache.
	nodeShares bool
}

// NewTotalsCache returns a cache keeping at most maxKeys totals (each holds
// a share per node).
func NewTotalsCache(maxKeys int) *TotalsCache {
	return &TotalsCache{byKey: map[string]*DomainTotals{}, maxLen: max(maxKeys, 1)}
}

// NewNodeTotalsCache is NewTotalsCache for shares that depend on the node
// object alone (its labels, taints), not on its pods: while no listed
// node object changed (the snapshot's nodesVersion), a sync keeps the
// shares instead of computing again those of the nodes whose pods
// changed, which is most of a cycle's work for such totals.
func NewNodeTotalsCache(maxKeys int) *TotalsCache {
	c := NewTotalsCache(maxKeys)
	c.nodeShares = true
	return c
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
	t.values = into.keyValues(k)
	t.sync(snap, share, nil)
	into.Load(k, t.counts, t.members)
}

// LoadSparse is Load for shares that only a few nodes have: when the
// totals are filled from scratch (first use, after an eviction or on
// another snapshot), candidates lists the nodes of snap that may have a
// share (a node listed twice counts once), ok false when it cannot tell:
// share then runs for them alone, every other node of snap adding
// nothing, instead of for every node. Later syncs read the replaced
// nodes, as Load, but for those counts (when not nil) tells are unchanged
// (PodCounts).
func (c *TotalsCache) LoadSparse(mk *MemoKey, snap *Snapshot, into *DomainCounts, k int, share func(ni *NodeInfo) (dom Domain, count int64, ok bool), candidates func() ([]*NodeInfo, bool), counts PodCounts) {
	t := c.get(mk.Key())
	defer t.mu.Unlock()
	t.values = into.keyValues(k)
	if !t.fillSparse(snap, share, candidates) {
		t.sync(snap, share, counts)
	}
	into.Load(k, t.counts, t.members)
}

// PodCounts tells whether a pod counts in the share of the node it is on,
// for shares that are a function of the node object and of the pods on it
// it counts alone (pods matching a selector): a node replaced by one with
// a pod more that does not count, and nothing else changed, keeps its
// share, which a sync then does not compute again.
type PodCounts func(p *PodInfo) bool

// appendedPod returns the pod ni holds beyond old when ni is old with one
// pod appended and nothing else a share may read changed (node object,
// other pods: PodInfos are never changed once cached), nil otherwise.
func appendedPod(old, ni *NodeInfo) *PodInfo {
	if ni.node != old.node || len(ni.Pods) != len(old.Pods)+1 {
		return nil
	}
	for j, p := range old.Pods {
		if ni.Pods[j] != p {
			return nil
		}
	}
	return ni.Pods[len(old.Pods)]
}

// ReadSparse is Read for shares that only a few nodes have (LoadSparse):
// a fill from scratch visits the candidates alone when candidates can
// tell.
func (c *TotalsCache) ReadSparse(mk *MemoKey, snap *Snapshot, share func(ni *NodeInfo) (dom Domain, count int64, ok bool), candidates func() ([]*NodeInfo, bool), counts PodCounts, fn func(counts []int64, members []int32)) {
	t := c.get(mk.Key())
	defer t.mu.Unlock()
	if !t.fillSparse(snap, share, candidates) {
		t.sync(snap, share, counts)
	}
	fn(t.counts, t.members)
}

// Read is Load with the totals handed to fn, by domain, instead: counts
// and members (the nodes with a share there). fn must not keep them.
func (c *TotalsCache) Read(mk *MemoKey, snap *Snapshot, share func(ni *NodeInfo) (dom Domain, count int64, ok bool), fn func(counts []int64, members []int32)) {
	t := c.get(mk.Key())
	defer t.mu.Unlock()
	t.sync(snap, share, nil)
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
		t = &DomainTotals{nodeShares: c.nodeShares}
		c.byKey[key] = t
	}
	c.clock++
	t.used = c.clock
	c.mu.Unlock()
	t.mu.Lock()
	return t
}

// sync brings the totals in line with snap's nodes: the shares of the
// positions the snapshot's change log names since the last sync are
// computed again (none for node shares while no node object changed);
// all of them, from scratch, when the log does not reach back that far,
// the list was rebuilt, or the totals are another snapshot's.
func (t *DomainTotals) sync(snap *Snapshot, share func(ni *NodeInfo) (Domain, int64, bool), counts PodCounts) {
	list, log := snap.nodeInfoList, &snap.changes
	sameList := t.filled(snap) && log.epoch != 0 && t.epoch == log.epoch && t.size == len(list)
	if sameList && t.nodeShares && t.nodesVersion == snap.nodesVersion {
		// The replaced positions hold the node objects the shares were
		// computed from: only their pods changed.
		t.seq = log.seq
		return
	}
	if lag := log.seq - t.seq; !sameList || lag > changeLogSize || lag > uint64(len(list)) {
		t.start(snap, false)
		for i, ni := range list {
			t.add(i, ni, share)
		}
		return
	}
	for q := t.seq; q < log.seq; q++ {
		// A node replaced by one with a pod more (its node object and
		// other pods the same) keeps its share when that pod does not
		// count in it.
		if p := log.added[q%changeLogSize]; p != nil && counts != nil && !counts(p) {
			continue
		}
		i := int(log.ring[q%changeLogSize])
		t.remove(i)
		t.add(i, list[i], share)
	}
	t.seq, t.nodesVersion = log.seq, snap.nodesVersion
}

// start empties the totals for a fill from scratch over snap's list,
// in line with its change log; their shares held sparse, or by
// position.
func (t *DomainTotals) start(snap *Snapshot, sparse bool) {
	size := len(snap.nodeInfoList)
	t.snap, t.size, t.counts, t.members = snap, size, t.counts[:0], t.members[:0]
	switch {
	case sparse:
		t.shares = nil
		if t.sparse == nil {
			t.sparse = map[int32]nodeShare{}
		}
		clear(t.sparse)
	case cap(t.shares) >= size:
		t.sparse = nil
		t.shares = t.shares[:size]
		clear(t.shares)
	default:
		t.sparse = nil
		t.shares = make([]nodeShare, size)
	}
	clear(t.wide)
	t.epoch, t.seq, t.nodesVersion = snap.changes.epoch, snap.changes.seq, snap.nodesVersion
}

// filled reports whether the totals hold shares for snap.
func (t *DomainTotals) filled(snap *Snapshot) bool {
	return t.snap == snap && (t.sparse != nil || len(t.shares) > 0)
}

// share returns the share of list position i.
func (t *DomainTotals) share(i int) nodeShare {
	if t.shares == nil {
		return t.sparse[int32(i)]
	}
	return t.shares[i]
}

// setShare sets the share of list position i.
func (t *DomainTotals) setShare(i int, s nodeShare) {
	switch {
	case t.shares != nil:
		t.shares[i] = s
	case s == 0:
		delete(t.sparse, int32(i))
	default:
		t.sparse[int32(i)] = s
	}
}

// add counts the share of node ni, at list position i, whose share is
// empty.
func (t *DomainTotals) add(i int, ni *NodeInfo, share func(ni *NodeInfo) (Domain, int64, bool)) {
	if ni.Node() == nil {
		return
	}
	dom, count, ok := share(ni)
	if !ok || dom < 0 {
		return
	}
	t.fill(i, dom, count)
}

// remove takes the share of the node at list position i out of the
// totals.
func (t *DomainTotals) remove(i int) {
	s := t.share(i)
	if s == 0 {
		return
	}
	var dom Domain
	var count int64
	if s == wideShareMark {
		w := t.wide[int32(i)]
		delete(t.wide, int32(i))
		dom, count = w.dom, w.count
	} else {
		dom, count = s.unpack()
	}
	t.counts[dom] -= count
	t.members[dom]--
	t.setShare(i, 0)
}

// fillSparse fills the totals from scratch from the candidates' shares,
// when they are empty or another snapshot's (a full pass is due) and
// candidates can tell; false when it did not.
func (t *DomainTotals) fillSparse(snap *Snapshot, share func(ni *NodeInfo) (Domain, int64, bool), candidates func() ([]*NodeInfo, bool)) bool {
	list := snap.nodeInfoList
	if t.filled(snap) || len(snap.listGens) != len(list) {
		return false
	}
	nodes, ok := candidates()
	if !ok {
		return false
	}
	t.start(snap, true)
	for _, ni := range nodes {
		i := indexIn(list, ni)
		if i < 0 || t.share(i) != 0 {
			continue
		}
		t.add(i, list[i], share)
	}
	return true
}

// fill counts the node at list position i, whose share is empty, in
// domain dom, count times.
func (t *DomainTotals) fill(i int, dom Domain, count int64) {
	s, ok := packShare(dom, count)
	if !ok {
		if t.wide == nil {
			t.wide = map[int32]wideShare{}
		}
		s, t.wide[int32(i)] = wideShareMark, wideShare{dom: dom, count: count}
	}
	t.setShare(i, s)
	if need := int(dom) + 1; need > len(t.counts) {
		t.extend(need)
	}
	t.counts[dom] += count
	t.members[dom]++
}

// extend makes counts and members need long, the new domains zero: in
// place when their capacity allows (start keeps it across fills), else
// to the key's number of values (or twice the capacity) at once.
func (t *DomainTotals) extend(need int) {
	if need > cap(t.counts) || need > cap(t.members) {
		size := max(need, t.values, 2*cap(t.counts))
		counts, members := make([]int64, len(t.counts), size), make([]int32, len(t.members), size)
		copy(counts, t.counts)
		copy(members, t.members)
		t.counts, t.members = counts, members
	}
	old := len(t.counts)
	t.counts, t.members = t.counts[:need], t.members[:need]
	clear(t.counts[old:])
	clear(t.members[old:])
}
