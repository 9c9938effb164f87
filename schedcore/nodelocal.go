package schedcore

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// NodeLocalPlugin is an optional interface of the plugins that can reject a
// pod in the scheduling cycle (PreFilter, Filter, Reserve, Permit,
// PreBind). NodeLocal reports whether, for pod, the plugin's verdict on a
// node depends only on that node's NodeInfo and on cluster state that
// placing copies of pod on nodes does not change: then a copy that fits on
// a node keeps fitting there whatever happens on the other nodes, and a
// copy that does not fit never will until that node changes.
//
// Capacity planning relies on it to count how many copies of a workload
// fit node by node rather than cycle by cycle (the count of placements
// until the first failure is then the sum of the per-node counts, whatever
// the order the scores give). A plugin that does not implement it is taken
// to couple nodes, so answer true only when it is certain: a topology
// spread constraint, a pod (anti-)affinity term, a claim shared between
// copies or a gang couple nodes.
type NodeLocalPlugin interface {
	Plugin
	NodeLocal(pod *v1.Pod) bool
}

// AddPodCopy adds pod, bound to a node (spec.nodeName set), as n copies of
// template's pod: pods that differ from it only in name, UID and node, so
// the parsed affinity terms and the resources of template are shared
// rather than computed again. Capacity planning commits thousands of
// copies of one pod this way.
//
// With n > 1, the node gets n entries of one PodInfo over pod (its
// requests, pod count, ports and images counted n times), and the cache
// knows the pod by pod's key once: what reads the node's pods one by one
// sees pod's name n times. That is for copies nothing names afterwards
// (capacity's last spec): removing or updating pod takes one entry away,
// not n. A million copies of one pod at 100,000 nodes were 2.2 GB of pod
// objects, one each.
func (c *Cache) AddPodCopy(pod *v1.Pod, template *PodInfo, n int) error {
	if pod.Spec.NodeName == "" {
		return fmt.Errorf("pod %s is not assigned to a node", PodName(pod))
	}
	if n < 1 {
		return fmt.Errorf("pod %s: %d copies", PodName(pod), n)
	}
	template.Resource(c.features)
	pi := *template
	pi.Pod = pod
	c.mu.Lock()
	defer c.mu.Unlock()
	if ps, ok := c.pods[PodKey(pod)]; ok {
		c.removePodLocked(ps)
	}
	c.addPodInfoLocked(&pi, false)
	ni := c.nodeInfo(pod.Spec.NodeName)
	for range n - 1 {
		ni.AddPodInfo(&pi, c.features)
	}
	return nil
}
