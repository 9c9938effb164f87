package runtime

import (
	"cmp"
	"slices"
	"sync"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// NameOrder keeps the name order of a snapshot's node list from one
// explanation to the next (the list's order changes rarely), for
// Explanation.ByName and the ranking's ties. The zero value is ready; a
// nil *NameOrder keeps nothing. It is safe for concurrent use.
type NameOrder struct {
	mu    sync.Mutex
	order []int32
}

// Of returns the positions of nodes in name order. The kept order is used
// when it still sorts nodes strictly by name (one pass over the names,
// which also proves it is this list's order since the names are unique);
// otherwise the positions are sorted again and kept. The result is shared:
// callers only read it.
func (o *NameOrder) Of(nodes []NodeExplanation) []int32 {
	if o != nil {
		o.mu.Lock()
		defer o.mu.Unlock()
		if len(o.order) == len(nodes) && sortedBy(o.order, nodes) {
			return o.order
		}
	}
	order := make([]int32, len(nodes))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(a, b int32) int { return cmp.Compare(nodes[a].Name, nodes[b].Name) })
	if o != nil {
		o.order = order
	}
	return order
}

// of is Of for the nodes of snapshot's list, nodes[i] being the node at
// list position i, and also returns place: each node's place in the name
// order, by position. When the snapshot has its nodes' ranks in name order
// (Snapshot.nameRanks) for a list of this length, those are the places and
// the order is their inverse, without comparing names: the kept order is
// used when it inverts them. Otherwise it is Of, and the places are its
// inverse. Both results are shared: callers only read them.
func (o *NameOrder) of(nodes []NodeExplanation, snapshot *schedcore.Snapshot) (order, place []int32) {
	ranks := snapshot.NameRanks()
	if len(ranks) != len(nodes) {
		order = o.Of(nodes)
		place = make([]int32, len(nodes))
		for k, i := range order {
			place[i] = int32(k)
		}
		return order, place
	}
	if o != nil {
		o.mu.Lock()
		defer o.mu.Unlock()
		if len(o.order) == len(nodes) && inverts(o.order, ranks) {
			return o.order, ranks
		}
	}
	order = make([]int32, len(nodes))
	for i, r := range ranks {
		order[r] = int32(i)
	}
	if o != nil {
		o.order = order
	}
	return order, ranks
}

// inverts reports whether order[ranks[i]] is i for every position i (the
// ranks being a permutation of as many positions as order holds).
func inverts(order, ranks []int32) bool {
	for i, r := range ranks {
		if order[r] != int32(i) {
			return false
		}
	}
	return true
}

// sortedBy reports whether order lists nodes with strictly increasing names.
func sortedBy(order []int32, nodes []NodeExplanation) bool {
	for k := 1; k < len(order); k++ {
		if order[k] < 0 || order[k-1] < 0 || int(order[k]) >= len(nodes) || int(order[k-1]) >= len(nodes) || nodes[order[k-1]].Name >= nodes[order[k]].Name {
			return false
		}
	}
	return len(order) != 1 || order[0] == 0
}
