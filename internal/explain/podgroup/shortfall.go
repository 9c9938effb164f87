package podgroup

import (
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// DomainShortfall compares what a group's pods request, summed, with what
// the nodes have free, summed (allocatable less the requests of the pods
// on them, at least zero per node), resource by resource, and returns the
// resources the nodes are short of. It is a lower bound: free capacity
// split over nodes may not hold a pod, and a filter other than
// NodeResourcesFit may still reject it; a domain short of nothing may
// still not take the group (its members' messages say why). The pods
// count as pods against each node's pod limit.
func DomainShortfall(nodes []*schedcore.NodeInfo, pods []*v1.Pod, f schedcore.Features) []report.ResourceShortfall {
	if len(pods) == 0 {
		return nil
	}
	need := map[string]int64{"pods": int64(len(pods))}
	for _, p := range pods {
		r := schedcore.NewPodInfo(p).Resource(f).Resource
		need["cpu"] += r.MilliCPU
		need["memory"] += r.Memory
		need["ephemeral-storage"] += r.EphemeralStorage
		for k, v := range r.ScalarResources {
			need[string(k)] += v
		}
	}
	free := map[string]int64{}
	for _, ni := range nodes {
		a, r := &ni.Allocatable, &ni.Requested
		add := func(k string, v int64) {
			if v > 0 {
				free[k] += v
			}
		}
		add("cpu", a.MilliCPU-r.MilliCPU)
		add("memory", a.Memory-r.Memory)
		add("ephemeral-storage", a.EphemeralStorage-r.EphemeralStorage)
		add("pods", int64(a.AllowedPodNumber-len(ni.Pods)))
		for k := range need {
			if v, ok := a.ScalarResources[v1.ResourceName(k)]; ok {
				add(k, v-r.ScalarResources[v1.ResourceName(k)])
			}
		}
	}
	var out []report.ResourceShortfall
	for k, n := range need {
		if n > 0 && n > free[k] {
			out = append(out, report.ResourceShortfall{Resource: k, Requested: n, Free: free[k], Short: n - free[k]})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Resource < out[j].Resource })
	return out
}

// placementNodes returns the nodes of the snapshot in a placement: those
// whose label key has the value domain, or every node for an unnamed
// placement (no topology constraint).
func placementNodes(nodes []*schedcore.NodeInfo, key, domain string) []*schedcore.NodeInfo {
	if key == "" {
		return nodes
	}
	var out []*schedcore.NodeInfo
	for _, ni := range nodes {
		if ni.Node() != nil && ni.Node().Labels[key] == domain {
			out = append(out, ni)
		}
	}
	return out
}

// Shortfalls fills each placement's shortfall (by the topology key's
// domain) for the pods a group still needs placed; with no placement (no
// topology constraint) it returns the whole cluster's shortfall.
func Shortfalls(nodes []*schedcore.NodeInfo, key string, placements []report.PodGroupPlacement, pods []*v1.Pod, f schedcore.Features) []report.ResourceShortfall {
	for i := range placements {
		if placements[i].Feasible {
			continue
		}
		placements[i].Shortfall = DomainShortfall(placementNodes(nodes, key, placements[i].Name), pods, f)
	}
	if len(placements) > 0 {
		return nil
	}
	return DomainShortfall(nodes, pods, f)
}

// NoDomainNote says, for a topology key no node carries, why the
// placement generator made no placement (kube's message is only "no
// feasible placements found"); "" when a node has the label.
func NoDomainNote(nodes []*schedcore.NodeInfo, key string) string {
	if key == "" {
		return ""
	}
	for _, ni := range nodes {
		if n := ni.Node(); n != nil {
			if _, ok := n.Labels[key]; ok {
				return ""
			}
		}
	}
	return "no node has the label " + key + " of the topology constraint: the placement generator makes no placement"
}
