package dynamicresources

import (
	"context"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.PreparePlugin = (*DynamicResources)(nil)

// Prepare builds what the first cycle of a pod with claims would: the
// allocated state, the allocator, the memo's view of the slices (their
// index, content signatures and which pools are inert) and of each node
// of the snapshot (the pools it sees), and the explanations' index of the
// slices. Each is
// what that cycle would build from the same objects, or hand out again
// (reuse.go), so no answer changes. A cluster without slices has nothing
// to build.
func (pl *DynamicResources) Prepare(ctx context.Context, snap *schedcore.Snapshot) {
	if !pl.enabled || len(pl.dra.Slices()) == 0 {
		return
	}
	allocated, poolVer, poolItems := pl.allocated.get(pl.features.DRAConsumableCapacity)
	slices := pl.dra.Slices()
	if _, err := pl.allocator(ctx, allocated, slices, pl.allocated.counteredChanges()); err != nil {
		return // PreFilter reports it
	}
	pl.explain.index(slices)
	in := pl.memo.inputs(pl.dra, poolVer, poolItems)
	if in == nil {
		return
	}
	m := pl.memo
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.objRev != in.objRev {
		return
	}
	for p := range m.poolSlices {
		m.inertPoolLocked(p)
	}
	for _, ni := range snap.List() {
		if node := ni.Node(); node != nil {
			if _, err := m.nodePoolsLocked(in, node); err != nil {
				return // Filter runs the allocator on such a node
			}
		}
	}
}
