package coscheduling

import (
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// What the cluster outside a group holds, and what a group is missing.

// stateOutside sums up the nodes and the pods on them that are not the
// group's.
func (pl *Coscheduling) stateOutside(r ref, nodes []*schedcore.NodeInfo) clusterState {
	st := clusterState{nodes: len(nodes)}
	f := pl.h.Features()
	for _, ni := range nodes {
		st.cpu += ni.Requested.MilliCPU
		st.memory += ni.Requested.Memory
		st.pods += len(ni.Pods)
		for _, pi := range ni.Pods {
			if pl.inGroup(pi.Pod, r) {
				res := pi.Resource(f).Resource
				st.cpu -= res.MilliCPU
				st.memory -= res.Memory
				st.pods--
			}
		}
	}
	return st
}

// resourceGap checks, as scheduler-plugins' CheckClusterResource, whether
// the free resources of the nodes (the group's own pods counted as free)
// add up to minResources plus minMember pods; it returns what is missing,
// "" when nothing is.
func (pl *Coscheduling) resourceGap(r ref, g *group, nodes []*schedcore.NodeInfo) string {
	need := schedcore.NewResource(g.minResources)
	need.AllowedPodNumber = int(g.minMember)
	f := pl.h.Features()
	for _, ni := range nodes {
		if ni.Node() == nil {
			continue
		}
		a, used := &ni.Allocatable, &ni.Requested
		cpu, mem, eph := a.MilliCPU-used.MilliCPU, a.Memory-used.Memory, a.EphemeralStorage-used.EphemeralStorage
		pods := a.AllowedPodNumber - len(ni.Pods)
		scalar := map[v1.ResourceName]int64{}
		for k := range need.ScalarResources {
			scalar[k] = a.ScalarResources[k] - used.ScalarResources[k]
		}
		for _, pi := range ni.Pods {
			if !pl.inGroup(pi.Pod, r) {
				continue
			}
			res := pi.Resource(f).Resource
			pods++
			cpu, mem, eph = cpu+res.MilliCPU, mem+res.Memory, eph+res.EphemeralStorage
			for k := range scalar {
				scalar[k] += res.ScalarResources[k]
			}
		}
		need.MilliCPU -= max(cpu, 0)
		need.Memory -= max(mem, 0)
		need.EphemeralStorage -= max(eph, 0)
		need.AllowedPodNumber -= max(pods, 0)
		for k := range need.ScalarResources {
			need.ScalarResources[k] -= max(scalar[k], 0)
		}
		if satisfied(need) {
			return ""
		}
	}
	return formatGap(need)
}

func satisfied(r *schedcore.Resource) bool {
	if r.MilliCPU > 0 || r.Memory > 0 || r.EphemeralStorage > 0 || r.AllowedPodNumber > 0 {
		return false
	}
	for _, v := range r.ScalarResources {
		if v > 0 {
			return false
		}
	}
	return true
}

// formatGap lists the missing resources as "cpu: 2, pods: 1", sorted by
// name. (scheduler-plugins prints the raw ResourceList map, whose
// quantities render as Go structs.)
func formatGap(r *schedcore.Resource) string {
	var parts []string
	add := func(name string, q *resource.Quantity) { parts = append(parts, name+": "+q.String()) }
	if r.MilliCPU > 0 {
		add(string(v1.ResourceCPU), resource.NewMilliQuantity(r.MilliCPU, resource.DecimalSI))
	}
	if r.Memory > 0 {
		add(string(v1.ResourceMemory), resource.NewQuantity(r.Memory, resource.BinarySI))
	}
	if r.EphemeralStorage > 0 {
		add(string(v1.ResourceEphemeralStorage), resource.NewQuantity(r.EphemeralStorage, resource.BinarySI))
	}
	if r.AllowedPodNumber > 0 {
		add(string(v1.ResourcePods), resource.NewQuantity(int64(r.AllowedPodNumber), resource.DecimalSI))
	}
	for k, v := range r.ScalarResources {
		if v > 0 {
			add(string(k), resource.NewQuantity(v, resource.DecimalSI))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
