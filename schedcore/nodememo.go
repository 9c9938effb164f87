package schedcore

import (
	"context"
	"sync"
	"sync/atomic"
)

// NodeMemo remembers, per key and per node, a value a plugin computed from
// one node's pods (how many match a selector, what an incoming pod's terms
// add to the node's domains), for as long as the node is unchanged. Most
// cycles change one node (the last placement), so a plugin that would scan
// every pod of every node each cycle scans one node's pods instead.
//
// Validity is the node's Generation: generations are process-wide unique and
// every change of a NodeInfo takes a new one, so an entry is reused only for
// the very same node contents. Entries hold no NodeInfo pointers, so stale
// snapshot copies are not kept alive. At most maxKeys keys are kept; the
// least recently used one is dropped first.
//
// A plugin reads it through Values: the positions entries are kept at, and
// the table lock held while a cycle fills them, stay inside schedcore.
type NodeMemo[V any] struct {
	mu      sync.Mutex
	tables  map[string]*memoTable[V]
	maxKeys int
	clock   uint64
}

// memoTable is one key's entries, indexed by the node's position in the
// snapshot list. Hold it between acquire and release.
type memoTable[V any] struct {
	mu      sync.Mutex
	entries []memoEntry[V]
	// base is the generation entries' offsets are from: an entry holds
	// the value of the node of generation base+gen, 0 < gen.
	base int64
	used uint64
}

// memoEntry is a value with its node's generation, as an offset from the
// table's base (0: no value).
type memoEntry[V any] struct {
	gen uint32
	v   V
}

// memoSpan bounds the offsets of a NodeMemo entry's generation: a table's
// window of generations, which acquire moves along with the process's
// generations (headroom ahead of the newest one, for the cycle holding
// the table); a node unchanged for longer than half a window is computed
// every time.
const (
	memoSpan     = 1 << 32
	memoHeadroom = memoSpan / 4
)

// memoBase is the base of a window holding the last half window of
// generations before cur and the next half.
func memoBase(cur int64) int64 { return max(0, cur-memoSpan/2) }

// NewNodeMemo returns a memo keeping at most maxKeys keys.
func NewNodeMemo[V any](maxKeys int) *NodeMemo[V] {
	if maxKeys < 1 {
		maxKeys = 1
	}
	return &NodeMemo[V]{tables: map[string]*memoTable[V]{}, maxKeys: maxKeys}
}

// Values returns key's value for each of nodes, in their order: the value
// remembered for a node unchanged since it was computed, else compute(node),
// remembered for the next call. compute runs in parallel over the nodes
// (par), on distinct nodes at once; calls with the same key wait for each
// other. A node from outside the snapshot list is computed every time.
//
// The key must capture every input of compute but the node (see MemoKey):
// two calls with equal keys get each other's values. When ctx is cancelled,
// Values stops early and the nodes it did not reach get V's zero value: a
// caller checks ctx.Err() before reading them.
func (m *NodeMemo[V]) Values(ctx context.Context, par Parallelizer, k *MemoKey, nodes []*NodeInfo, compute func(ni *NodeInfo) V) []V {
	n := 0
	for _, ni := range nodes {
		n = max(n, ni.listPos)
	}
	t := m.acquire(k, n)
	defer t.release()
	out := make([]V, len(nodes))
	par.Until(ctx, len(nodes), func(i int) {
		v, ok := t.get(nodes[i])
		if !ok {
			v = compute(nodes[i])
			t.put(nodes[i], v)
		}
		out[i] = v
	})
	return out
}

// acquire returns key's table, sized for n nodes and locked for the caller,
// who calls release when done. get and put on distinct nodes may run in
// parallel between the two.
func (m *NodeMemo[V]) acquire(k *MemoKey, n int) *memoTable[V] {
	m.mu.Lock()
	// Indexing by string(k.b) does not allocate: the key string is made
	// only for a new table.
	t := m.tables[string(k.b)]
	if t == nil {
		if len(m.tables) >= m.maxKeys {
			evictOldest(m.tables, func(t *memoTable[V]) uint64 { return t.used })
		}
		t = &memoTable[V]{base: memoBase(generation.Load())}
		m.tables[k.Key()] = t
	}
	m.clock++
	t.used = m.clock
	m.mu.Unlock()
	t.mu.Lock()
	if len(t.entries) < n {
		grown := make([]memoEntry[V], n)
		copy(grown, t.entries)
		t.entries = grown
	}
	if cur := generation.Load(); cur+memoHeadroom-t.base >= memoSpan {
		t.rebase(memoBase(cur))
	}
	return t
}

// rebase moves the table's window to base, keeping the entries it holds.
func (t *memoTable[V]) rebase(base int64) {
	for i := range t.entries {
		e := &t.entries[i]
		if e.gen == 0 {
			continue
		}
		if off := t.base + int64(e.gen) - base; off > 0 && off < memoSpan {
			e.gen = uint32(off)
		} else {
			*e = memoEntry[V]{}
		}
	}
	t.base = base
}

// evictOldest drops the least recently used of a memo's tables.
func evictOldest[T any](tables map[string]T, used func(T) uint64) {
	var oldest string
	var at uint64
	first := true
	for k, t := range tables {
		if u := used(t); first || u < at {
			oldest, at, first = k, u, false
		}
	}
	delete(tables, oldest)
}

// Len is the number of keys held.
func (m *NodeMemo[V]) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tables)
}

// release unlocks the table.
func (t *memoTable[V]) release() { t.mu.Unlock() }

// get returns the value remembered for ni, if ni is unchanged since put.
func (t *memoTable[V]) get(ni *NodeInfo) (V, bool) { return t.getAt(ni.listPos-1, ni.Generation) }

// getAt is get for the node at list position i with generation gen.
func (t *memoTable[V]) getAt(i int, gen int64) (V, bool) {
	if off := gen - t.base; i >= 0 && i < len(t.entries) && off > 0 && off < memoSpan {
		if e := &t.entries[i]; e.gen == uint32(off) {
			return e.v, true
		}
	}
	var zero V
	return zero, false
}

// put remembers v for ni. A node outside the snapshot list, or whose
// generation is outside the table's window, is not remembered.
func (t *memoTable[V]) put(ni *NodeInfo, v V) {
	i, off := ni.listPos-1, ni.Generation-t.base
	if i >= 0 && i < len(t.entries) && off > 0 && off < memoSpan {
		t.entries[i] = memoEntry[V]{gen: uint32(off), v: v}
	}
}

// NodeSlots keeps one value per snapshot list position, with the generation
// of the node it was computed from, for indexes that a plugin maintains
// node by node across cycles instead of rebuilding them every cycle.
type NodeSlots[S any] struct {
	gens []int64
	vals []S
	// epoch and seq are the snapshot's change log position the slots are
	// in line with (SyncSnapshot); epoch 0 after a Sync over a bare list.
	epoch int64
	seq   uint64
}

// Sync brings the slots in line with nodes (the snapshot list): drop is
// called for each slot beyond the list before it is cut, refresh for each
// node whose generation differs from the one its slot was computed from
// (the slot holds the old value; refresh replaces it). It reads every
// node's generation; SyncSnapshot reads only the nodes that changed.
func (n *NodeSlots[S]) Sync(nodes []*NodeInfo, drop func(s *S), refresh func(ni *NodeInfo, s *S)) {
	n.epoch, n.seq = 0, 0
	for i := len(nodes); i < len(n.vals); i++ {
		drop(&n.vals[i])
	}
	if len(n.vals) > len(nodes) {
		clear(n.vals[len(nodes):])
		n.vals, n.gens = n.vals[:len(nodes)], n.gens[:len(nodes)]
	}
	for len(n.vals) < len(nodes) {
		var zero S
		n.vals, n.gens = append(n.vals, zero), append(n.gens, 0)
	}
	for i, ni := range nodes {
		if g := n.gens[i]; g != 0 && g == ni.Generation {
			continue
		}
		refresh(ni, &n.vals[i])
		n.gens[i] = ni.Generation
	}
}

// SyncSnapshot is Sync over snap's list, visiting only the positions
// UpdateSnapshot replaced since the slots were last synced with this
// snapshot (its change log), when the log still holds them all; else
// every node, as Sync (also when more positions were replaced than there
// are nodes: a full pass then costs less). Every change of a listed
// NodeInfo (UpdateSnapshot's, in place or by a new copy, and a
// simulation's) is logged under a fresh generation, so a position the
// log does not name holds the node the slot was computed from.
func (n *NodeSlots[S]) SyncSnapshot(snap *Snapshot, drop func(s *S), refresh func(ni *NodeInfo, s *S)) {
	n.SyncSnapshotKeep(snap, nil, drop, refresh)
}

// SyncSnapshotKeep is SyncSnapshot for slots computed from a node's pods
// that keep (if not nil) accepts none of: a position the log says was
// replaced by a node holding one pod more, and nothing else changed (same
// node object, same pods), keeps its slot when keep(pod) is true.
//
// The slot's generation is left as it was (the log does not say which
// generation the node had after that entry): a later entry for the same
// position, or a full pass, computes the slot again, as it would have
// without keep.
func (n *NodeSlots[S]) SyncSnapshotKeep(snap *Snapshot, keep func(p *PodInfo) bool, drop func(s *S), refresh func(ni *NodeInfo, s *S)) {
	nodes, log := snap.nodeInfoList, &snap.changes
	if lag := log.seq - n.seq; log.epoch == 0 || n.epoch != log.epoch || len(n.vals) != len(nodes) || lag > changeLogSize || lag > uint64(len(nodes)) {
		n.Sync(nodes, drop, refresh)
		n.epoch, n.seq = log.epoch, log.seq
		return
	}
	for q := n.seq; q < log.seq; q++ {
		if p := log.added[q%changeLogSize]; p != nil && keep != nil && keep(p) {
			continue
		}
		i := log.ring[q%changeLogSize]
		ni := nodes[i]
		if g := n.gens[i]; g != 0 && g == ni.Generation {
			continue
		}
		refresh(ni, &n.vals[i])
		n.gens[i] = ni.Generation
	}
	n.seq = log.seq
}

// changeLogSize is how many replaced positions a snapshot's change log
// holds: slots further behind make a full pass. An index a few workloads'
// pods use is synced every few hundred or thousand placements.
const changeLogSize = 8192

// nodeChangeLog records the list positions whose NodeInfo UpdateSnapshot
// replaced in place, since the list was last rebuilt (a new epoch), so
// that indexes kept across cycles visit those nodes, not every node.
type nodeChangeLog struct {
	// epoch is unique to one build of the list (0: none yet, indexes make
	// a full pass); seq counts the positions recorded since.
	epoch int64
	seq   uint64
	ring  [changeLogSize]int32
	// added holds, for an entry of ring, the pod the new NodeInfo holds
	// beyond the one it replaced, when that is the only difference
	// between them (same node object, same pods, one appended: a pod
	// assumed or added there); nil when anything else may differ. Totals
	// whose shares that pod does not count in keep them (DomainTotals).
	added [changeLogSize]*PodInfo
}

// replaced records that the NodeInfo at list position i was replaced,
// by one holding pod added more and nothing else changed (nil: unknown).
func (l *nodeChangeLog) replaced(i int, added *PodInfo) {
	l.ring[l.seq%changeLogSize] = int32(i)
	l.added[l.seq%changeLogSize] = added
	l.seq++
}

// rebuilt starts a new epoch: positions may now hold other nodes.
func (l *nodeChangeLog) rebuilt() {
	l.epoch, l.seq = nextGeneration(), 0
}

// VerdictMemo remembers, per key and per node, a small value (a verdict or
// a score up to maxVerdictValue) that a plugin computed from one node, for
// as long as the node is unchanged (its Generation). Unlike NodeMemo it
// needs no lock around a cycle: entries are single words read and written
// atomically, so Filter and Score may consult it from parallel goroutines,
// and from several cycles at once. At most maxKeys keys are kept; the least
// recently used one is dropped first.
//
// An entry is 4 bytes: the value and the node's generation as an offset
// from its table's base, so a table tells apart the generations of a
// window of verdictSpan, which View moves along with the process's
// generations (a node unchanged for longer than half a window is computed
// again each time: in practice none, its kubelet's status updates give it
// new generations every few minutes).
type VerdictMemo struct {
	mu      sync.Mutex
	tables  map[string]*VerdictTable
	maxKeys int
	clock   uint64
	// spare is the entries of an evicted table that no view refers to
	// any more, for the next new table (see PinnedView).
	spare []atomic.Uint32
}

type VerdictTable struct {
	entries []atomic.Uint32
	base    int64
	used    uint64
	// pins counts the PinnedViews handed out and not yet unpinned;
	// shared is set once a View (never unpinned) was handed out. Only a
	// table evicted with neither gives its entries to a new table.
	pins    int
	shared  bool
	evicted bool
}

// VerdictView is one key's entries, from View.
type VerdictView struct {
	entries []atomic.Uint32
	// base is the generation offsets are from: an entry holds the node
	// of generation base+offset, 0 < offset < verdictSpan.
	base int64
}

const (
	// verdictValueBits are an entry's low bits, the value; the others are
	// the generation's offset.
	verdictValueBits = 8
	// maxVerdictValue is the largest value remembered: Put ignores larger
	// ones (they are computed each time).
	maxVerdictValue = 1<<verdictValueBits - 1
	// verdictSpan bounds the offsets an entry can hold.
	verdictSpan = 1 << (32 - verdictValueBits)
	// verdictHeadroom is how far ahead of the newest generation a view's
	// window reaches when handed out: the generations the nodes of the
	// cycles using it take.
	verdictHeadroom = verdictSpan / 4
)

// NewVerdictMemo returns a memo keeping at most maxKeys keys.
func NewVerdictMemo(maxKeys int) *VerdictMemo {
	if maxKeys < 1 {
		maxKeys = 1
	}
	return &VerdictMemo{tables: map[string]*VerdictTable{}, maxKeys: maxKeys}
}

// View returns key's entries for a snapshot of n nodes.
func (m *VerdictMemo) View(k *MemoKey, n int) VerdictView {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.table(k, n)
	t.shared = true
	return VerdictView{entries: t.entries, base: t.base}
}

// table returns key's table for a snapshot of n nodes, making it if
// needed. m.mu is held.
func (m *VerdictMemo) table(k *MemoKey, n int) *VerdictTable {
	// Indexing by string(k.b) does not allocate: the key string is made
	// only for a new table.
	t := m.tables[string(k.b)]
	if t == nil {
		if len(m.tables) >= m.maxKeys {
			m.evict()
		}
		t = &VerdictTable{base: verdictBase(generation.Load())}
		if len(m.spare) >= n {
			// No view refers to these entries (see recycle): emptied,
			// they hold nothing of the evicted key.
			t.entries = m.spare
			clear(t.entries)
		}
		m.spare = nil
		m.tables[k.Key()] = t
	}
	m.clock++
	t.used = m.clock
	if cur := generation.Load(); cur+verdictHeadroom-t.base >= verdictSpan {
		t.rebase(verdictBase(cur), max(n, len(t.entries)))
	} else if len(t.entries) < n {
		t.rebase(t.base, n)
	}
	return t
}

// verdictBase is the base of a window holding the last half window of
// generations before cur and the next half.
func verdictBase(cur int64) int64 { return max(0, cur-verdictSpan/2) }

// rebase moves the table to a new slice of n entries with offsets from
// base, keeping the entries whose generations the new window holds. Views
// handed out before keep the old slice and base, whose entries stay valid
// (they are just no longer shared).
func (t *VerdictTable) rebase(base int64, n int) {
	grown := make([]atomic.Uint32, n)
	for i := range t.entries {
		e := t.entries[i].Load()
		if e == 0 {
			continue
		}
		gen := t.base + int64(e>>verdictValueBits)
		(VerdictView{entries: grown, base: base}).putAt(i, gen, uint16(e&maxVerdictValue))
	}
	t.entries, t.base = grown, base
}

// Len is the number of keys held.
func (m *VerdictMemo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.tables)
}

// Get returns the value remembered for ni, if ni is unchanged since Put.
func (v VerdictView) Get(ni *NodeInfo) (uint16, bool) { return v.getAt(ni.listPos-1, ni.Generation) }

// GetByNode returns the value remembered for ni's node object, if that
// object is unchanged since PutByNode (whatever happened to its pods):
// for values that depend on the node object alone.
func (v VerdictView) GetByNode(ni *NodeInfo) (uint16, bool) { return v.getAt(ni.listPos-1, ni.nodeGen) }

// PutByNode remembers val for ni's node object (as Put).
func (v VerdictView) PutByNode(ni *NodeInfo, val uint16) { v.putAt(ni.listPos-1, ni.nodeGen, val) }

// Put remembers val for ni. A node outside the snapshot list, a generation
// outside the view's window or a value above maxVerdictValue is not
// remembered.
func (v VerdictView) Put(ni *NodeInfo, val uint16) { v.putAt(ni.listPos-1, ni.Generation, val) }

// Keys lists the keys m holds tables for, in no order.
func (m *VerdictMemo) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	ks := make([]string, 0, len(m.tables))
	for k := range m.tables {
		ks = append(ks, k)
	}
	return ks
}
