package schedcore

import (
	"reflect"
	"sync"
)

// ImageColumn holds one image name's summaries for the nodes of a snapshot
// list, as small ids by list position, so that ImageLocality, which looks
// the pod's images up on every node it scores, reads a dense slice rather
// than each node's ImageStates map (a few cache misses per lookup). The
// summaries are the nodes' own: a node's id names a summary equal to the
// one its ImageStates holds under the name.
//
// A column is immutable once returned: when nodes change, the snapshot
// changes a copy.
type ImageColumn struct {
	// ids[i] is 0 when the node at list position i does not have the
	// image, else 1 + the index of its summary in sums.
	ids  []uint32
	sums []ImageStateSummary
}

// ID returns the id of the summary of the node at list position i: 0 when
// that node does not have the image or i is outside the list.
func (c ImageColumn) ID(i int) uint32 {
	if i < 0 || i >= len(c.ids) {
		return 0
	}
	return c.ids[i]
}

// Len is the length of the list the column was built for.
func (c ImageColumn) Len() int { return len(c.ids) }

// NumIDs is one more than the largest id: every id is below it.
func (c ImageColumn) NumIDs() int { return len(c.sums) + 1 }

// Summary returns the summary of id, 0 < id < NumIDs().
func (c ImageColumn) Summary(id uint32) ImageStateSummary { return c.sums[id-1] }

// imageColumns are a snapshot's image columns, kept in line with its list
// through the snapshot's log of positions whose image summaries changed
// (imageChanges).
type imageColumns struct {
	mu    sync.Mutex
	cols  map[string]*imageColumnState
	clock uint64
}

type imageColumnState struct {
	col ImageColumn
	// index maps summaries to ids; private to the snapshot (guarded by
	// imageColumns.mu).
	index map[ImageStateSummary]uint32
	// epoch and seq are the position in the snapshot's imageChanges log
	// the column is in line with.
	epoch int64
	seq   uint64
	used  uint64
	// last and lastID are the summary id found last: the nodes with an
	// image mostly hold equal summaries (its size, the count of nodes
	// with it), found without hashing one into index.
	last   ImageStateSummary
	lastID uint32
}

// imageColumnEntries bounds the entries (nodes × names) the columns of a
// snapshot hold: the least recently used name goes first.
const imageColumnEntries = 1 << 20

// ImageColumn returns the column of the image name (looked up in the
// nodes' ImageStates as it is given) for the snapshot's list. Safe for
// concurrent use; a call reads the nodes whose image summaries changed
// since the column was last asked for (every node the first time).
func (s *Snapshot) ImageColumn(name string) ImageColumn {
	s.images.mu.Lock()
	defer s.images.mu.Unlock()
	if s.images.cols == nil {
		s.images.cols = map[string]*imageColumnState{}
	}
	st := s.images.cols[name]
	if st == nil {
		if maxCols := max(16, imageColumnEntries/max(1, len(s.nodeInfoList))); len(s.images.cols) >= maxCols {
			evictOldest(s.images.cols, func(st *imageColumnState) uint64 { return st.used })
		}
		st = &imageColumnState{}
		s.images.cols[name] = st
	}
	s.images.clock++
	st.used = s.images.clock
	st.sync(s, name)
	return st.col
}

// hasImageColumn reports whether s keeps a column of the image name.
func (s *Snapshot) hasImageColumn(name string) bool {
	s.images.mu.Lock()
	defer s.images.mu.Unlock()
	return s.images.cols[name] != nil
}

// sync brings the column in line with the snapshot's list: the positions
// the log names since the last sync are read again, or every position when
// the log does not hold them all (a new list, a column far behind). A
// position the log does not name holds a NodeInfo with the same
// ImageStates map as when it was read (UpdateSnapshot logs every change
// of a listed NodeInfo, in place or by a new copy, that changes the map;
// a simulation's copies share their original's; a map is never changed).
func (st *imageColumnState) sync(s *Snapshot, name string) {
	list, log := s.nodeInfoList, &s.imageChanges
	lag := log.seq - st.seq
	if log.epoch == 0 || st.epoch != log.epoch || len(st.col.ids) != len(list) || lag > changeLogSize || lag > uint64(len(list)) {
		st.col = ImageColumn{ids: make([]uint32, len(list))}
		st.index, st.lastID = map[ImageStateSummary]uint32{}, 0
		for i, ni := range list {
			st.col.ids[i] = st.id(ni, name)
		}
	} else {
		copied := false
		for q := st.seq; q < log.seq; q++ {
			i := log.ring[q%changeLogSize]
			id := st.id(list[i], name)
			if st.col.ids[i] == id {
				continue
			}
			if !copied {
				// Columns handed out earlier keep the old ids.
				st.col.ids = append([]uint32(nil), st.col.ids...)
				copied = true
			}
			st.col.ids[i] = id
		}
	}
	st.epoch, st.seq = log.epoch, log.seq
}

// id returns the id of ni's summary of the image name, adding it to the
// column's summaries if new.
func (st *imageColumnState) id(ni *NodeInfo, name string) uint32 {
	if len(ni.ImageStates) == 0 {
		return 0
	}
	sum := ni.ImageStates[name]
	if sum == nil {
		return 0
	}
	if st.lastID != 0 && *sum == st.last {
		return st.lastID
	}
	id, ok := st.index[*sum]
	if !ok {
		// Appending never rewrites an entry a column handed out earlier
		// reads (its ids are below its own length).
		st.col.sums = append(st.col.sums, *sum)
		id = uint32(len(st.col.sums))
		st.index[*sum] = id
	}
	st.last, st.lastID = *sum, id
	return id
}

// sameImageStates reports whether a and b are the same map (not merely
// equal ones): a NodeInfo copy shares its original's summaries.
func sameImageStates(a, b map[string]*ImageStateSummary) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// ImageLookup finds nodes' summaries of a few image names (a pod's, for
// ImageLocality), as node.ImageStates[name] does: for a node of the
// snapshot's slab (nodeslab.go), from the names' columns, read by the
// node's list position without reading the NodeInfo; for any other node,
// or once the snapshot's image summaries changed since the lookup was
// made, from the node's map. Both give the node's own summary.
type ImageLookup struct {
	names []string
	cols  []ImageColumn
	snap  *Snapshot
	list  []*NodeInfo
	// epoch and seq are the snapshot's image change log position the
	// columns are in line with.
	epoch int64
	seq   uint64
}

// ImageLookup returns a lookup of names (as the nodes' ImageStates key
// them) over s's nodes, for about scored nodes (0: every node). s may be
// nil: every node is then read from its map. A name without a column yet
// gets one only when building it, which reads every listed node's map, costs
// no more than twice reading the scored nodes' maps: with sampling (5% of
// 100,000 nodes scored) a pod's new image is read from the maps, as columns
// of many images, each built for one pod, would read 20 times the nodes.
func (s *Snapshot) ImageLookup(names []string, scored int) ImageLookup {
	l := ImageLookup{names: names}
	if s == nil || len(s.nodeInfoList) == 0 {
		return l
	}
	build := scored <= 0 || 2*scored >= len(s.nodeInfoList)
	l.cols = make([]ImageColumn, len(names))
	for k, name := range names {
		if build || s.hasImageColumn(name) {
			l.cols[k] = s.ImageColumn(name)
		}
	}
	l.snap, l.list = s, s.nodeInfoList
	l.epoch, l.seq = s.imageChanges.epoch, s.imageChanges.seq
	return l
}

// Len is the number of names.
func (l *ImageLookup) Len() int { return len(l.names) }

// Summary returns ni's summary of the k-th name, nil when ni does not have
// the image.
func (l *ImageLookup) Summary(ni *NodeInfo, k int) *ImageStateSummary {
	if l.cols != nil && l.snap.imageChanges.seq == l.seq && l.snap.imageChanges.epoch == l.epoch {
		if i := slabIndex(ni); i >= 0 && i < len(l.list) && l.list[i] == ni && i < l.cols[k].Len() {
			c := &l.cols[k]
			if id := c.ids[i]; id != 0 {
				return &c.sums[id-1]
			}
			return nil
		}
	}
	return ni.ImageStates[l.names[k]]
}
