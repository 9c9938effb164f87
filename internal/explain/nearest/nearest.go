// Package nearest ranks the nodes an explanation rejected by how close
// each is to fitting the pod (explain's "nearest" nodes), and says what a
// node has free.
package nearest

import (
	"slices"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// shortfall sums the plugins' shortfalls on a rejected node (a plugin that
// does not explain itself counts 1): how far the node is from fitting.
func shortfall(ne *schedruntime.NodeExplanation) float64 {
	var sum float64
	for _, vs := range [2][]schedruntime.FilterVerdict{ne.Failures, ne.LeftOutBy} {
		for _, v := range vs {
			sum += v.Shortfall
		}
	}
	return sum
}

// Nodes picks the rejected nodes closest to fitting: fewest
// failures, then fewest that preemption cannot resolve, then the smallest
// shortfall the plugins report, then most free cpu, then most free memory,
// then name. nodes[i] is ex.Nodes[order[i]].
func Nodes(nodes []report.ExplainNode, order []int32, ex *schedruntime.Explanation, snap *schedcore.Snapshot, n int) []string {
	type cand struct {
		name                 string
		failures, unresolved int
		shortfall            float64
		cpu, mem             int64
	}
	less := func(a, b *cand) bool {
		if a.failures != b.failures {
			return a.failures < b.failures
		}
		if a.unresolved != b.unresolved {
			return a.unresolved < b.unresolved
		}
		if a.shortfall != b.shortfall {
			return a.shortfall < b.shortfall
		}
		if a.cpu != b.cpu {
			return a.cpu > b.cpu
		}
		if a.mem != b.mem {
			return a.mem > b.mem
		}
		return a.name < b.name
	}
	// behind reports whether a is after b whatever their free resources
	// and names.
	behind := func(a, b *cand) bool {
		if a.failures != b.failures {
			return a.failures > b.failures
		}
		if a.unresolved != b.unresolved {
			return a.unresolved > b.unresolved
		}
		return a.shortfall > b.shortfall
	}
	unresolvable := schedcore.UnschedulableAndUnresolvable.String()
	// best holds the n nearest so far, nearest first (n is a handful: an
	// insertion into it beats sorting every rejected node).
	best := make([]cand, 0, n+1)
	for i, nd := range nodes {
		if nd.Feasible {
			continue
		}
		c := cand{name: nd.Node, failures: len(nd.Failures)}
		if len(best) == n && c.failures > best[n-1].failures {
			continue
		}
		for _, f := range nd.Failures {
			if f.Code == unresolvable {
				c.unresolved++
			}
		}
		c.shortfall = shortfall(&ex.Nodes[order[i]])
		// The free resources are read from the node only when the rest
		// does not already rank it after the n nearest.
		if len(best) == n && behind(&c, &best[n-1]) {
			continue
		}
		ni := nodeInfo(snap, order[i], nd.Node)
		if ni == nil {
			continue
		}
		c.cpu, c.mem = ni.Allocatable.MilliCPU-ni.Requested.MilliCPU, ni.Allocatable.Memory-ni.Requested.Memory
		if len(best) == n && !less(&c, &best[n-1]) {
			continue
		}
		at := sort.Search(len(best), func(k int) bool { return less(&c, &best[k]) })
		best = slices.Insert(best, at, c)
		if len(best) > n {
			best = best[:n]
		}
	}
	out := []string{}
	for _, c := range best {
		out = append(out, c.name)
	}
	return out
}

// nodeInfo returns the snapshot's node at position i of its list (where
// schedruntime.Explain put its explanation) when that node is named name,
// and otherwise looks it up by name; nil when the snapshot has no such node.
func nodeInfo(snap *schedcore.Snapshot, i int32, name string) *schedcore.NodeInfo {
	if list := snap.List(); int(i) < len(list) && list[i].Name() == name {
		return list[i]
	}
	ni, err := snap.Get(name)
	if err != nil {
		return nil
	}
	return ni
}

// Free is what the node has left of cpu, memory, pods and of every other
// resource the pod requests.
func Free(ni *schedcore.NodeInfo, pod *v1.Pod, f schedcore.Features) map[string]int64 {
	a, r := &ni.Allocatable, &ni.Requested
	out := map[string]int64{
		"cpu":    a.MilliCPU - r.MilliCPU,
		"memory": a.Memory - r.Memory,
		"pods":   int64(a.AllowedPodNumber - len(ni.Pods)),
	}
	req := schedcore.ComputePodResource(pod, f)
	if req.Resource.EphemeralStorage > 0 {
		out["ephemeral-storage"] = a.EphemeralStorage - r.EphemeralStorage
	}
	for name := range req.Resource.ScalarResources {
		out[string(name)] = a.ScalarResources[name] - r.ScalarResources[name]
	}
	return out
}
