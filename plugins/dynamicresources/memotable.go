package dynamicresources

import (
	v1 "k8s.io/api/core/v1"
)

// claimsTable holds the memo's answers for one claims spec, by the node's
// position in the snapshot list: a cycle asks for every node with the same
// claims, in list order, so its look-ups walk one array rather than a map
// per node. A slot is the node's only while it names the node object (and
// its pools) it was filled for: positions move when nodes come and go.
// Nodes outside a snapshot list (position -1) are kept by name.
type claimsTable struct {
	pos   []claimsSlot
	other map[string]*claimsSlot
}

// claimsSlot is one node's answer for the claims: the node object and its
// pools it is for, which of them are relevant (relevance.go), and the
// answer with the pool versions it holds for (has: an answer is kept).
type claimsSlot struct {
	node *v1.Node
	nm   *nodeMemo
	rel  []bool
	e    memoEntry
	has  bool
}

// find returns the node's slot, nil if there is none; it never writes.
func (t *claimsTable) find(pos int, name string) *claimsSlot {
	if pos >= 0 {
		if pos < len(t.pos) {
			return &t.pos[pos]
		}
		return nil
	}
	return t.other[name]
}

// slotLocked returns the node's slot in the claims' table, made if needed
// (counted in m.slots). The pointer is good until the table grows: hold
// the memo's lock while using it.
func (m *allocationMemo) slotLocked(claimsID int64, pos int, name string) *claimsSlot {
	t := m.tableLocked(claimsID)
	if pos >= 0 {
		if pos >= len(t.pos) {
			m.slots += pos + 1 - len(t.pos)
			t.pos = append(t.pos, make([]claimsSlot, pos+1-len(t.pos))...)
		}
		return &t.pos[pos]
	}
	sl := t.other[name]
	if sl == nil {
		m.slots++
		if t.other == nil {
			t.other = map[string]*claimsSlot{}
		}
		sl = &claimsSlot{}
		t.other[name] = sl
	}
	return sl
}

// valid reports whether the slot's answer holds for the cycle: each
// relevant pool at the version the answer was computed for.
func (sl *claimsSlot) valid(in *memoInputs) bool {
	for i, p := range sl.nm.pools {
		v := int64(-1)
		if sl.rel[i] {
			v = in.poolVer[p]
		}
		if sl.e.versions[i] != v {
			return false
		}
	}
	return true
}

func (m *allocationMemo) tableLocked(claimsID int64) *claimsTable {
	t := m.tables[claimsID]
	if t == nil {
		t = &claimsTable{}
		m.tables[claimsID] = t
	}
	return t
}

// clearSlotLocked gives the slot to another node object (or node).
func (m *allocationMemo) clearSlotLocked(sl *claimsSlot, to claimsSlot) {
	if sl.has {
		m.size--
	}
	*sl = to
}

// keepLocked stores an answer in the slot.
func (m *allocationMemo) keepLocked(sl *claimsSlot, e memoEntry) {
	if !sl.has {
		m.size++
	}
	sl.e, sl.has = e, true
}

// lookup is the memo's answer for the node when it holds one for the
// cycle, found under the read lock: the same claims as the last ones
// interned, a slot for the very node object, every relevant pool at its
// version. Anything else goes the long way (allocate).
func (m *allocationMemo) lookup(in *memoInputs, pos int, node *v1.Node, spec string) (memoEntry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.objRev != in.objRev || m.lastID == 0 || spec != m.lastSpec {
		return memoEntry{}, false
	}
	t := m.tables[m.lastID]
	if t == nil {
		return memoEntry{}, false
	}
	sl := t.find(pos, node.Name)
	if sl == nil || sl.node != node || !sl.has || !sl.valid(in) {
		return memoEntry{}, false
	}
	return sl.e, true
}
