package dynamicresources

import (
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
)

// Two nodes whose pools have, position by position, the same
// name-independent signature (the same devices, attributes, capacities,
// counters and taints, the same ones taken; failKey) get the same answer
// from the allocator up to names: it walks the pools in (driver, pool)
// order and picks devices by content, and names appear only in the
// results' pools and node selector. A success on one node is therefore
// handed to the other under its own names when that renaming is exact:
//   - each position holds either the same shared pool for both nodes, all
//     of whose slices apply to every node that sees the pool (all nodes,
//     or one node selector), or for each node a pool all of whose slices
//     are for that node only (so no device picks its node; the pool is
//     renamed). The signatures say so already: they keep the slices'
//     node selectors, all-nodes and per-device flags (a pool with them
//     differs from a node's own) and name the node for a pool whose
//     slices apply to different nodes (mixed), so equal signatures at a
//     position with different pool names are two nodes' own pools;
//   - no two of a node's pools have the same driver (their order is then
//     the drivers' order on both nodes);
//   - the node selector is kube's "metadata.name In [node]" for the first
//     node (renamed), or comes from shared pools (kept).
// Anything else runs the allocator.

// success is an allocator's success on a node.
type success struct {
	node    string
	pools   []string
	results []resourceapi.AllocationResult
}

// localNode is the node all the slices are for, "" when they are not all
// for the same single node (then the pool is shared, or mixed unless
// uniform).
func localNode(ss []*resourceapi.ResourceSlice) string {
	node := ""
	for _, s := range ss {
		n := ptr.Deref(s.Spec.NodeName, "")
		if n == "" || (node != "" && n != node) {
			return ""
		}
		node = n
	}
	return node
}

// uniform reports whether every node that sees one of the slices sees
// them all: all for all nodes, or all with the same node selector.
func uniform(ss []*resourceapi.ResourceSlice) bool {
	for _, s := range ss {
		if ptr.Deref(s.Spec.NodeName, "") != "" || ptr.Deref(s.Spec.PerDeviceNodeSelection, false) {
			return false
		}
		if ptr.Deref(s.Spec.AllNodes, false) != ptr.Deref(ss[0].Spec.AllNodes, false) || !equality.Semantic.DeepEqual(s.Spec.NodeSelector, ss[0].Spec.NodeSelector) {
			return false
		}
	}
	return true
}

// translateLocked renames a success on another node for node to, whose
// pools are pools (the inert ones the claims cannot use left out on both
// sides), false when the renaming is not known to be exact.
func (m *allocationMemo) translateLocked(sc success, to string, pools []string) ([]resourceapi.AllocationResult, bool) {
	if len(sc.pools) != len(pools) || !distinctDrivers(pools) || !distinctDrivers(sc.pools) {
		return nil, false
	}
	rename := map[string]string{}
	for i, p := range pools {
		if q := sc.pools[i]; p != q {
			rename[q] = p
		}
	}
	out := copyResults(sc.results)
	for i := range out {
		r := &out[i]
		for j := range r.Devices.Results {
			d := &r.Devices.Results[j]
			if p, ok := rename[d.Driver+"/"+d.Pool]; ok {
				d.Pool = strings.TrimPrefix(p, d.Driver+"/")
			}
		}
		if ns := r.NodeSelector; ns != nil && len(ns.NodeSelectorTerms) == 1 && len(ns.NodeSelectorTerms[0].MatchFields) == 1 && len(ns.NodeSelectorTerms[0].MatchExpressions) == 0 {
			f := &ns.NodeSelectorTerms[0].MatchFields[0]
			if f.Key == "metadata.name" && len(f.Values) == 1 && f.Values[0] == sc.node {
				f.Values = []string{to}
			}
		}
	}
	return out, true
}

func driverOf(pool string) string {
	d, _, _ := strings.Cut(pool, "/")
	return d
}

func distinctDrivers(pools []string) bool {
	for i := range pools {
		for j := i + 1; j < len(pools); j++ {
			if driverOf(pools[i]) == driverOf(pools[j]) {
				return false
			}
		}
	}
	return true
}
