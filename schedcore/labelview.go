package schedcore

// LabelView is one label's values over a snapshot's node list, read from
// the snapshot's label column (ids by list position) instead of each
// node's label map: for explanations that look for the nodes of one
// topology domain among thousands. It reads what the nodes' labels say
// when it is made; make a new one after the snapshot changes.
type LabelView struct {
	key  string
	col  *labelColumn
	list []*NodeInfo
}

// LabelView returns the view of label key over the snapshot's list. Safe
// for concurrent use (see column).
func (s *Snapshot) LabelView(key string) LabelView {
	return LabelView{key: key, col: s.column(key), list: s.nodeInfoList}
}

// Value returns ni's value of the label, ok false when ni lacks it: read
// from the column when ni is the node the view's list holds at its
// position, else from ni's labels.
func (v LabelView) Value(ni *NodeInfo) (string, bool) {
	if i := indexIn(v.list, ni); i >= 0 && i < len(v.col.ids) {
		id := v.col.ids[i]
		if id < 0 {
			return "", false
		}
		return v.col.Values[id], true
	}
	n := ni.Node()
	if n == nil {
		return "", false
	}
	value, ok := n.Labels[v.key]
	return value, ok
}

// Nodes calls fn, in list order, with every node of the list whose label
// has value, until fn returns true.
func (v LabelView) Nodes(value string, fn func(ni *NodeInfo) (stop bool)) {
	id, ok := v.col.ID(value)
	if !ok {
		return
	}
	ids := v.col.ids[:min(len(v.col.ids), len(v.list))]
	for i, x := range ids {
		if x == id && fn(v.list[i]) {
			return
		}
	}
}
