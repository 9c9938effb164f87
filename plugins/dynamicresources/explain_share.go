package dynamicresources

// Shortfalls shared between nodes whose devices are alike for the claims.

import (
	"context"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// An explanation ranks every rejected node by its shortfall, and on a GPU
// cluster most nodes are alike: the same devices, the same ones taken.
// FilterShortfall reads only the node's devices (by content: attributes,
// capacities, counters, taints, pool generations and slice counts), which
// of them are taken (devices, shares, consumed capacity), the classes and
// the claims' specs: the names of nodes, pools and devices serve texts
// only, which the shortfall does not have, and counts do not depend on
// the order of the devices. Those are what the memo's node signature
// (memo_sig.go: nodeSigLocked) is made of, per pool in
// (driver, pool) order: a pool the claims may use by its content and what
// is taken in it, any other by its content alone. In such a pool every
// device fails a class or request selector (relevance.go: a selector not
// known to be false counts as usable), which FilterShortfall checks
// before anything that reads what is taken (a device taken, for a number
// of devices, is not free either way). A pool whose slices apply to
// different nodes is signed with the node's name. So nodes with the same
// signature for the same claims have the same shortfall, and it is
// computed once per signature.

// shortfallKey keys the shared shortfalls: the failures' key, and the
// memo's epoch it is of (ids are numbered anew after a reset).
type shortfallKey struct {
	failKey
	epoch int64
}

// sharedShortfall is FilterShortfall on a node whose devices cannot serve
// the claims: the shortfall of a node with the same signature when one
// was computed in the memo's epoch, else its own, kept.
func (pl *DynamicResources) sharedShortfall(ctx context.Context, state *stateData, nodeInfo *schedcore.NodeInfo, claims []*resourceapi.ResourceClaim) float64 {
	node := nodeInfo.Node()
	compute := func() float64 {
		if e := pl.explainDevices(ctx, state, node, claims, true); e != nil {
			return e.Shortfall
		}
		return 1
	}
	spec, err := state.specsOf(claims)
	if err != nil {
		return compute()
	}
	k, s, kept, ok := pl.memo.shortfall(ctx, state.allocInputs, nodeInfo.ListIndex(), node, claims, spec)
	switch {
	case !ok:
		return compute()
	case kept:
		return s
	}
	s = compute()
	if ctx.Err() == nil {
		// A cancelled CEL evaluation is no selector's verdict.
		pl.memo.keepShortfall(k, s)
	}
	return s
}

// shortfall returns the node's key for the claims (spec: their specs) and
// the shortfall kept under it (kept: there is one); ok is false when the node
// has no key (no memo, or the objects changed since the cycle's
// PreFilter).
func (m *allocationMemo) shortfall(ctx context.Context, in *memoInputs, pos int, node *v1.Node, claims []*resourceapi.ResourceClaim, spec string) (k shortfallKey, s float64, kept, ok bool) {
	if m.disabled || in == nil {
		return k, 0, false, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.objRev != in.objRev {
		return k, 0, false, false
	}
	nm, err := m.nodePoolsLocked(in, node)
	if err != nil {
		return k, 0, false, false
	}
	claimsID := m.lastID
	if spec != m.lastSpec || claimsID == 0 {
		claimsID = m.internLocked(spec)
	}
	// The pools' relevance, as the node's slot in the claims' table has
	// it when Filter asked for the very node object.
	var rel []bool
	if t := m.tables[claimsID]; t != nil {
		if sl := t.find(pos, node.Name); sl != nil && sl.node == node && sl.nm == nm && len(sl.rel) == len(nm.pools) {
			rel = sl.rel
		}
	}
	if rel == nil {
		rel = make([]bool, len(nm.pools))
		for i, p := range nm.pools {
			rel[i] = m.relevantLocked(ctx, claimsID, claims, p)
		}
		if ctx.Err() != nil {
			return k, 0, false, false
		}
	}
	full := m.nodeSigLocked(in, nm, rel, node)
	k = shortfallKey{failKey: failKey{claims: claimsID, sig: m.internLocked(full)}, epoch: m.epoch}
	s, kept = m.shortfalls[k]
	return k, s, kept, true
}

// keepShortfall keeps s under k while the memo is in k's epoch.
func (m *allocationMemo) keepShortfall(k shortfallKey, s float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if k.epoch == m.epoch {
		m.shortfalls[k] = s
	}
}
