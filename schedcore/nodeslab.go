package schedcore

import (
	"sync/atomic"
	"unsafe"
)

// The snapshot keeps the NodeInfos of its list in a slab, one []NodeInfo in
// list order, so that a listed NodeInfo's position is its address's offset
// in the slab: indexIn finds it without reading the NodeInfo. The score
// loop reads names and generations from the snapshot's columns and never
// touches a NodeInfo whose scores are remembered, so a plugin reading the
// node's position from the NodeInfo (listPos) costs a cache miss per node
// per cycle; the slab's address arithmetic costs none. The slab also lays
// the NodeInfos the filter loops read out one after another.
//
// A slab member at index i is listed at position i (listPos i+1) for as
// long as it lives: UpdateSnapshot copies the nodes into a new slab when it
// rebuilds the list (reslab), and a node it replaces in place is, as in
// kube-scheduler's snapshot, overwritten with its new copy where it stands
// (under a fresh generation, so nothing keyed by position and generation,
// such as NodeMemo, VerdictMemo or the change log, takes it for the node
// it was). A listed NodeInfo that is not a member of the slab (a
// simulation's, which UpdateSnapshot ends first, or one a test lists) is
// replaced by the copy instead, and indexIn finds that through listPos.
// Nothing may keep a listed NodeInfo across an UpdateSnapshot expecting
// it unchanged: what outlives a cycle is keyed by generation.

// nodeSlab is a slab's address range, for indexIn.
type nodeSlab struct {
	base, end uintptr
	// nodes keeps the slab alive while it is registered (its range must
	// not be reused by other objects).
	nodes []NodeInfo
}

const nodeInfoSize = unsafe.Sizeof(NodeInfo{})

// latestSlab is the slab the last snapshot to build one registered: a
// process usually schedules on one snapshot, and indexIn verifies what it
// finds, so a NodeInfo of any other snapshot or slab takes the listPos
// path.
var latestSlab atomic.Pointer[nodeSlab]

// registerSlab makes nodes the slab indexIn looks in.
func registerSlab(nodes []NodeInfo) {
	if len(nodes) == 0 {
		return
	}
	base := uintptr(unsafe.Pointer(&nodes[0]))
	latestSlab.Store(&nodeSlab{base: base, end: base + uintptr(len(nodes))*nodeInfoSize, nodes: nodes})
}

// slabIndex returns ni's index in the registered slab, -1 when ni is not
// in it. It does not read ni.
func slabIndex(ni *NodeInfo) int {
	sl := latestSlab.Load()
	if sl == nil {
		return -1
	}
	a := uintptr(unsafe.Pointer(ni))
	if a < sl.base || a >= sl.end {
		return -1
	}
	return int((a - sl.base) / nodeInfoSize)
}

// inSlab reports whether ni is a member of s's slab.
func (s *Snapshot) inSlab(ni *NodeInfo) bool {
	if len(s.slab) == 0 {
		return false
	}
	a, base := uintptr(unsafe.Pointer(ni)), uintptr(unsafe.Pointer(&s.slab[0]))
	return a >= base && a < base+uintptr(len(s.slab))*nodeInfoSize
}

// reslab copies the listed NodeInfos into a new slab, in list order, and
// lists the copies (list, map, affinity lists) in their places. Positions
// and generations do not change. Not while a simulation is live (assumed
// pods, placement: UpdateSnapshot ends them first).
func (s *Snapshot) reslab() {
	slab := make([]NodeInfo, len(s.nodeInfoList))
	for i, ni := range s.nodeInfoList {
		slab[i] = *ni
		n := &slab[i]
		n.listPos = i + 1
		s.nodeInfoList[i] = n
		s.nodeInfoMap[n.name] = n
	}
	s.rebuildAffinityListsFromFlags()
	s.slab = slab
	registerSlab(slab)
}
