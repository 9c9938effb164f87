package schedcore

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	v1 "k8s.io/api/core/v1"
)

var generation atomic.Int64

// nextGeneration returns a process-wide increasing number, so a node deleted
// and added again never reuses a generation.
func nextGeneration() int64 { return generation.Add(1) }

// ImageStateSummary is the size of an image and on how many nodes it is.
type ImageStateSummary struct {
	Size     int64
	NumNodes int
}

// NodeInfo is everything the scheduler aggregates for one node. It is a
// concrete struct so the filter and score loops read fields, not interfaces.
type NodeInfo struct {
	// The fields every filter and scorer reads come first, so that the
	// per-node loops touch few cache lines: the node object itself (a
	// separate allocation, often not in cache) is read only by plugins that
	// need more than these.
	node *v1.Node
	// name, taints and unschedulable are copies of the node's, taken by
	// SetNode.
	name          string
	taints        []v1.Taint
	unschedulable bool
	// listPos is 1 + the node's position in the snapshot list it belongs to
	// (0: none), the index of NodeMemo tables.
	listPos int
	// Generation changes whenever the NodeInfo changes.
	Generation int64
	// nodeGen is the Generation the node object was set (or removed)
	// at: it changes whenever the node object changes, not with its pods.
	nodeGen int64
	// Requested is the sum of the pods' requests.
	Requested Resource
	// Allocatable is node.status.allocatable.
	Allocatable Resource

	// Pods on the node, assumed ones included.
	Pods []*PodInfo
	// PodsWithAffinity is the subset with inter-pod affinity or anti-affinity.
	PodsWithAffinity []*PodInfo
	// PodsWithRequiredAntiAffinity is the subset with required anti-affinity.
	PodsWithRequiredAntiAffinity []*PodInfo
	// UsedPorts are the host ports in use.
	UsedPorts HostPortInfo
	// NonZeroRequested is the sum with non-zero cpu/memory defaults.
	NonZeroRequested Resource
	// ImageStates has an entry per image present on the node.
	ImageStates map[string]*ImageStateSummary
	// PVCRefCounts counts pods per "namespace/claim".
	PVCRefCounts map[string]int

	// imagesAt is, in the cache's own NodeInfo, the cache's image version
	// its ImageStates were summarized at (Cache.UpdateSnapshot).
	imagesAt uint64
	// imageBits is the Bloom filter of ImageStates' names, imageBitsOf
	// the map it was made from (nodeinfo_images.go).
	imageBits   uint64
	imageBitsOf unsafe.Pointer
}

// NewNodeInfo returns an empty NodeInfo holding the given pods.
func NewNodeInfo(pods ...*v1.Pod) *NodeInfo {
	// The maps are made when first written: most nodes have no host
	// ports and no claims, and the cache gives each its image summaries.
	n := &NodeInfo{Generation: nextGeneration()}
	for _, p := range pods {
		n.AddPod(p)
	}
	return n
}

// Node returns the node object; nil if the node was removed.
func (n *NodeInfo) Node() *v1.Node {
	if n == nil {
		return nil
	}
	return n.node
}

// Name returns the node's name, "" if unset.
func (n *NodeInfo) Name() string {
	if n == nil {
		return ""
	}
	return n.name
}

// Taints returns the node's taints (nil without a node).
func (n *NodeInfo) Taints() []v1.Taint { return n.taints }

// Unschedulable returns the node's spec.unschedulable (false without a
// node).
func (n *NodeInfo) Unschedulable() bool { return n.unschedulable }

// SetNode sets the node object and its allocatable resources.
func (n *NodeInfo) SetNode(node *v1.Node) {
	n.node = node
	n.name, n.taints, n.unschedulable = node.Name, node.Spec.Taints, node.Spec.Unschedulable
	n.Allocatable = Resource{}
	n.Allocatable.Add(node.Status.Allocatable)
	n.Generation = nextGeneration()
	n.nodeGen = n.Generation
}

// RemoveNode forgets the node object and keeps the pods.
func (n *NodeInfo) RemoveNode() {
	n.node = nil
	n.name, n.taints, n.unschedulable = "", nil, false
	n.Generation = nextGeneration()
	n.nodeGen = n.Generation
}

// AddPod adds a pod, computing its PodInfo with the default features.
func (n *NodeInfo) AddPod(p *v1.Pod) { n.AddPodInfo(NewPodInfo(p), DefaultFeatures) }

// AddPodInfo adds a pod to the node.
func (n *NodeInfo) AddPodInfo(pi *PodInfo, f Features) {
	n.Pods = append(n.Pods, pi)
	if HasAffinity(pi.Pod) {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if HasRequiredAntiAffinity(pi.Pod) {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1, f)
}

// RemovePod removes a pod by key.
func (n *NodeInfo) RemovePod(p *v1.Pod, f Features) error {
	k := PodKey(p)
	if HasAffinity(p) {
		n.PodsWithAffinity, _ = removePodInfo(n.PodsWithAffinity, k)
	}
	if HasRequiredAntiAffinity(p) {
		n.PodsWithRequiredAntiAffinity, _ = removePodInfo(n.PodsWithRequiredAntiAffinity, k)
	}
	var removed *PodInfo
	if n.Pods, removed = removePodInfo(n.Pods, k); removed != nil {
		n.update(removed, -1, f)
		return nil
	}
	return fmt.Errorf("no pod %s on node %s", PodName(p), n.Name())
}

func removePodInfo(s []*PodInfo, key string) ([]*PodInfo, *PodInfo) {
	for i := range s {
		if s[i].Key() == key {
			r := s[i]
			s[i] = s[len(s)-1]
			s[len(s)-1] = nil
			s = s[:len(s)-1]
			if len(s) == 0 {
				return nil, r
			}
			return s, r
		}
	}
	return s, nil
}

func (n *NodeInfo) update(pi *PodInfo, sign int64, f Features) {
	r := pi.Resource(f)
	n.Requested.MilliCPU += sign * r.Resource.MilliCPU
	n.Requested.Memory += sign * r.Resource.Memory
	n.Requested.EphemeralStorage += sign * r.Resource.EphemeralStorage
	for name, q := range r.Resource.ScalarResources {
		n.Requested.AddScalar(name, sign*q)
	}
	n.NonZeroRequested.MilliCPU += sign * r.Non0CPU
	n.NonZeroRequested.Memory += sign * r.Non0Mem
	for _, port := range HostPorts(pi.Pod) {
		if sign > 0 {
			if n.UsedPorts == nil {
				n.UsedPorts = HostPortInfo{}
			}
			n.UsedPorts.Add(port.HostIP, string(port.Protocol), port.HostPort)
		} else {
			n.UsedPorts.Remove(port.HostIP, string(port.Protocol), port.HostPort)
		}
	}
	for i := range pi.Pod.Spec.Volumes {
		v := &pi.Pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim == nil {
			continue
		}
		key := pi.Pod.Namespace + "/" + v.PersistentVolumeClaim.ClaimName
		if sign > 0 {
			if n.PVCRefCounts == nil {
				n.PVCRefCounts = map[string]int{}
			}
			n.PVCRefCounts[key]++
		} else if n.PVCRefCounts != nil {
			if n.PVCRefCounts[key]--; n.PVCRefCounts[key] <= 0 {
				delete(n.PVCRefCounts, key)
			}
		}
	}
	n.Generation = nextGeneration()
}

// Clone returns a copy that can be mutated (by preemption or nominated-pod
// simulation) without touching the original. PodInfos are shared: they are
// immutable once built.
func (n *NodeInfo) Clone() *NodeInfo {
	c := &NodeInfo{
		node:             n.node,
		name:             n.name,
		taints:           n.taints,
		unschedulable:    n.unschedulable,
		Requested:        *n.Requested.Clone(),
		NonZeroRequested: *n.NonZeroRequested.Clone(),
		Allocatable:      *n.Allocatable.Clone(),
		ImageStates:      n.ImageStates,
		imageBits:        n.imageBits,
		imageBitsOf:      n.imageBitsOf,
		Generation:       n.Generation,
		nodeGen:          n.nodeGen,
		listPos:          n.listPos,
	}
	// Empty maps are not copied: update makes them when first written.
	if len(n.UsedPorts) > 0 {
		c.UsedPorts = n.UsedPorts.Clone()
	}
	if len(n.PVCRefCounts) > 0 {
		c.PVCRefCounts = make(map[string]int, len(n.PVCRefCounts))
		for k, v := range n.PVCRefCounts {
			c.PVCRefCounts[k] = v
		}
	}
	if len(n.Pods) > 0 {
		c.Pods = append([]*PodInfo(nil), n.Pods...)
	}
	if len(n.PodsWithAffinity) > 0 {
		c.PodsWithAffinity = append([]*PodInfo(nil), n.PodsWithAffinity...)
	}
	if len(n.PodsWithRequiredAntiAffinity) > 0 {
		c.PodsWithRequiredAntiAffinity = append([]*PodInfo(nil), n.PodsWithRequiredAntiAffinity...)
	}
	return c
}

// String is for logs and test failures.
func (n *NodeInfo) String() string {
	return fmt.Sprintf("NodeInfo{%s pods:%d requested:%+v allocatable:%+v}", n.Name(), len(n.Pods), n.Requested, n.Allocatable)
}

// listIndex is the node's position in its snapshot's List(), or -1 for a
// NodeInfo outside a snapshot list. Clones keep the index of the original.
func (n *NodeInfo) listIndex() int { return n.listPos - 1 }

// ListIndex is the node's position in its snapshot's list, -1 when it is
// not listed.
func (n *NodeInfo) ListIndex() int { return n.listIndex() }
