package schedcore

import (
	"sync"
	"sync/atomic"
)

// The values a filter memo (Framework.filterMemo) holds for a node: a pass,
// or one of the plugin's remembered rejections (rejectTable).
const (
	verdictPass uint16 = 1
	// verdictFirstReject is the value of a plugin's first remembered
	// rejection; the k-th is verdictFirstReject+k.
	verdictFirstReject uint16 = 2
)

// getAt returns the value remembered at list position i for the node of
// generation gen: Get for a node known by its position and generation
// (the snapshot's columns) rather than by its NodeInfo.
func (v VerdictView) getAt(i int, gen int64) (uint16, bool) {
	off := gen - v.base
	if i < 0 || i >= len(v.entries) || off <= 0 || off >= verdictSpan {
		return 0, false
	}
	e := v.entries[i].Load()
	if e>>verdictValueBits != uint32(off) {
		return 0, false
	}
	return uint16(e & maxVerdictValue), true
}

// putAt is Put for the node of generation gen at list position i.
func (v VerdictView) putAt(i int, gen int64, val uint16) {
	off := gen - v.base
	if i < 0 || i >= len(v.entries) || off <= 0 || off >= verdictSpan || val > maxVerdictValue {
		return
	}
	v.entries[i].Store(uint32(off)<<verdictValueBits | uint32(val))
}

// maxRememberedRejections bounds the distinct rejections a filter memo
// remembers per plugin.
const maxRememberedRejections = 8

// rejectTable holds the distinct rejections of one NodeLocalFilter that
// its memo remembers: statuses made with NewSharedStatus (the same for
// every node and every call, stamped with the plugin's name), each under
// a small value. Filter and the memo's readers use it from parallel
// goroutines: slots are filled once, atomically, and never change.
type rejectTable struct {
	slots [maxRememberedRejections]atomic.Pointer[Status]
}

// value returns the value remembering s, a stamped copy of a shared
// status, adding it if there is room; false when s cannot be remembered.
func (t *rejectTable) value(s *Status) (uint16, bool) {
	for k := range t.slots {
		p := t.slots[k].Load()
		if p == nil {
			if t.slots[k].CompareAndSwap(nil, s) {
				return verdictFirstReject + uint16(k), true
			}
			p = t.slots[k].Load()
		}
		if p == s || sameRejection(p, s) {
			return verdictFirstReject + uint16(k), true
		}
	}
	return 0, false
}

// rememberFilter remembers, in v at node position pos and generation
// gen, the status s a NodeLocalFilter's Filter gave there: a pass, or a
// rejection that was shared (shared is s's flag before it was stamped
// with the plugin's name). Any other rejection is not remembered: it may
// differ from node to node, or be changed by its reader.
func rememberFilter(v VerdictView, rejects *rejectTable, pos int, gen int64, s *Status, shared bool) {
	if s.IsSuccess() {
		v.putAt(pos, gen, verdictPass)
		return
	}
	if shared {
		if val, ok := rejects.value(s); ok {
			v.putAt(pos, gen, val)
		}
	}
}

// status returns the rejection remembered under v (nil if none).
func (t *rejectTable) status(v uint16) *Status {
	k := int(v) - int(verdictFirstReject)
	if k < 0 || k >= len(t.slots) {
		return nil
	}
	return t.slots[k].Load()
}

// sameRejection reports whether two rejections say the same thing: code,
// plugin, reasons, no error, the same group mark.
func sameRejection(a, b *Status) bool {
	return a.Equal(b) && a.err == nil && b.err == nil && a.forGroup == b.forGroup
}

// listedNodes are a cycle's feasible nodes (nodes) with their positions
// in the snapshot's list (pos), as findNodesThatPassFilters found them,
// so that RunScorePlugins reads their names and generations from the
// snapshot's columns. They hold for that snapshot at that generation.
type listedNodes struct {
	nodes []*NodeInfo
	pos   *[]int32
	snap  *Snapshot
	gen   int64
}

var listedPositions = sync.Pool{New: func() any { return new([]int32) }}

// start forgets earlier nodes and returns an empty list of positions in
// snap, with room for n.
func (l *listedNodes) start(snap *Snapshot, n int) *[]int32 {
	l.release()
	p := listedPositions.Get().(*[]int32)
	if cap(*p) < n {
		*p = make([]int32, 0, n)
	}
	*l = listedNodes{pos: p, snap: snap, gen: snap.generation}
	return p
}

// positions returns the positions of nodes in snap's list, if nodes are
// the listed nodes and snap has not changed since; nil otherwise.
func (l *listedNodes) positions(snap *Snapshot, nodes []*NodeInfo) []int32 {
	if l.pos == nil || snap == nil || l.snap != snap || l.gen != snap.generation || !sameList(nodes, l.nodes) {
		return nil
	}
	return *l.pos
}

// release gives the positions back for later cycles.
func (l *listedNodes) release() {
	if l.pos != nil {
		*l.pos = (*l.pos)[:0]
		listedPositions.Put(l.pos)
	}
	*l = listedNodes{}
}

// sameList reports whether a and b are the same slice (not only equal).
func sameList(a, b []*NodeInfo) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
