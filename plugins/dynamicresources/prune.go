package dynamicresources

import (
	"context"
	"maps"
	"slices"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
)

// An inert pool the claims cannot use leaves the allocator's answer as if
// the node did not see it (relevance.go, monotone.go: inertPoolLocked),
// so an allocator built without such pools gives the answers one built
// with them gives. It does less for them: it neither converts their
// slices nor evaluates the claims' selectors on their devices, on every
// node that sees them, in every run (a zone's FPGAs for a GPU claim, a
// node's NICs for an FPGA claim). The cycle's slices for the allocator
// are therefore the manager's without those pools, for the cycle's
// claims, when the pod has no claim of extended resources (whose requests
// change from node to node).

// prunedLists are the slice lists for the allocator of one objects
// revision: by claims (interned specs), and by the pools left out.
type prunedLists struct {
	byClaims map[int64][]*resourceapi.ResourceSlice
	byDrop   map[string][]*resourceapi.ResourceSlice
}

// prunedSlices returns all without the slices of the pools that are inert
// and that no request of the claims (whose specs are spec) can select from,
// kept per claims for the cycle's objects revision. It returns all itself
// when there is nothing to leave out or it cannot tell (the memo is off
// or was reset since the cycle's inputs, a selector's evaluation was cut
// short).
func (m *allocationMemo) prunedSlices(ctx context.Context, in *memoInputs, all []*resourceapi.ResourceSlice, spec string, claims []*resourceapi.ResourceClaim) []*resourceapi.ResourceSlice {
	if in == nil {
		return all
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.objRev != in.objRev || m.sel == nil || m.slices != in.slices {
		return all
	}
	claimsID := m.internLocked(spec)
	if out, ok := m.pruned.byClaims[claimsID]; ok {
		return out
	}
	drop := map[string]bool{}
	for p := range m.poolSlices {
		if !m.relevantLocked(ctx, claimsID, claims, p) && m.inertPoolLocked(p) {
			drop[p] = true
		}
	}
	if ctx.Err() != nil {
		return all
	}
	// Claims that leave out the same pools share the list, and so the
	// allocator built for it (reuse.go).
	names := slices.Sorted(maps.Keys(drop))
	key := strings.Join(names, "\x00")
	out, ok := m.pruned.byDrop[key]
	if !ok {
		out = all
		if len(drop) > 0 {
			out = make([]*resourceapi.ResourceSlice, 0, len(all))
			for _, s := range all {
				if !drop[s.Spec.Driver+"/"+s.Spec.Pool.Name] {
					out = append(out, s)
				}
			}
		}
		if m.pruned.byDrop == nil {
			m.pruned = prunedLists{byClaims: map[int64][]*resourceapi.ResourceSlice{}, byDrop: map[string][]*resourceapi.ResourceSlice{}}
		}
		m.pruned.byDrop[key] = out
	}
	m.pruned.byClaims[claimsID] = out
	return out
}
