package engine

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// The nodes' changes, as the node informer delivers them: to the cache,
// then to the queue.

// UpdateNode replaces a node (cordoning, relabelling, resizing) and sends
// the queue the events its changes are, as the node informer would.
func (c *Offline) UpdateNode(node *v1.Node) error {
	ni, err := c.Current().Get(node.Name)
	if err != nil {
		return fmt.Errorf("node %q: %w", node.Name, err)
	}
	old := ni.Node()
	c.changes++
	c.Cache.UpdateNode(old, node)
	for _, ev := range schedcore.NodeSchedulingPropertiesChange(node, old) {
		c.Queue.MoveAllToActiveOrBackoffQueue(c.Options.Logger, ev, old, node, nil)
	}
	return nil
}

// AddNode adds a node as kube-scheduler's node informer handler does: the
// cache takes it, then the queue gets Node/Add.
func (c *Offline) AddNode(node *v1.Node) {
	c.changes++
	c.Cache.AddNode(node)
	c.Queue.MoveAllToActiveOrBackoffQueue(c.Options.Logger, schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add}, nil, node, nil)
}

// RemoveNode deletes a node as kube-scheduler's node informer handler
// does (the queue gets Node/Delete, then the cache forgets the node) and
// returns the pods bound to it, in namespace/name order. Nothing deletes
// them yet: the pod garbage collector does once the node is gone, which
// the driver plays with Delete (replay records each as it goes).
func (c *Offline) RemoveNode(name string) ([]*v1.Pod, error) {
	ni, err := c.Current().Get(name)
	if err != nil {
		return nil, fmt.Errorf("node %q: %w", name, err)
	}
	var bound []*v1.Pod
	for _, pi := range ni.Pods {
		// Assumed pods (waiting at Permit) are not bound: their binding
		// cycle fails once the node is gone.
		if cur, ok := c.store.get(pi.Pod.Namespace, pi.Pod.Name); ok && cur.Spec.NodeName == name {
			bound = append(bound, cur)
		}
	}
	sort.Slice(bound, func(i, j int) bool { return schedcore.PodName(bound[i]) < schedcore.PodName(bound[j]) })
	node := ni.Node()
	c.changes++
	c.Queue.MoveAllToActiveOrBackoffQueue(c.Options.Logger, schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Delete}, node, nil, nil)
	c.Cache.RemoveNode(node)
	return bound, nil
}
