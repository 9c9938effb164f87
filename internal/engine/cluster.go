package engine

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// FillCache adds a cluster's nodes, namespaces, storage objects, selector
// sources and bound pods to the cache (with GenericWorkload on, its
// v1beta1 PodGroups and the pending members of pod groups too, as kube's
// informer handlers do: bound members count as assigned, pending members
// of the given profiles as unscheduled), and returns the pending pods of the
// given profiles in queue order (priority, creation time, namespace/name). Pods that
// Succeeded or Failed hold no resources and are left out. Pods without a
// UID get a stable one derived from namespace/name.
func FillCache(c *schedcore.Cache, cl *snapshot.Cluster, profiles map[string]*schedruntime.Framework) []*v1.Pod {
	for _, n := range cl.Nodes {
		c.AddNode(n)
	}
	for _, ns := range cl.Namespaces {
		c.AddNamespace(ns)
	}
	c.SetStorage(schedcore.NewStorageState(cl.PVCs, cl.PVs, cl.StorageClasses, cl.CSINodes, cl.CSIDrivers, cl.CSIStorageCapacities))
	c.SetSelectorSources(&schedcore.SelectorSources{Services: cl.Services, ReplicationControllers: cl.ReplicationControllers, ReplicaSets: cl.ReplicaSets, StatefulSets: cl.StatefulSets})
	for _, pg := range cl.Workloads.PodGroups {
		c.AddPodGroup(pg)
	}
	var pending []*v1.Pod
	for _, p := range cl.Pods {
		if p.UID == "" {
			p.UID = SnapshotUID(p.Namespace, p.Name)
		}
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		if p.Spec.NodeName != "" {
			_ = c.AddPod(p)
			continue
		}
		if _, ok := profiles[p.Spec.SchedulerName]; ok && p.DeletionTimestamp == nil {
			c.AddPodGroupMember(p)
			pending = append(pending, p)
		}
	}
	SortQueueOrder(pending)
	return pending
}

// SnapshotUID is the stable UID a pod of a dump without one gets.
func SnapshotUID(namespace, name string) types.UID {
	return types.UID("snapshot-" + namespace + "-" + name)
}

// SortQueueOrder sorts pods as the conformance fixtures' queue does:
// priority descending, then creationTimestamp, then namespace/name.
func SortQueueOrder(pods []*v1.Pod) {
	sort.SliceStable(pods, func(i, j int) bool {
		pi, pj := schedcore.PodPriority(pods[i]), schedcore.PodPriority(pods[j])
		if pi != pj {
			return pi > pj
		}
		ti, tj := pods[i].CreationTimestamp.Time, pods[j].CreationTimestamp.Time
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return schedcore.PodName(pods[i]) < schedcore.PodName(pods[j])
	})
}

// ListedNominator holds a listed cluster's pending pods that preemption
// nominated to a node (status.nominatedNodeName), as kube-scheduler's queue
// does, for a driver that queues none of them (explain: Driver.Nominator).
// The filters of other pods count them on that node when their priority is
// equal or higher (the pod in the cycle itself is left out by its UID).
type ListedNominator struct {
	byNode map[string][]*schedcore.PodInfo
	n      int
}

// Fill adds the pending pods of pods, in their order, that are nominated
// to a node and of one of the profiles.
func (n *ListedNominator) Fill(pods []*v1.Pod, profiles *Profiles) {
	for _, p := range pods {
		if p.Spec.NodeName != "" || p.Status.NominatedNodeName == "" || p.DeletionTimestamp != nil ||
			p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		name := p.Spec.SchedulerName
		if name == "" {
			name = v1.DefaultSchedulerName
		}
		if profiles.ByName[name] == nil {
			continue // not in our queue
		}
		if n.byNode == nil {
			n.byNode = map[string][]*schedcore.PodInfo{}
		}
		n.byNode[p.Status.NominatedNodeName] = append(n.byNode[p.Status.NominatedNodeName], schedcore.NewPodInfo(p))
		n.n++
	}
}

// NominatedPodsForNode returns the pods nominated to the node.
func (n *ListedNominator) NominatedPodsForNode(node string) []*schedcore.PodInfo {
	return n.byNode[node]
}

// NumNominatedPods says how many pods are nominated at all.
func (n *ListedNominator) NumNominatedPods() int { return n.n }
