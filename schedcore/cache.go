package schedcore

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Cache is the scheduler's view of the cluster: nodes with the pods bound or
// assumed on them. Drivers feed it (from a snapshot file or informers); the
// scheduler assumes pods into it before binding. It is safe for concurrent
// use.
type Cache struct {
	mu       sync.RWMutex
	features Features

	nodes     map[string]*NodeInfo
	nodeOrder *nodeTree
	pods      map[string]*podState
	// dirty nodes changed since the last UpdateSnapshot.
	dirty map[string]struct{}
	// listsDirty is set when nodes were added or removed.
	listsDirty bool
	// images tracks, per image name, the size first reported for it and the
	// nodes that have it, kept incrementally as kube-scheduler's cache does.
	images map[string]*imageState
	// imagesVersion changes whenever images does (a node added, updated
	// or removed): a node's summaries taken at the current version are
	// the ones it would be given now.
	imagesVersion uint64
	namespaces    map[string]*v1.Namespace
	nsDirty       bool
	storage       *StorageState
	selectors     *SelectorSources
	// podGroups holds the pod group states (GenericWorkload only;
	// cache_podgroups.go).
	podGroups map[podGroupKey]*podGroupState
}

// imageState is one image name across the cluster: the size recorded when
// the first node reporting it was added, and the nodes that report it.
type imageState struct {
	// name is the image name, one string for every node's summaries
	// (nodeImageStates keys them by it): a lookup in a node's summaries
	// compares names that share their bytes, which stay in the CPU's
	// cache, instead of each node's own copy (image names often have one
	// length, so every key of a node is compared byte by byte).
	name  string
	size  int64
	nodes sets.Set[string]
}

type podState struct {
	pod     *v1.Pod
	info    *PodInfo
	assumed bool
	bound   bool // binding finished
}

// NewCache returns an empty cache.
func NewCache(f Features) *Cache {
	return &Cache{
		features:  f,
		nodes:     map[string]*NodeInfo{},
		nodeOrder: newNodeTree(),
		pods:      map[string]*podState{},
		dirty:     map[string]struct{}{},
		images:    map[string]*imageState{},
		// From 1: a NodeInfo's zero imagesAt is never current.
		imagesVersion: 1,
		namespaces:    map[string]*v1.Namespace{},
	}
}

// Features returns the cache's feature gates.
func (c *Cache) Features() Features { return c.features }

func (c *Cache) nodeInfo(name string) *NodeInfo {
	n, ok := c.nodes[name]
	if !ok {
		n = NewNodeInfo()
		c.nodes[name] = n
	}
	return n
}

// AddNode adds or replaces a node.
//
// Node objects are treated as immutable, as informers deliver them: a
// change comes as a new object (the snapshot's label columns and the
// NodeInfo's copies of name, taints and unschedulable are refreshed when
// the pointer changes, not when an object is modified in place).
func (c *Cache) AddNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodeInfo(node.Name)
	if n.Node() == nil {
		c.nodeOrder.add(node)
		c.listsDirty = true
	} else {
		c.removeNodeImages(n.Node())
		// A zone change moves the node in the zone tree, but, as in
		// kube-scheduler, the snapshot list keeps its order until a node is
		// added or removed: an update only replaces the node in place.
		c.nodeOrder.update(n.Node(), node)
	}
	c.addNodeImages(node)
	n.SetNode(node)
	c.dirty[node.Name] = struct{}{}
}

// UpdateNode replaces a node.
func (c *Cache) UpdateNode(_, node *v1.Node) { c.AddNode(node) }

// RemoveNode removes a node; its pods stay accounted until removed.
func (c *Cache) RemoveNode(node *v1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ok := c.nodes[node.Name]
	if !ok || n.Node() == nil {
		return
	}
	// The stored object, not the argument: a caller's copy may carry other
	// labels (another zone), and the zone list must lose this very entry,
	// or the name would stay listed and come back twice when re-added.
	node = n.Node()
	c.nodeOrder.remove(node)
	if len(n.Pods) == 0 {
		delete(c.nodes, node.Name)
	} else {
		n.RemoveNode()
	}
	c.removeNodeImages(node)
	c.listsDirty = true
	c.dirty[node.Name] = struct{}{}
}

// RefreshImageSummaries marks every node changed, so that the next
// UpdateSnapshot copies each one again and takes its image summaries
// (NumNodes) anew, as a scheduler started on the cluster as it is now
// would see them. Without it, as in kube-scheduler, a node keeps the
// summaries of its last copy when other nodes come and go.
func (c *Cache) RefreshImageSummaries() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.nodes {
		c.dirty[name] = struct{}{}
	}
}

// addNodeImages records the node's images. An image name seen for the first
// time keeps the size this node reports for it, as long as any node has it.
func (c *Cache) addNodeImages(node *v1.Node) {
	c.imagesVersion++
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			st, ok := c.images[name]
			if !ok {
				c.images[name] = &imageState{name: name, size: img.SizeBytes, nodes: sets.New(node.Name)}
				continue
			}
			st.nodes.Insert(node.Name)
		}
	}
}

// removeNodeImages forgets the node's images; a name no node has any more is
// dropped, so a later node brings its own size.
func (c *Cache) removeNodeImages(node *v1.Node) {
	if node == nil {
		return
	}
	c.imagesVersion++
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if st, ok := c.images[name]; ok {
				st.nodes.Delete(node.Name)
				if st.nodes.Len() == 0 {
					delete(c.images, name)
				}
			}
		}
	}
}

// nodeImageStates summarizes the node's images as of now: the recorded size
// and the number of nodes that have each name.
func (c *Cache) nodeImageStates(node *v1.Node) map[string]*ImageStateSummary {
	m := make(map[string]*ImageStateSummary, len(node.Status.Images))
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			if _, ok := m[name]; ok {
				continue
			}
			if st, ok := c.images[name]; ok {
				m[st.name] = &ImageStateSummary{Size: st.size, NumNodes: st.nodes.Len()}
			}
		}
	}
	return m
}

func (c *Cache) addPodLocked(pod *v1.Pod, assumed bool) {
	c.addPodInfoLocked(NewPodInfo(pod), assumed)
}

func (c *Cache) addPodInfoLocked(pi *PodInfo, assumed bool) {
	pod := pi.Pod
	pi.Resource(c.features)
	n := c.nodeInfo(pod.Spec.NodeName)
	// A change of the node's affinity-list membership needs no list
	// rebuild: UpdateSnapshot redoes those lists whenever a node changed.
	n.AddPodInfo(pi, c.features)
	c.pods[PodKey(pod)] = &podState{pod: pod, info: pi, assumed: assumed}
	c.dirty[pod.Spec.NodeName] = struct{}{}
	if c.features.GenericWorkload {
		c.addedPodLocked(pod, assumed)
	}
}

func (c *Cache) removePodLocked(ps *podState) { c.dropPodLocked(ps, false) }

// dropPodLocked removes a pod; forget says it is an assumed pod whose
// binding failed (its group counts it unscheduled again).
func (c *Cache) dropPodLocked(ps *podState, forget bool) {
	if c.features.GenericWorkload {
		c.removedPodLocked(ps.pod, forget)
	}
	name := ps.pod.Spec.NodeName
	if n, ok := c.nodes[name]; ok {
		_ = n.RemovePod(ps.pod, c.features)
		if len(n.Pods) == 0 && n.Node() == nil {
			delete(c.nodes, name)
		}
		c.dirty[name] = struct{}{}
	}
	delete(c.pods, PodKey(ps.pod))
}

// AddPod adds a pod bound to a node (spec.nodeName set). An assumed pod with
// the same key is confirmed and replaced.
func (c *Cache) AddPod(pod *v1.Pod) error {
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("pod %s is not assigned to a node", PodName(pod))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ps, ok := c.pods[PodKey(pod)]
	if !ok {
		c.addPodLocked(pod, false)
		return nil
	}
	// The informer's copy confirming an assumed pod (or an update) keeps
	// the parsed terms when its affinity is the same object.
	pi := ps.info.forPod(pod)
	c.removePodLocked(ps)
	c.addPodInfoLocked(pi, false)
	return nil
}

// UpdatePod replaces an assigned pod.
func (c *Cache) UpdatePod(_, pod *v1.Pod) error { return c.AddPod(pod) }

// RemovePod removes an assigned or assumed pod.
func (c *Cache) RemovePod(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[PodKey(pod)]; ok {
		c.removePodLocked(ps)
	}
}

// AssumePod accounts a pod on its chosen node (pod.Spec.NodeName must be
// set on the copy) before the binding finishes.
func (c *Cache) AssumePod(pod *v1.Pod) error {
	return c.AssumePodInfo(NewPodInfo(pod))
}

// AssumePodInfo is AssumePod with the pod's PodInfo, which the cache keeps
// (and may share with the caller: nothing changes a PodInfo once its
// resource is computed, which the cache does here).
func (c *Cache) AssumePodInfo(pi *PodInfo) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pods[PodKey(pi.Pod)]; ok {
		return fmt.Errorf("pod %s is already in the cache, so can't be assumed", PodName(pi.Pod))
	}
	c.addPodInfoLocked(pi, true)
	return nil
}

// FinishBinding marks an assumed pod as bound.
func (c *Cache) FinishBinding(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[PodKey(pod)]; ok && ps.assumed {
		ps.bound = true
	}
}

// ForgetPod removes an assumed pod (binding failed).
func (c *Cache) ForgetPod(pod *v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[PodKey(pod)]; ok && ps.assumed {
		c.dropPodLocked(ps, true)
	}
}

// IsAssumedPod reports whether the pod is assumed and not yet confirmed.
func (c *Cache) IsAssumedPod(pod *v1.Pod) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ps, ok := c.pods[PodKey(pod)]
	return ok && ps.assumed
}

// GetPod returns the cached copy of a pod.
func (c *Cache) GetPod(pod *v1.Pod) (*v1.Pod, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	ps, ok := c.pods[PodKey(pod)]
	if !ok {
		return nil, false
	}
	return ps.pod, true
}

// AddNamespace adds or replaces a namespace.
func (c *Cache) AddNamespace(ns *v1.Namespace) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.namespaces[ns.Name] = ns
	c.nsDirty = true
}

// RemoveNamespace removes a namespace.
func (c *Cache) RemoveNamespace(ns *v1.Namespace) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.namespaces, ns.Name)
	c.nsDirty = true
}

// SetStorage replaces the storage objects.
func (c *Cache) SetStorage(s *StorageState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.storage = s
}

// SetSelectorSources replaces the Services/ReplicaSets/... used for default
// spreading selectors.
func (c *Cache) SetSelectorSources(s *SelectorSources) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.selectors = s
}

// SelectorSources returns the current selector sources (what the next
// UpdateSnapshot copies); safe for concurrent use.
func (c *Cache) SelectorSources() *SelectorSources {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.selectors
}

// NodeCount counts nodes with a node object.
func (c *Cache) NodeCount() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.nodeOrder.numNodes
}
