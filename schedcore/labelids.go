package schedcore

// Label ids for plugins that match the label on every node of every cycle
// (NodeAffinity's selectors): a requirement's values are looked up once
// per cycle (IDOf), each node's value is then an id read from the column
// (ID) instead of a lookup in its label map.

// ID returns the id of ni's value of the label, -1 when ni lacks it; ok
// is false when the column was not read from ni's node object (ni is not
// listed, or its node object changed since the view was made): the
// caller then reads ni's labels. Two nodes with ok ids have the same
// value exactly when their ids are equal.
func (v LabelView) ID(ni *NodeInfo) (id int32, ok bool) {
	c := v.col
	i := ni.listIndex()
	n := ni.Node()
	if c == nil || n == nil || i < 0 || i >= len(c.nodes) || i >= len(c.ids) || c.nodes[i] != n {
		return -1, false
	}
	return c.ids[i], true
}

// IDOf returns the id of a label value, false when no node the view's
// column read has it (so no node with an ok ID has that value).
func (v LabelView) IDOf(value string) (int32, bool) { return v.col.ID(value) }

// ValueOf returns the value of an id returned by ID or IDOf.
func (v LabelView) ValueOf(id int32) string { return v.col.Values[id] }
