package schedcore

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Simulation in the snapshot. A pod-group cycle places its members one
// after another in the cycle's snapshot, never in the cache, and undoes
// every placement before the cycle ends (kube-scheduler v1.37's
// Snapshot.AssumePod/ForgetPod, backend/cache/snapshot.go); with
// TopologyAwareWorkloadScheduling it also restricts the algorithm's nodes
// to one placement at a time (AssumePlacement).
//
// A simulation never changes a listed NodeInfo in place: AssumePod
// lists a copy of the node holding the pod, at the node's position, with
// a fresh generation, and records the position in the snapshot's change
// log, as UpdateSnapshot does for a node the cache changed; ForgetPod
// lists the NodeInfo the node had before again, also under a fresh
// generation. Every memo keyed by a node's generation (NodeMemo,
// VerdictMemo, the runner's score memos, NodeSlots and the indexes and
// totals synced from the change log) thus sees both changes. kube keeps
// the old generation on both (its NodeInfos are the cache's generation
// numbers); doing that here would let a value remembered while the pod
// was assumed pass for the node without it after the forget, or the
// other way round.

// snapshotAssumed is one pod AssumePod placed, on the assume stack.
type snapshotAssumed struct {
	key  string
	pod  *v1.Pod
	node string
	// prev is the NodeInfo the node had before the assume, which
	// ForgetPod lists again; nil when the snapshot had no such node
	// (AssumePod made an unlisted one, which ForgetPod drops).
	prev *NodeInfo
}

// snapshotPlacement is the placement AssumePlacement set.
type snapshotPlacement struct {
	name string
	// given is the node list as the caller gave it (Placement); nodes
	// the snapshot's current NodeInfos of those nodes, in that order,
	// which AssumePod and ForgetPod keep current.
	given, nodes []*NodeInfo
}

// AssumePod places a pod (pi.Pod.Spec.NodeName set) in the snapshot only,
// for the rest of a pod-group cycle: the node's NodeInfo, the affinity
// lists and the pod's group state (assumed) then count it, the cache
// does not. Undo it with ForgetPod, last assumed first. A node the
// snapshot does not have gets an unlisted NodeInfo, as kube's does. Not
// safe to call while anything else reads or writes the snapshot.
func (s *Snapshot) AssumePod(pi *PodInfo) error {
	pod := pi.Pod
	name := pod.Spec.NodeName
	if name == "" {
		return fmt.Errorf("pod %s is not assigned to a node", PodName(pod))
	}
	old := s.nodeInfoMap[name]
	var ni *NodeInfo
	if old != nil {
		ni = old.Clone()
	} else {
		ni = NewNodeInfo()
		if s.nodeInfoMap == nil {
			s.nodeInfoMap = map[string]*NodeInfo{}
		}
	}
	ni.AddPodInfo(pi, s.features)
	// A fresh generation (AddPodInfo takes one too; this says it is
	// wanted): never old's (see above).
	ni.Generation = nextGeneration()
	s.nodeInfoMap[name] = ni
	s.relist(old, ni, pi)
	s.assumed = append(s.assumed, snapshotAssumed{key: PodKey(pod), pod: pod, node: name, prev: old})
	s.generation = nextGeneration()
	if s.genericWorkload {
		if key, ok := memberKey(pod); ok {
			if st := s.podGroupStates[key]; st != nil {
				st.assumePod(pod)
			}
		}
	}
	return nil
}

// ForgetPod undoes the last AssumePod, which must be pod's: the node gets
// back the NodeInfo it had before, under a fresh generation, and the
// pod's group state counts it unscheduled (or assigned) again. kube's
// contract is the same (forgotten in reverse order of assume); a pod
// assumed earlier than the last one is refused here rather than logged.
func (s *Snapshot) ForgetPod(pod *v1.Pod) error {
	key := PodKey(pod)
	n := len(s.assumed)
	if n == 0 || s.assumed[n-1].key != key {
		for _, a := range s.assumed {
			if a.key == key {
				return fmt.Errorf("cannot forget assumed pod %q in the snapshot: it is not the last assumed one", key)
			}
		}
		return fmt.Errorf("assumed pod %q not found in the snapshot", key)
	}
	a := s.assumed[n-1]
	s.assumed[n-1] = snapshotAssumed{}
	s.assumed = s.assumed[:n-1]
	cur := s.nodeInfoMap[a.node]
	if a.prev == nil {
		delete(s.nodeInfoMap, a.node)
	} else {
		// Its content is what it was before the assume; its generation
		// is new, so that nothing remembered since is taken for it.
		a.prev.Generation = nextGeneration()
		s.nodeInfoMap[a.node] = a.prev
		s.relist(cur, a.prev, nil)
	}
	s.generation = nextGeneration()
	if s.genericWorkload {
		if key, ok := memberKey(a.pod); ok {
			if st := s.podGroupStates[key]; st != nil {
				st.forgetPod(a.pod.UID)
			}
		}
	}
	return nil
}

// NumAssumedPods counts the pods assumed in the snapshot and not yet
// forgotten.
func (s *Snapshot) NumAssumedPods() int { return len(s.assumed) }

// endSimulation forgets what a pod-group cycle left in the snapshot (the
// placement, pods still assumed), last assumed first, before the cache
// updates it: kube's UpdateSnapshot does the same (and logs it).
func (s *Snapshot) endSimulation() {
	s.ForgetPlacement()
	if m := s.mutations; m != nil {
		// A session left open: forget what it assumed, then restore.
		for len(s.assumed) > m.assumed {
			if err := s.ForgetPod(s.assumed[len(s.assumed)-1].pod); err != nil {
				panic(err)
			}
		}
		if err := s.EndMutations(); err != nil {
			panic(err)
		}
	}
	for n := len(s.assumed); n > 0; n = len(s.assumed) {
		if err := s.ForgetPod(s.assumed[n-1].pod); err != nil {
			// Not expected: the top of the stack is always forgettable.
			panic(err)
		}
	}
}

// relist puts ni in the place of old (the NodeInfo the snapshot lists for
// that node) when old is listed: the list, the affinity lists, the
// per-position columns, the change log (added: the pod ni holds beyond
// old, and nothing else differs; nil: unknown) and the placement's nodes.
func (s *Snapshot) relist(old, ni *NodeInfo, added *PodInfo) {
	if old == nil || old.listPos < 1 || old.listPos > len(s.nodeInfoList) || s.nodeInfoList[old.listPos-1] != old {
		return
	}
	i := old.listPos - 1
	ni.listPos = old.listPos
	s.nodeInfoList[i] = ni
	f, was := listFlagsOf(ni), s.listFlags[i]
	s.setListed(i, ni, f)
	var ok1, ok2 bool
	s.havePodsWithAffinityNodeInfoList, ok1 = setListedIn(s.havePodsWithAffinityNodeInfoList, ni, was&flagHasAffinity != 0, f&flagHasAffinity != 0)
	s.havePodsWithRequiredAntiAffinityNodeInfoList, ok2 = setListedIn(s.havePodsWithRequiredAntiAffinityNodeInfoList, ni, was&flagHasRequiredAntiAffinity != 0, f&flagHasRequiredAntiAffinity != 0)
	if !ok1 || !ok2 || f&flagHasImages != was&flagHasImages {
		s.rebuildAffinityListsFromFlags()
	}
	s.changes.replaced(i, added)
	if p := s.placement; p != nil && i < len(s.placementAt) {
		if j := s.placementAt[i]; j > 0 {
			p.nodes[j-1] = ni
		}
	}
}

// AssumePlacement restricts the nodes the scheduling algorithm considers
// (ListNodesInPlacement, NumNodesInPlacement, GetNodeInPlacement) to
// nodes, kube's Placement{Name: name, Nodes: nodes}, until
// ForgetPlacement or the next AssumePlacement; List and Get, which
// plugins read, still see every node. As kube's, a placement of as many
// nodes as the snapshot lists is no restriction. The nodes are matched by
// name with the snapshot's current NodeInfos (kube requires the very
// instances; here a forgotten assume lists the node's earlier NodeInfo
// again, not the one a placement made before may hold), in the order
// given; a node the snapshot does not list is an error, and the snapshot
// is left without placement. Not safe to call while anything else reads
// or writes the snapshot.
func (s *Snapshot) AssumePlacement(name string, nodes []*NodeInfo) error {
	s.ForgetPlacement()
	if len(nodes) == len(s.nodeInfoList) {
		return nil
	}
	if cap(s.placementAt) < len(s.nodeInfoList) {
		s.placementAt = make([]int32, len(s.nodeInfoList))
	}
	s.placementAt = s.placementAt[:len(s.nodeInfoList)]
	p := &snapshotPlacement{name: name, given: nodes, nodes: make([]*NodeInfo, 0, len(nodes))}
	s.placement = p
	for _, n := range nodes {
		node := n.Name()
		cur := s.nodeInfoMap[node]
		if cur == nil || cur.Node() == nil || cur.listPos < 1 || cur.listPos > len(s.nodeInfoList) || s.nodeInfoList[cur.listPos-1] != cur {
			s.ForgetPlacement()
			return fmt.Errorf("node %s in placement is not present in snapshot", node)
		}
		if s.placementAt[cur.listPos-1] != 0 {
			s.ForgetPlacement()
			return fmt.Errorf("node %s is more than once in placement %q", node, name)
		}
		p.nodes = append(p.nodes, cur)
		s.placementAt[cur.listPos-1] = int32(len(p.nodes))
	}
	return nil
}

// ForgetPlacement lifts the restriction AssumePlacement set.
func (s *Snapshot) ForgetPlacement() {
	p := s.placement
	if p == nil {
		return
	}
	for _, ni := range p.nodes {
		if i := ni.listPos - 1; i >= 0 && i < len(s.placementAt) {
			s.placementAt[i] = 0
		}
	}
	s.placement = nil
}

// Placement returns the placement AssumePlacement set, as it was given;
// ok is false when there is none (kube's GetPlacement returning nil).
func (s *Snapshot) Placement() (name string, nodes []*NodeInfo, ok bool) {
	if s.placement == nil {
		return "", nil, false
	}
	return s.placement.name, s.placement.given, true
}

// NumNodesInPlacement counts the nodes of the placement, or of the
// snapshot when none is set (the FitError's "0/N nodes").
func (s *Snapshot) NumNodesInPlacement() int {
	if s.placement != nil {
		return len(s.placement.nodes)
	}
	return len(s.nodeInfoList)
}

// ListNodesInPlacement returns the nodes the algorithm considers: the
// placement's, in its order, with what is assumed on them, or List()
// when none is set. Callers only read it.
func (s *Snapshot) ListNodesInPlacement() []*NodeInfo {
	if s.placement != nil {
		return s.placement.nodes
	}
	return s.nodeInfoList
}

// GetNodeInPlacement is Get restricted to the placement, when one is set:
// a node outside it is an error (kube's words).
func (s *Snapshot) GetNodeInPlacement(name string) (*NodeInfo, error) {
	if s.placement == nil {
		return s.Get(name)
	}
	if ni := s.nodeInfoMap[name]; ni != nil && ni.listPos >= 1 && ni.listPos <= len(s.placementAt) && s.placementAt[ni.listPos-1] != 0 {
		return ni, nil
	}
	return nil, fmt.Errorf("node %q not found in placement", name)
}
