package queue

import (
	"slices"
	"sync"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// nominator records which pods are nominated to which nodes (by preemption
// or by status.nominatedNodeName). It keeps its own map because the pods'
// status may lag behind the scheduler's decisions. Per node, pods are kept
// in nomination order, which is the order NominatedPodsForNode returns, as
// kube's.
type nominator struct {
	lock      sync.RWMutex
	podGetter PodGetter
	// nominatedPods maps a node to the pods nominated to it.
	nominatedPods map[string][]podRef
	// nominatedPodToNode maps a pod UID to its nominated node.
	nominatedPodToNode map[types.UID]string
}

type podRef struct {
	name, namespace string
	uid             types.UID
	// schedulingGroup is the pod's, as kube's podRef keeps it, so that a
	// nominated member is found in its queued group (unlockedGetPod).
	schedulingGroup *v1.PodSchedulingGroup
}

func podToRef(p *v1.Pod) podRef {
	return podRef{name: p.Name, namespace: p.Namespace, uid: p.UID, schedulingGroup: p.Spec.SchedulingGroup}
}

// toPod returns a bare pod for a reference (name, namespace, UID and
// schedulingGroup): what kube nominates for a pod no longer in the queue
// (in flight).
func (r podRef) toPod() *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: r.name, Namespace: r.namespace, UID: r.uid}, Spec: v1.PodSpec{SchedulingGroup: r.schedulingGroup}}
}

func newNominator(g PodGetter) *nominator {
	return &nominator{podGetter: g, nominatedPods: map[string][]podRef{}, nominatedPodToNode: map[types.UID]string{}}
}

func (n *nominator) add(logger logr.Logger, pi *schedcore.PodInfo, ni *schedcore.NominatingInfo) {
	n.lock.Lock()
	defer n.lock.Unlock()
	n.addUnlocked(logger, pi, ni)
}

// addUnlocked nominates the pod to ni's node (ModeOverride) or to its
// status.nominatedNodeName (ModeNoop or nil ni); an empty node clears it.
func (n *nominator) addUnlocked(logger logr.Logger, pi *schedcore.PodInfo, ni *schedcore.NominatingInfo) {
	pod := pi.Pod
	n.deleteUnlocked(pod)
	var node string
	if ni != nil && ni.NominatingMode == schedcore.ModeOverride {
		node = ni.NominatedNodeName
	} else {
		node = pod.Status.NominatedNodeName
	}
	if node == "" {
		return
	}
	if n.podGetter != nil {
		cur, ok := n.podGetter(pod.Namespace, pod.Name)
		if !ok {
			logger.V(4).Info("Pod doesn't exist in podLister, aborted adding it to the nominator", "pod", schedcore.PodName(pod))
			return
		}
		if cur.Spec.NodeName != "" {
			logger.V(4).Info("Pod is already scheduled to a node, aborted adding it to the nominator", "pod", schedcore.PodName(pod), "node", cur.Spec.NodeName)
			return
		}
	}
	n.nominatedPodToNode[pod.UID] = node
	for _, r := range n.nominatedPods[node] {
		if r.uid == pod.UID {
			logger.V(4).Info("Pod already exists in the nominator", "pod", r.uid)
			return
		}
	}
	n.nominatedPods[node] = append(n.nominatedPods[node], podToRef(pod))
}

// update replaces oldPod by newPI. If neither version carries a nominated
// node but the nominator holds one, it is kept: an update without it can
// arrive right after preemption nominated the pod in memory.
func (n *nominator) update(logger logr.Logger, oldPod *v1.Pod, newPI *schedcore.PodInfo) {
	n.lock.Lock()
	defer n.lock.Unlock()
	var ni *schedcore.NominatingInfo
	if oldPod.Status.NominatedNodeName == "" && newPI.Pod.Status.NominatedNodeName == "" {
		if node, ok := n.nominatedPodToNode[oldPod.UID]; ok {
			ni = &schedcore.NominatingInfo{NominatingMode: schedcore.ModeOverride, NominatedNodeName: node}
		}
	}
	n.deleteUnlocked(oldPod)
	n.addUnlocked(logger, newPI, ni)
}

func (n *nominator) delete(p *v1.Pod) {
	n.lock.Lock()
	defer n.lock.Unlock()
	n.deleteUnlocked(p)
}

func (n *nominator) deleteUnlocked(p *v1.Pod) {
	node, ok := n.nominatedPodToNode[p.UID]
	if !ok {
		return
	}
	refs := n.nominatedPods[node]
	for i, r := range refs {
		if r.uid == p.UID {
			refs = slices.Delete(refs, i, i+1)
			if len(refs) == 0 {
				delete(n.nominatedPods, node)
			} else {
				n.nominatedPods[node] = refs
			}
			break
		}
	}
	delete(n.nominatedPodToNode, p.UID)
}

func (n *nominator) forNode(node string) []podRef {
	n.lock.RLock()
	defer n.lock.RUnlock()
	return slices.Clone(n.nominatedPods[node])
}
