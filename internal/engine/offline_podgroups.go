package engine

import (
	"context"
	"fmt"
	"strconv"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// podGroupStatus writes a PodGroup status a pod-group cycle set, as
// kube's status patch that comes back through the PodGroup informer.
func (c *Offline) podGroupStatus(_ context.Context, pg *schedulingv1beta1.PodGroup, status *schedulingv1beta1.PodGroupStatus) {
	cur, ok := c.podGroups[pg.Namespace+"/"+pg.Name]
	if !ok {
		return
	}
	upd := cur.DeepCopy()
	upd.Status = *status
	_ = c.UpdatePodGroup(upd)
}

// UpdatePodGroup replaces a PodGroup of the cluster (a new minCount, a
// status) and delivers the update to the cache and the queue, as kube's
// PodGroup informer handler; its resourceVersion is the cluster's next.
// It is an error if the PodGroup does not exist.
func (c *Offline) UpdatePodGroup(pg *schedulingv1beta1.PodGroup) error {
	k := pg.Namespace + "/" + pg.Name
	cur, ok := c.podGroups[k]
	if !ok {
		return fmt.Errorf("podgroup %s does not exist", k)
	}
	upd := pg.DeepCopy()
	rv, _ := strconv.Atoi(cur.ResourceVersion)
	upd.ResourceVersion = strconv.Itoa(rv + 1)
	c.changes++
	c.podGroups[k] = upd
	c.Cache.UpdatePodGroup(cur, upd)
	c.Queue.UpdatePodGroup(c.Options.Logger, upd)
	c.Queue.MoveAllToActiveOrBackoffQueue(c.Options.Logger, schedcore.ClusterEvent{Resource: schedcore.PodGroup, ActionType: schedcore.Update}, cur, upd, nil)
	return nil
}

// AddPodGroup brings a new PodGroup into the cluster and delivers it to
// the cache and the queue, as kube's PodGroup informer handler
// (eventhandlers.go addPodGroup): the cache, the queue's observed
// PodGroups, then the requeue. It is an error if the PodGroup exists.
func (c *Offline) AddPodGroup(pg *schedulingv1beta1.PodGroup) error {
	k := pg.Namespace + "/" + pg.Name
	if _, ok := c.podGroups[k]; ok {
		return fmt.Errorf("podgroup %s already exists", k)
	}
	add := pg.DeepCopy()
	if add.ResourceVersion == "" {
		add.ResourceVersion = "1"
	}
	c.podGroups[k] = add
	c.pgOrder = append(c.pgOrder, k)
	c.changes++
	c.Cache.AddPodGroup(add)
	c.Queue.AddPodGroup(c.Options.Logger, add)
	c.Queue.MoveAllToActiveOrBackoffQueue(c.Options.Logger, schedcore.ClusterEvent{Resource: schedcore.PodGroup, ActionType: schedcore.Add}, nil, add, nil)
	return nil
}

// DeletePodGroup removes a PodGroup from the cluster and delivers the
// deletion as kube's handler (deletePodGroup): its queued members go back
// to incompletePodGroupPods. A PodGroup that is not there is no error.
func (c *Offline) DeletePodGroup(namespace, name string) {
	k := namespace + "/" + name
	cur, ok := c.podGroups[k]
	if !ok {
		return
	}
	delete(c.podGroups, k)
	c.changes++
	for i, o := range c.pgOrder {
		if o == k {
			c.pgOrder = append(c.pgOrder[:i:i], c.pgOrder[i+1:]...)
			break
		}
	}
	c.Cache.RemovePodGroup(cur)
	c.Queue.DeletePodGroup(c.Options.Logger, cur)
	c.Queue.MoveAllToActiveOrBackoffQueue(c.Options.Logger, schedcore.ClusterEvent{Resource: schedcore.PodGroup, ActionType: schedcore.Delete}, cur, nil, nil)
}

// PodGroups returns the cluster's PodGroups as they are now, with the
// status the pod-group cycles wrote, in the cluster's order.
func (c *Offline) PodGroups() []*schedulingv1beta1.PodGroup {
	out := make([]*schedulingv1beta1.PodGroup, 0, len(c.pgOrder))
	for _, k := range c.pgOrder {
		out = append(out, c.podGroups[k])
	}
	return out
}
