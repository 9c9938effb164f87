package schedcore

// NodeValues holds one value per node of a snapshot for one cycle (what
// PreScore computed for each feasible node), so that Score reads it
// without a map lookup. Set may run in parallel for distinct nodes; a node
// from outside the snapshot has no value.
type NodeValues[V any] struct {
	list []*NodeInfo
	vals []V
	set  []bool
}

// NewNodeValues returns an empty table over snap's nodes.
func NewNodeValues[V any](snap *Snapshot) *NodeValues[V] {
	n := len(snap.nodeInfoList)
	return &NodeValues[V]{list: snap.nodeInfoList, vals: make([]V, n), set: make([]bool, n)}
}

// Set records v for ni; nothing for a node from outside the snapshot.
func (t *NodeValues[V]) Set(ni *NodeInfo, v V) {
	if i := indexIn(t.list, ni); i >= 0 {
		t.vals[i], t.set[i] = v, true
	}
}

// Covers reports whether ni is a node of the table's snapshot.
func (t *NodeValues[V]) Covers(ni *NodeInfo) bool { return indexIn(t.list, ni) >= 0 }

// Get returns ni's value, ok false when none was set.
func (t *NodeValues[V]) Get(ni *NodeInfo) (V, bool) {
	if i := indexIn(t.list, ni); i >= 0 && t.set[i] {
		return t.vals[i], true
	}
	var zero V
	return zero, false
}
