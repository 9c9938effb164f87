package schedcore

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Mutation sessions: kube-scheduler v1.37's Snapshot.StartMutations /
// AddPod / RemovePod / EndMutations (backend/cache/snapshot.go), which
// pod-group preemption uses to take every potential victim off the
// cluster, run the group algorithm there, and put victims and preemptors
// back one by one while it reprieves them; EndMutations gives the
// snapshot back as it was.
//
// kube copies every NodeInfo at StartMutations and changes the copies in
// place. Here a simulation never changes a listed NodeInfo in place (see
// snapshot_assume.go): each AddPod/RemovePod lists a clone of the node
// under a fresh generation (copy on write, so a session costs what it
// touches, not the cluster's size), remembering the NodeInfo the node had
// when the session started; EndMutations lists those again, each under a
// fresh generation, so that no memo keyed by generation takes a value
// computed during the session for the restored node. The pod group states
// a mutation touches are copied on first write and put back at the end.

// errNoMutationSession is kube's error for AddPod/RemovePod outside a session.
var errNoMutationSession = errors.New("no mutation session started")

// snapshotMutations is an open session: the NodeInfos and group states
// the session replaced, as they were when it started.
type snapshotMutations struct {
	nodes map[string]*NodeInfo
	// order lists the nodes of nodes in first-touch order (EndMutations
	// restores them in that order; the result does not depend on it).
	order  []string
	groups map[podGroupKey]*podGroupState
	// assumed is the assume stack's depth at the start: the session must
	// end with as many pods assumed.
	assumed int
}

// StartMutations opens a mutation session (kube's error when one is open).
func (s *Snapshot) StartMutations() error {
	if s.mutations != nil {
		return fmt.Errorf("cannot stack mutations")
	}
	s.mutations = &snapshotMutations{nodes: map[string]*NodeInfo{}, groups: map[podGroupKey]*podGroupState{}, assumed: len(s.assumed)}
	return nil
}

// InMutations reports whether a mutation session is open.
func (s *Snapshot) InMutations() bool { return s.mutations != nil }

// EndMutations closes the session and lists again every NodeInfo and
// group state the session changed, as they were at StartMutations.
func (s *Snapshot) EndMutations() error {
	m := s.mutations
	if m == nil {
		return errNoMutationSession
	}
	if len(s.assumed) != m.assumed {
		return fmt.Errorf("mutation session ends with %d pods assumed in the snapshot, it started with %d", len(s.assumed), m.assumed)
	}
	for _, name := range m.order {
		prev := m.nodes[name]
		cur := s.nodeInfoMap[name]
		if prev == nil {
			delete(s.nodeInfoMap, name)
			continue
		}
		prev.Generation = nextGeneration()
		s.nodeInfoMap[name] = prev
		s.relist(cur, prev, nil)
	}
	for key, st := range m.groups {
		if st == nil {
			delete(s.podGroupStates, key)
			continue
		}
		s.podGroupStates[key] = st
	}
	s.mutations = nil
	s.generation = nextGeneration()
	return nil
}

// mutateNode lists a fresh copy of the node's NodeInfo, changed by
// change, remembering the session's original.
func (s *Snapshot) mutateNode(nodeName string, create bool, change func(*NodeInfo) error, added *PodInfo) error {
	m := s.mutations
	if m == nil {
		return errNoMutationSession
	}
	old := s.nodeInfoMap[nodeName]
	var ni *NodeInfo
	switch {
	case old != nil:
		ni = old.Clone()
	case create:
		ni = NewNodeInfo()
		if s.nodeInfoMap == nil {
			s.nodeInfoMap = map[string]*NodeInfo{}
		}
	default:
		return fmt.Errorf("node %q not found in the snapshot", nodeName)
	}
	if err := change(ni); err != nil {
		return err
	}
	ni.Generation = nextGeneration()
	if _, ok := m.nodes[nodeName]; !ok {
		m.nodes[nodeName] = old
		m.order = append(m.order, nodeName)
	}
	s.nodeInfoMap[nodeName] = ni
	s.relist(old, ni, added)
	s.generation = nextGeneration()
	return nil
}

// mutateGroup applies change to the pod's group state, copied first in
// this session.
func (s *Snapshot) mutateGroup(pod *v1.Pod, change func(*podGroupState)) {
	if !s.genericWorkload {
		return
	}
	key, ok := memberKey(pod)
	if !ok {
		return
	}
	st := s.podGroupStates[key]
	if st == nil {
		return
	}
	m := s.mutations
	if _, saved := m.groups[key]; !saved {
		m.groups[key] = st
		st = st.clone()
		s.podGroupStates[key] = st
	}
	change(st)
}

// MutationAddPod adds a pod to nodeName's NodeInfo (a node the snapshot
// lacks gets an unlisted one) and to its group state, in a mutation
// session (kube's Snapshot.AddPod).
func (s *Snapshot) MutationAddPod(pi *PodInfo, nodeName string) error {
	if err := s.mutateNode(nodeName, true, func(ni *NodeInfo) error {
		ni.AddPodInfo(pi, s.features)
		return nil
	}, pi); err != nil {
		return err
	}
	s.mutateGroup(pi.Pod, func(st *podGroupState) { st.addPod(pi.Pod) })
	return nil
}

// MutationRemovePod removes a pod from nodeName's NodeInfo and its group
// state, in a mutation session (kube's Snapshot.RemovePod).
func (s *Snapshot) MutationRemovePod(pod *v1.Pod, nodeName string) error {
	if err := s.mutateNode(nodeName, false, func(ni *NodeInfo) error {
		return ni.RemovePod(pod, s.features)
	}, nil); err != nil {
		return err
	}
	s.mutateGroup(pod, func(st *podGroupState) { st.deletePod(pod.UID) })
	if ni := s.nodeInfoMap[nodeName]; ni != nil && len(ni.Pods) == 0 && ni.Node() == nil {
		delete(s.nodeInfoMap, nodeName)
	}
	return nil
}
