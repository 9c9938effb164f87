package schedcore

import (
	"sort"

	v1 "k8s.io/api/core/v1"
)

const (
	flagHasAffinity uint8 = 1 << iota
	flagHasRequiredAntiAffinity
	flagHasImages
)

// listFlags says which of the snapshot's affinity lists n belongs in.
func listFlagsOf(n *NodeInfo) uint8 {
	var f uint8
	if len(n.PodsWithAffinity) > 0 {
		f |= flagHasAffinity
	}
	if len(n.PodsWithRequiredAntiAffinity) > 0 {
		f |= flagHasRequiredAntiAffinity
	}
	if len(n.ImageStates) > 0 {
		f |= flagHasImages
	}
	return f
}

// rebuildAffinityListsFromFlags rebuilds the affinity lists and the image
// count from the list flags: no NodeInfo is read.
func (s *Snapshot) rebuildAffinityListsFromFlags() {
	s.havePodsWithAffinityNodeInfoList = s.havePodsWithAffinityNodeInfoList[:0]
	s.havePodsWithRequiredAntiAffinityNodeInfoList = s.havePodsWithRequiredAntiAffinityNodeInfoList[:0]
	s.imageNodes = 0
	for i, f := range s.listFlags {
		if f&flagHasImages != 0 {
			s.imageNodes++
		}
		if f&flagHasAffinity != 0 {
			s.havePodsWithAffinityNodeInfoList = append(s.havePodsWithAffinityNodeInfoList, s.nodeInfoList[i])
		}
		if f&flagHasRequiredAntiAffinity != 0 {
			s.havePodsWithRequiredAntiAffinityNodeInfoList = append(s.havePodsWithRequiredAntiAffinityNodeInfoList, s.nodeInfoList[i])
		}
	}
}

// replaceListed puts ni in the place of the node at its list position in
// list (an affinity list, in list order), and says whether it found one.
func replaceListed(list []*NodeInfo, ni *NodeInfo) bool {
	k := sort.Search(len(list), func(k int) bool { return list[k].listPos >= ni.listPos })
	if k == len(list) || list[k].listPos != ni.listPos {
		return false
	}
	list[k] = ni
	return true
}

// setListedIn makes ni's membership of list (an affinity list, in list
// order) what in says: it takes its predecessor's place (at the same list
// position), enters at its position, or leaves. It reports false when the
// list does not hold what it should (a predecessor to replace or remove
// is missing, or one is there to be added), and leaves it unchanged then.
func setListedIn(list []*NodeInfo, ni *NodeInfo, was, in bool) ([]*NodeInfo, bool) {
	k := sort.Search(len(list), func(k int) bool { return list[k].listPos >= ni.listPos })
	found := k < len(list) && list[k].listPos == ni.listPos
	if found != was {
		return list, false
	}
	switch {
	case was && in:
		list[k] = ni
	case in:
		list = append(list, nil)
		copy(list[k+1:], list[k:])
		list[k] = ni
	case was:
		list = append(list[:k], list[k+1:]...)
		list[len(list):cap(list)][0] = nil // the dropped last slot keeps no node alive
	}
	return list, true
}

// smallDirty is how many dirty nodes a cleared dirty set is sized for.
const smallDirty = 32

// UpdateSnapshot brings s up to date, cloning only nodes that changed since
// the last call. The first call on an empty snapshot copies everything.
func (c *Cache) UpdateSnapshot(s *Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(s.assumed) > 0 || s.placement != nil || s.mutations != nil {
		s.endSimulation()
	}
	if s.generation == 0 || s.nodeInfoMap == nil {
		s.nodeInfoMap = map[string]*NodeInfo{}
		for name := range c.nodes {
			c.dirty[name] = struct{}{}
		}
		c.listsDirty, c.nsDirty = true, true
	}
	// Without nodes added or removed, the changed nodes' copies take their
	// predecessors' places in the list; inPlace turns false when one has
	// none (a node the snapshot did not list).
	inPlace := !c.listsDirty && len(s.nodeInfoList) == len(s.nodeInfoMap)
	// A changed node's copy takes its predecessor's place in the affinity
	// lists, or enters or leaves them at its position. listsStale: a list
	// did not hold what the flags said (never expected), so the lists are
	// rebuilt from the flags.
	listsStale := false
	for name := range c.dirty {
		n, ok := c.nodes[name]
		if !ok || n.Node() == nil {
			delete(s.nodeInfoMap, name)
			inPlace = false
			continue
		}
		old := s.nodeInfoMap[name]
		// As in kube-scheduler, a node's image summaries are taken when the
		// node itself is copied into the snapshot: NumNodes of an unchanged
		// node is not refreshed when another node gains or loses the image.
		// Summaries taken since the last change of any node's images are
		// what they would be now, and are kept (their map is never
		// changed: the snapshot's copies share it).
		if n.imagesAt != c.imagesVersion {
			n.setImageStates(c.nodeImageStates(n.Node()))
			n.imagesAt = c.imagesVersion
		}
		// A fresh generation: the copy's image summaries may differ from
		// what an earlier copy of the same cache generation held, and
		// NodeMemo entries must not outlive them.
		ni := n.Clone()
		ni.Generation = nextGeneration()
		s.nodeInfoMap[name] = ni
		if inPlace {
			if old == nil || old.listPos < 1 || old.listPos > len(s.nodeInfoList) || s.nodeInfoList[old.listPos-1] != old {
				inPlace = false
				continue
			}
			ni.listPos = old.listPos
			s.nodeInfoList[old.listPos-1] = ni
			if s.inSlab(old) {
				s.outside++
			}
			s.changes.replaced(old.listPos-1, appendedPod(old, ni))
			if ni.node != old.node {
				s.nodesVersion = nextGeneration()
			}
			f, was := listFlagsOf(ni), s.listFlags[old.listPos-1]
			if !listsStale {
				var ok1, ok2 bool
				s.havePodsWithAffinityNodeInfoList, ok1 = setListedIn(s.havePodsWithAffinityNodeInfoList, ni, was&flagHasAffinity != 0, f&flagHasAffinity != 0)
				s.havePodsWithRequiredAntiAffinityNodeInfoList, ok2 = setListedIn(s.havePodsWithRequiredAntiAffinityNodeInfoList, ni, was&flagHasRequiredAntiAffinity != 0, f&flagHasRequiredAntiAffinity != 0)
				listsStale = !ok1 || !ok2
				if f&flagHasImages != was&flagHasImages {
					if f&flagHasImages != 0 {
						s.imageNodes++
					} else {
						s.imageNodes--
					}
				}
			}
			s.setListed(old.listPos-1, ni, f)
		}
	}
	if inPlace {
		if listsStale {
			s.rebuildAffinityListsFromFlags()
		}
	} else if len(c.dirty) > 0 || c.listsDirty {
		// Rebuilding the list is a pass of pointer copies and one of
		// struct copies into the slab, far cheaper than any cycle's
		// filters.
		s.nodeInfoList = s.nodeInfoList[:0]
		s.clearListed()
		s.nodesVersion = nextGeneration()
		s.changes.rebuilt()
		for _, name := range c.nodeOrder.list() {
			n, ok := s.nodeInfoMap[name]
			if !ok {
				continue
			}
			s.nodeInfoList = append(s.nodeInfoList, n)
			s.appendListed(n, listFlagsOf(n))
		}
		// The list's nodes move into a new slab (nodeslab.go), which
		// also sets their positions and the affinity lists.
		s.reslab()
	}
	if inPlace && s.needsReslab() {
		s.reslab()
	}
	if c.nsDirty {
		s.nsGeneration = nextGeneration()
		s.namespaces = make(map[string]*v1.Namespace, len(c.namespaces))
		for k, v := range c.namespaces {
			s.namespaces[k] = v
		}
	}
	s.Storage = c.storage
	s.features = c.features
	s.Selectors = c.selectors
	if len(c.podGroups) > 0 || len(s.podGroupStates) > 0 || s.genericWorkload != c.features.GenericWorkload {
		c.updatePodGroupSnapshot(s)
	}
	if len(c.dirty) > smallDirty {
		// A cleared map keeps its size, and ranging over it costs as much
		// as when it was full: after the loading (every node dirty),
		// each cycle's loop above would walk thousands of empty slots.
		c.dirty = make(map[string]struct{}, smallDirty)
	} else {
		clear(c.dirty)
	}
	c.listsDirty, c.nsDirty = false, false
	s.generation = nextGeneration()
}
