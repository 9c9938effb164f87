package schedcore

// A VerdictMemo keeps at most maxKeys keys: a workload of many distinct
// keys arriving in turn (Mixed's hundreds of apps, each a burst of pods)
// evicts a table for every new one, and each new table's entries (4 bytes
// a node) were made anew, a few MB per 5000 pods of garbage. The entries
// of an evicted table can serve the next new one only when no view still
// reads or writes them: a view keeps the slice it was handed, so an old
// view would see the other key's values as its own. PinnedView hands out
// views that say when they are done (Unpin); a table that only such views
// ever saw, evicted when none is pinned, gives its entries to the next
// table. A table handed out by View is never recycled (its views have no
// end).

// PinnedView is View for a caller that calls Unpin with the returned
// table once it no longer uses the view (nor anything read from its
// entries slice).
func (m *VerdictMemo) PinnedView(k *MemoKey, n int) (VerdictView, *VerdictTable) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.table(k, n)
	t.pins++
	return VerdictView{entries: t.entries, base: t.base}, t
}

// Unpin ends a PinnedView of t.
func (m *VerdictMemo) Unpin(t *VerdictTable) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t.pins--
	m.recycle(t)
}

// evict drops the least recently used table. m.mu is held.
func (m *VerdictMemo) evict() {
	var oldest string
	var at uint64
	var victim *VerdictTable
	for k, t := range m.tables {
		if victim == nil || t.used < at {
			oldest, at, victim = k, t.used, t
		}
	}
	if victim == nil {
		return
	}
	delete(m.tables, oldest)
	victim.evicted = true
	m.recycle(victim)
}

// recycle keeps t's entries as the memo's spare if t is evicted and no
// view of it can be in use: none pinned, none handed out unpinned. m.mu
// is held.
func (m *VerdictMemo) recycle(t *VerdictTable) {
	if !t.evicted || t.pins != 0 || t.shared || t.entries == nil {
		return
	}
	if cap(t.entries) > cap(m.spare) {
		m.spare = t.entries[:cap(t.entries)]
	}
	t.entries = nil
}
