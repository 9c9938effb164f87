package interpodaffinity

import (
	"context"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.PreparePlugin = (*InterPodAffinity)(nil)

// Prepare builds what a first cycle would: the existing pods' term groups
// (scoring and required anti-affinity, termIndex), and, in the snapshot's
// pod index, the label keys and topology keys of the existing pods' terms:
// a pod of the same workloads, with the same terms, asks for those.
func (pl *InterPodAffinity) Prepare(_ context.Context, snap *schedcore.Snapshot) {
	for _, x := range []*termIndex{pl.terms, pl.anti} {
		x.mu.Lock()
		x.sync(snap)
		x.mu.Unlock()
	}
	var keys, topo []string
	add := func(t *schedcore.AffinityTerm) {
		keys = schedcore.IndexedKeys(keys, t.Selector)
		topo = helper.AppendNew(topo, t.TopologyKey)
	}
	for _, ni := range snap.HavePodsWithAffinityList() {
		for _, p := range ni.PodsWithAffinity {
			for i := range p.RequiredAffinityTerms {
				add(&p.RequiredAffinityTerms[i])
			}
			for i := range p.RequiredAntiAffinityTerms {
				add(&p.RequiredAntiAffinityTerms[i])
			}
			for i := range p.PreferredAffinityTerms {
				add(&p.PreferredAffinityTerms[i].AffinityTerm)
			}
			for i := range p.PreferredAntiAffinityTerms {
				add(&p.PreferredAntiAffinityTerms[i].AffinityTerm)
			}
		}
	}
	snap.PrepareLabelIndex(keys, topo)
}
