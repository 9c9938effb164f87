package schedcore

import (
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
)

// The cache's pod group states, kept as kube's cache keeps them
// (backend/cache/cache.go, isPodGroupMember and after): only with
// GenericWorkload on, for pods naming a group in
// spec.schedulingGroup.podGroupName. Bound members come with AddPod,
// assumed ones with AssumePod (ForgetPod puts them back), unscheduled
// ones with AddPodGroupMember, which the driver calls when it queues a
// pod for a profile of its own; PodGroup objects with AddPodGroup.

// podGroupMember returns the group of a pod that is a member, which it is
// only with GenericWorkload on.
func (c *Cache) podGroupMember(pod *v1.Pod) (podGroupKey, bool) {
	if !c.features.GenericWorkload {
		return podGroupKey{}, false
	}
	return memberKey(pod)
}

// groupLocked returns the state of key, created when missing.
func (c *Cache) groupLocked(key podGroupKey) *podGroupState {
	st, ok := c.podGroups[key]
	if !ok {
		st = newPodGroupState()
		if c.podGroups == nil {
			c.podGroups = map[podGroupKey]*podGroupState{}
		}
		c.podGroups[key] = st
	}
	return st
}

// addedPodLocked follows a pod entering the cache (bound or assumed).
func (c *Cache) addedPodLocked(pod *v1.Pod, assumed bool) {
	key, ok := c.podGroupMember(pod)
	if !ok {
		return
	}
	if !assumed {
		c.groupLocked(key).addPod(pod)
		return
	}
	st, ok := c.podGroups[key]
	if !ok {
		// kube's assumePodGroupMember: a state it creates knows the pod.
		st = c.groupLocked(key)
		st.allPods[pod.UID] = pod
	}
	st.assumePod(pod)
}

// removedPodLocked follows a pod leaving the cache: forgotten (an assumed
// pod whose binding failed) or removed.
func (c *Cache) removedPodLocked(pod *v1.Pod, forget bool) {
	key, ok := c.podGroupMember(pod)
	if !ok {
		return
	}
	st, ok := c.podGroups[key]
	if !ok {
		return
	}
	if forget {
		st.forgetPod(pod.UID)
		return
	}
	st.deletePod(pod.UID)
	if st.empty() {
		delete(c.podGroups, key)
	}
}

// AddPodGroupMember records an unscheduled member (a pending pod the
// driver queues for one of its profiles).
func (c *Cache) AddPodGroupMember(pod *v1.Pod) {
	key, ok := c.podGroupMember(pod)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.groupLocked(key).addPod(pod)
}

// UpdatePodGroupMember replaces an unscheduled member's pod.
func (c *Cache) UpdatePodGroupMember(oldPod, newPod *v1.Pod) {
	key, ok := c.podGroupMember(newPod)
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.podGroups[key]; ok {
		st.updatePod(oldPod, newPod)
	}
}

// RemovePodGroupMember forgets an unscheduled member (deleted).
func (c *Cache) RemovePodGroupMember(pod *v1.Pod) {
	if _, ok := c.podGroupMember(pod); !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removedPodLocked(pod, false)
}

// AddPodGroup records a PodGroup object.
func (c *Cache) AddPodGroup(pg *schedulingv1beta1.PodGroup) {
	if !c.features.GenericWorkload {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.groupLocked(podGroupKey{pg.Namespace, pg.Name}).setPodGroup(pg)
}

// UpdatePodGroup replaces a PodGroup object; one never added is ignored
// (kube logs a missed add event).
func (c *Cache) UpdatePodGroup(_, pg *schedulingv1beta1.PodGroup) {
	if !c.features.GenericWorkload {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.podGroups[podGroupKey{pg.Namespace, pg.Name}]; ok {
		st.setPodGroup(pg)
	}
}

// RemovePodGroup forgets a PodGroup object; the state stays while members
// are known.
func (c *Cache) RemovePodGroup(pg *schedulingv1beta1.PodGroup) {
	if !c.features.GenericWorkload {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	key := podGroupKey{pg.Namespace, pg.Name}
	st, ok := c.podGroups[key]
	if !ok {
		return
	}
	st.removePodGroup()
	if st.empty() {
		delete(c.podGroups, key)
	}
}

func (c *Cache) readLock() func() {
	c.mu.RLock()
	return c.mu.RUnlock
}

func (c *Cache) podGroupStates() podGroupStates {
	return podGroupStates{enabled: c.features.GenericWorkload, m: c.podGroups, lock: c.readLock}
}

// PodGroupStates lists the cache's group states (copies: the cache's own
// change under other goroutines), for PreEnqueue and queueing hints.
func (c *Cache) PodGroupStates() PodGroupStateLister { return podGroupStateLister(c.podGroupStates()) }

// PodGroups lists the cache's PodGroup objects.
func (c *Cache) PodGroups() PodGroupLister { return podGroupLister(c.podGroupStates()) }

var _ PodGroupManager = (*Cache)(nil)

// updatePodGroupSnapshot brings the snapshot's group states up to the
// cache's, cloning the groups whose generation changed (kube's
// updatePodGroupStateSnapshot).
func (c *Cache) updatePodGroupSnapshot(s *Snapshot) {
	s.genericWorkload = c.features.GenericWorkload
	for key := range s.podGroupStates {
		if _, ok := c.podGroups[key]; !ok {
			delete(s.podGroupStates, key)
		}
	}
	for key, st := range c.podGroups {
		if old, ok := s.podGroupStates[key]; ok && old.generation == st.generation {
			continue
		}
		if s.podGroupStates == nil {
			s.podGroupStates = map[podGroupKey]*podGroupState{}
		}
		s.podGroupStates[key] = st.clone()
	}
}

// PodGroupStates lists the snapshot's group states: the cache's as of
// the last UpdateSnapshot.
func (s *Snapshot) PodGroupStates() PodGroupStateLister {
	return podGroupStateLister(podGroupStates{enabled: s.genericWorkload, m: s.podGroupStates})
}

// PodGroups lists the snapshot's PodGroup objects; with GenericWorkload
// off every Get fails, as kube's.
func (s *Snapshot) PodGroups() PodGroupLister {
	return podGroupLister(podGroupStates{enabled: s.genericWorkload, m: s.podGroupStates})
}
