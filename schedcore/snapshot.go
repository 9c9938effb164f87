package schedcore

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Snapshot is the cluster state one scheduling cycle sees. It is updated in
// place from the Cache before each cycle, copying only the nodes that
// changed. Plugins read it through Handle.Snapshot().
type Snapshot struct {
	nodeInfoMap                                  map[string]*NodeInfo
	nodeInfoList                                 []*NodeInfo
	havePodsWithAffinityNodeInfoList             []*NodeInfo
	havePodsWithRequiredAntiAffinityNodeInfoList []*NodeInfo
	// listFlags holds, per list position, which affinity lists the node
	// is in (and whether it holds images), so that they can be rebuilt
	// without reading every NodeInfo.
	listFlags []uint8
	// listGens and listNames hold, per list position, the listed node's
	// Generation and name: the filter and score loops, which go through the
	// list by position, read them here rather than from each NodeInfo, so
	// a node whose verdicts and scores are remembered is never reached
	// (5000 NodeInfos are as many cache misses per cycle). UpdateSnapshot
	// sets a position's entries whenever it changes the NodeInfo listed
	// there (in place or by a new copy), so they stay its own.
	listGens  []int64
	listNames []string
	// slab holds the listed NodeInfos as of the last list rebuild, in
	// list order, updated in place since (nodeslab.go).
	slab []NodeInfo
	// nameRank holds, per list position, the listed node's rank in name
	// order (nameRanks), computed on first use after the list is built:
	// replacing a node in place keeps its name, and a rebuild empties it.
	rankMu   sync.Mutex
	nameRank []int32
	// imageNodes counts the listed nodes with images (ImageStates).
	imageNodes   int
	namespaces   map[string]*v1.Namespace
	generation   int64
	nsGeneration int64
	// nodesVersion changes whenever a node object in the list changes or
	// the list is rebuilt (the validity of label columns).
	nodesVersion int64
	columns      labelColumns
	// changes lists the positions replaced since the list was built
	// (NodeSlots.SyncSnapshot).
	changes nodeChangeLog
	// imageChanges lists the positions replaced since the list was built
	// whose new NodeInfo has other image summaries (another ImageStates
	// map) than the one it replaced; images are the columns kept with it
	// (imagecolumn.go).
	imageChanges nodeChangeLog
	images       imageColumns
	// podIndex indexes the listed nodes' pods by label pair, for every
	// MatchCounter and TermCounter reading this snapshot (podindex.go).
	podIndex PodLabelIndex
	// Storage holds the volume-related objects; nil means none.
	Storage *StorageState
	// Selectors holds the objects whose selectors define a pod's default
	// spreading selector (Services, ReplicaSets, StatefulSets,
	// ReplicationControllers); nil means none.
	Selectors *SelectorSources
	// podGroupStates are the cache's pod group states as of the last
	// UpdateSnapshot, genericWorkload its gate (cache_podgroups.go).
	podGroupStates  map[podGroupKey]*podGroupState
	genericWorkload bool
	// features are the cache's, for the pods AssumePod adds.
	features Features
	// assumed is the stack of pods AssumePod placed in the snapshot
	// alone, placement the nodes AssumePlacement restricts the algorithm
	// to, and placementAt, per list position, 1 + the node's index in
	// the placement (0: not in it) (snapshot_assume.go).
	assumed     []snapshotAssumed
	placement   *snapshotPlacement
	placementAt []int32
	// mutations is the open mutation session, nil when none
	// (snapshot_mutations.go).
	mutations *snapshotMutations
}

// SelectorSources are the objects kube-scheduler's DefaultSelector reads to
// build the default topology spread selector of a pod.
type SelectorSources struct {
	Services               []*v1.Service
	ReplicationControllers []*v1.ReplicationController
	ReplicaSets            []*appsv1.ReplicaSet
	StatefulSets           []*appsv1.StatefulSet
}

// NewEmptySnapshot returns a snapshot without nodes.
func NewEmptySnapshot() *Snapshot {
	return &Snapshot{nodeInfoMap: map[string]*NodeInfo{}, namespaces: map[string]*v1.Namespace{}}
}

// NewSnapshot builds a snapshot directly from pods and nodes (for tests and
// one-shot tools); pods on unknown nodes are ignored.
func NewSnapshot(pods []*v1.Pod, nodes []*v1.Node) *Snapshot {
	c := NewCache(DefaultFeatures)
	for _, n := range nodes {
		c.AddNode(n)
	}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			_ = c.AddPod(p)
		}
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	return s
}

// setListed records the listed node n at position i (flags f, from
// listFlagsOf).
func (s *Snapshot) setListed(i int, n *NodeInfo, f uint8) {
	s.listFlags[i], s.listGens[i], s.listNames[i] = f, n.Generation, n.name
}

// appendListed records n, with flags f, as the next listed node.
func (s *Snapshot) appendListed(n *NodeInfo, f uint8) {
	s.listFlags = append(s.listFlags, f)
	s.listGens = append(s.listGens, n.Generation)
	s.listNames = append(s.listNames, n.name)
}

// clearListed empties the per-position columns before the list is rebuilt.
func (s *Snapshot) clearListed() {
	s.rankMu.Lock()
	s.nameRank = s.nameRank[:0]
	s.rankMu.Unlock()
	clear(s.listNames) // the names must not stay alive
	s.listFlags, s.listGens, s.listNames = s.listFlags[:0], s.listGens[:0], s.listNames[:0]
}

// nameRanks returns, per list position, the listed node's rank in name
// order: comparing two listed nodes' ranks compares their names.
func (s *Snapshot) nameRanks() []int32 {
	s.rankMu.Lock()
	defer s.rankMu.Unlock()
	if len(s.nameRank) == len(s.nodeInfoList) {
		return s.nameRank
	}
	byName := make([]int32, len(s.nodeInfoList))
	for i := range byName {
		byName[i] = int32(i)
	}
	slices.SortFunc(byName, func(a, b int32) int { return strings.Compare(s.nodeInfoList[a].name, s.nodeInfoList[b].name) })
	s.nameRank = slices.Grow(s.nameRank[:0], len(byName))[:len(byName)]
	for r, i := range byName {
		s.nameRank[i] = int32(r)
	}
	return s.nameRank
}

// listedAt returns the generation and name of the node at list position
// i, as its NodeInfo holds them.
func (s *Snapshot) listedAt(i int) (int64, string) { return s.listGens[i], s.listNames[i] }

// List returns all nodes, in the cache's zone-interleaved order.
func (s *Snapshot) List() []*NodeInfo { return s.nodeInfoList }

// HavePodsWithAffinityList returns nodes with pods that have (anti-)affinity.
func (s *Snapshot) HavePodsWithAffinityList() []*NodeInfo { return s.havePodsWithAffinityNodeInfoList }

// HavePodsWithRequiredAntiAffinityList returns nodes with pods that have
// required anti-affinity.
func (s *Snapshot) HavePodsWithRequiredAntiAffinityList() []*NodeInfo {
	return s.havePodsWithRequiredAntiAffinityNodeInfoList
}

// Get returns a node by name.
func (s *Snapshot) Get(name string) (*NodeInfo, error) {
	if n, ok := s.nodeInfoMap[name]; ok && n.Node() != nil {
		return n, nil
	}
	return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
}

// NamespaceGeneration changes whenever the namespaces (or their labels)
// change, for caches of namespace-selector results.
func (s *Snapshot) NamespaceGeneration() int64 { return s.nsGeneration }

// NodesWithImages counts the listed nodes that hold at least one image
// (a non-empty ImageStates).
func (s *Snapshot) NodesWithImages() int { return s.imageNodes }

// NumNodes counts nodes.
func (s *Snapshot) NumNodes() int { return len(s.nodeInfoList) }

// Namespace returns a namespace, nil if unknown.
func (s *Snapshot) Namespace(name string) *v1.Namespace { return s.namespaces[name] }

// NamespaceLabels returns a namespace's labels; nil if unknown.
func (s *Snapshot) NamespaceLabels(name string) labels.Set {
	if ns := s.namespaces[name]; ns != nil {
		return ns.Labels
	}
	return nil
}

// Namespaces lists all namespaces.
func (s *Snapshot) Namespaces() []*v1.Namespace {
	out := make([]*v1.Namespace, 0, len(s.namespaces))
	for _, ns := range s.namespaces {
		out = append(out, ns)
	}
	return out
}

// Generation is the snapshot's generation, changed by every update.
func (s *Snapshot) Generation() int64 { return s.generation }

// NameRanks returns, per list position, the listed node's rank in name
// order. Callers only read it.
func (s *Snapshot) NameRanks() []int32 { return s.nameRanks() }

// ListedAt returns the generation and name of the node at list position i.
func (s *Snapshot) ListedAt(i int) (int64, string) { return s.listedAt(i) }

// ListedGenerations returns the listed nodes' generations by list
// position. Callers only read it.
func (s *Snapshot) ListedGenerations() []int64 { return s.listGens }

// ListedNames returns the listed nodes' names by list position. Callers
// only read it.
func (s *Snapshot) ListedNames() []string { return s.listNames }

// NodeInfo returns the node of that name, nil when there is none.
func (s *Snapshot) NodeInfo(name string) *NodeInfo { return s.nodeInfoMap[name] }
