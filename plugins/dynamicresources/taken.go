package dynamicresources

import (
	"slices"
	"strconv"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
)

// The rule of monotone.go holds between nodes too. Two nodes whose kept
// pools (the inert ones the claims cannot use left out) have, position by
// position, the same content (static signatures: the same devices,
// attributes, capacities and taints, names aside) differ, to the
// allocator, only in what is taken in them. When every pool the claims can
// use is plain (what is taken there is a set of devices) and the claims
// ask for exact counts, a node where at least the devices taken on the
// other are taken is the other node after some more devices were taken:
//   - a failure without an error on the other node is one on this node;
//   - a success on the other node is this node's (renamed as share.go
//     renames) when none of its devices is taken here.
// Pools the claims cannot use but are kept (not inert) count by their
// content only, as in the node signatures. Anything else runs the
// allocator.

// takenAnswer is an answer kept under takenKeyLocked's key: what was taken
// in each kept pool of the node (the items of allocatedStates.poolItems;
// nil for the pools the claims cannot use), the node and its kept pools,
// and the results (nil: a failure without an error).
type takenAnswer struct {
	taken   [][]string
	node    string
	pools   []string
	results []resourceapi.AllocationResult
}

// maxTakenAnswers bounds the answers kept per key (the oldest go first).
const maxTakenAnswers = 16

// keptPools are a node's pools for the claims in the allocator's order,
// the inert ones the claims cannot use left out, and whether the claims
// can use each.
type keptPools struct {
	pools []string
	rel   []bool
}

// takenKeyLocked keys the answers the rule can serve: the claims and the
// kept pools' contents. false: the rule does not apply (claims not all of
// exact counts, a pool the claims can use that is not plain, a pool seen
// differently from node to node, or one without a signature).
func (m *allocationMemo) takenKeyLocked(claimsID int64, claims []*resourceapi.ResourceClaim, k keptPools) (failKey, bool) {
	if !m.exactCountsLocked(claimsID, claims) {
		return failKey{}, false
	}
	var b strings.Builder
	b.WriteString("taken:")
	for i, p := range k.pools {
		id, ok := m.staticID[p]
		if !ok || m.mixed[p] || (k.rel[i] && !m.plainPoolLocked(p)) {
			return failKey{}, false
		}
		b.WriteString(strconv.FormatInt(id, 10))
		b.WriteByte(',')
	}
	return failKey{claims: claimsID, sig: m.internLocked(b.String())}, true
}

// takenAnswerLocked returns an answer kept under key that holds for the
// node (to, with kept pools k) by the rule above.
func (m *allocationMemo) takenAnswerLocked(in *memoInputs, key failKey, to string, k keptPools) ([]resourceapi.AllocationResult, bool) {
	for _, a := range m.taken[key] {
		if !covers(in, a, k) {
			continue
		}
		if a.results == nil {
			return nil, true
		}
		if usesTaken(in, a, k) {
			continue
		}
		if results, ok := m.translateLocked(success{node: a.node, pools: a.pools, results: a.results}, to, k.pools); ok {
			return results, true
		}
	}
	return nil, false
}

// covers reports whether everything taken in a's pools the claims can
// use is taken in the node's pools at the same positions.
func covers(in *memoInputs, a takenAnswer, k keptPools) bool {
	if len(a.taken) != len(k.pools) {
		return false
	}
	for i, items := range a.taken {
		have := in.poolItems[k.pools[i]]
		for _, it := range items {
			if have[it] == 0 {
				return false
			}
		}
	}
	return true
}

// usesTaken reports whether one of a's devices is taken on the node (or
// comes from a pool a does not name: not known, so taken).
func usesTaken(in *memoInputs, a takenAnswer, k keptPools) bool {
	for i := range a.results {
		for _, r := range a.results[i].Devices.Results {
			pos := slices.Index(a.pools, r.Driver+"/"+r.Pool)
			if pos < 0 || in.poolItems[k.pools[pos]]["d:"+r.Device] > 0 {
				return true
			}
		}
	}
	return false
}

// keepTakenLocked keeps the allocator's answer for the node (results nil:
// a failure without an error) under key, with what is taken in its pools.
func (m *allocationMemo) keepTakenLocked(in *memoInputs, key failKey, node string, k keptPools, results []resourceapi.AllocationResult) {
	a := takenAnswer{taken: make([][]string, len(k.pools)), node: node, pools: k.pools, results: copyResults(results)}
	for i, p := range k.pools {
		if !k.rel[i] {
			continue
		}
		for it := range in.poolItems[p] {
			a.taken[i] = append(a.taken[i], it)
		}
	}
	list := m.taken[key]
	if len(list) >= maxTakenAnswers {
		list = slices.Clone(list[1:])
	}
	m.taken[key] = append(list, a)
}
