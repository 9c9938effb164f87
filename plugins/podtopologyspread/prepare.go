package podtopologyspread

import (
	"context"
	"slices"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.PreparePlugin = (*PodTopologySpread)(nil)

// Prepare builds, in the snapshot's pod index, what a first cycle would
// ask of it: the label keys of the existing pods' spread constraints'
// selectors (a pod of the same workloads has the same constraints) and,
// when there are default constraints, those of the default selectors'
// sources (Services, ReplicationControllers, ReplicaSets, StatefulSets),
// with the constraints' topology keys' label columns.
func (pl *PodTopologySpread) Prepare(_ context.Context, snap *schedcore.Snapshot) {
	var keys, topo []string
	for _, ni := range snap.List() {
		for _, pi := range ni.Pods {
			for i := range pi.Pod.Spec.TopologySpreadConstraints {
				c := &pi.Pod.Spec.TopologySpreadConstraints[i]
				keys = helper.AppendNew(helper.LabelSelectorKeys(keys, c.LabelSelector), c.MatchLabelKeys...)
				topo = helper.AppendNew(topo, c.TopologyKey)
			}
		}
	}
	if len(pl.defaultConstraints) > 0 {
		for _, c := range pl.defaultConstraints {
			topo = helper.AppendNew(topo, c.TopologyKey)
		}
		keys = helper.DefaultSelectorKeys(keys, pl.handle.SelectorSources())
	}
	// Map iteration gave the keys in no order: the index is the same
	// whatever the order, its postings' order is not.
	slices.Sort(keys)
	snap.PrepareLabelIndex(keys, topo)
}
