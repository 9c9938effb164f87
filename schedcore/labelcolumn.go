package schedcore

import (
	"sync"

	v1 "k8s.io/api/core/v1"
)

// labelColumn holds one label's values for the nodes of a snapshot list, as
// small integer ids indexed by NodeInfo.listIndex(), so that plugins that
// look up a topology key on every node of every cycle read a dense slice
// instead of each node's label map. Ids index Values and are stable for the
// snapshot's lifetime: the same value keeps its id across cycles.
//
// A column is immutable once returned: when nodes change, the snapshot
// builds a new one.
type labelColumn struct {
	ids []int32
	// Values are the label values by id.
	Values []string
	// index maps values to ids; never changed once the column is returned
	// (a sync that finds new values copies it).
	index map[string]int32
	// missing is the number of nodes of the list without the label.
	missing int
	// nodes are the node objects ids were read from, by list index
	// (LabelView.ID checks a node against them).
	nodes []*v1.Node
}

// ID returns the id of a label value, false if no node of the list (or of
// an earlier list of the snapshot) had it.
func (c *labelColumn) ID(value string) (int32, bool) {
	if c == nil {
		return -1, false
	}
	id, ok := c.index[value]
	return id, ok
}

// At returns the id of node i's value, -1 when node i lacks the label or i
// is outside the list the column was built for.
func (c *labelColumn) At(i int) int32 {
	if c == nil || i < 0 || i >= len(c.ids) {
		return -1
	}
	return c.ids[i]
}

// NumValues is the number of distinct ids handed out so far (every id is
// below it).
func (c *labelColumn) NumValues() int { return len(c.Values) }

// labelColumns is a snapshot's columns, rebuilt lazily for the nodes whose
// objects changed.
type labelColumns struct {
	mu   sync.Mutex
	cols map[string]*columnState
}

type columnState struct {
	col     *labelColumn
	version int64
	// nodes are the node objects the ids were read from, by list index.
	nodes []*v1.Node
	index map[string]int32
}

// column returns the column of label key for the snapshot's list. Safe
// for concurrent use; the first call after the nodes changed reads the
// label of the nodes whose objects changed.
func (s *Snapshot) column(key string) *labelColumn {
	s.columns.mu.Lock()
	defer s.columns.mu.Unlock()
	if s.columns.cols == nil {
		s.columns.cols = map[string]*columnState{}
	}
	st := s.columns.cols[key]
	if st == nil {
		st = &columnState{index: map[string]int32{}, col: &labelColumn{}}
		s.columns.cols[key] = st
	} else if st.version == s.nodesVersion && st.version != 0 {
		return st.col
	}
	list := s.nodeInfoList
	ids := make([]int32, len(list))
	nodes := make([]*v1.Node, len(list))
	values := st.col.Values
	copied := false
	for i, ni := range list {
		n := ni.node
		nodes[i] = n
		if i < len(st.nodes) && st.nodes[i] == n && n != nil {
			ids[i] = st.col.ids[i]
			continue
		}
		ids[i] = -1
		if n == nil {
			continue
		}
		v, ok := n.Labels[key]
		if !ok {
			continue
		}
		id, seen := st.index[v]
		if !seen {
			if !copied {
				// Columns handed out earlier share the old index.
				next := make(map[string]int32, len(st.index)+1)
				for k, v := range st.index {
					next[k] = v
				}
				st.index, copied = next, true
			}
			id = int32(len(values))
			values = append(values, v)
			st.index[v] = id
		}
		ids[i] = id
	}
	missing := 0
	for _, id := range ids {
		if id < 0 {
			missing++
		}
	}
	st.col = &labelColumn{ids: ids, Values: values, index: st.index, missing: missing, nodes: nodes}
	st.nodes, st.version = nodes, s.nodesVersion
	return st.col
}

// indexIn returns ni's index in list (a snapshot list a plugin built a
// dense form for), or -1 when ni is not from it: a NodeInfo outside any
// list, or one whose position in list holds another node object. A
// NodeInfo of the registered slab that list holds at its slab index is
// found without reading it (nodeslab.go): a slab member keeps the position
// it was copied to, so that index is its listIndex.
func indexIn(list []*NodeInfo, ni *NodeInfo) int {
	if idx := slabIndex(ni); idx >= 0 && idx < len(list) && list[idx] == ni {
		return idx
	}
	idx := ni.listIndex()
	if idx < 0 || idx >= len(list) || list[idx].Node() != ni.Node() {
		return -1
	}
	return idx
}

// IndexIn returns ni's index in list (a snapshot's list), -1 when list
// does not hold ni there.
func IndexIn(list []*NodeInfo, ni *NodeInfo) int { return indexIn(list, ni) }
