package podtopologyspread

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
	addTopo := func(k string) {
		if !slices.Contains(topo, k) {
			topo = append(topo, k)
		}
	}
	addKey := func(k string) {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	addSelector := func(s *metav1.LabelSelector) {
		if s == nil {
			return
		}
		for k := range s.MatchLabels {
			addKey(k)
		}
		for _, r := range s.MatchExpressions {
			if r.Operator == metav1.LabelSelectorOpIn && len(r.Values) == 1 {
				addKey(r.Key)
			}
		}
	}
	for _, ni := range snap.List() {
		for _, pi := range ni.Pods {
			for i := range pi.Pod.Spec.TopologySpreadConstraints {
				c := &pi.Pod.Spec.TopologySpreadConstraints[i]
				addSelector(c.LabelSelector)
				for _, k := range c.MatchLabelKeys {
					addKey(k)
				}
				addTopo(c.TopologyKey)
			}
		}
	}
	if len(pl.defaultConstraints) > 0 {
		for _, c := range pl.defaultConstraints {
			addTopo(c.TopologyKey)
		}
		if src := pl.handle.SelectorSources(); src != nil {
			addMap := func(m map[string]string) {
				for k := range m {
					addKey(k)
				}
			}
			for _, s := range src.Services {
				addMap(s.Spec.Selector)
			}
			for _, rc := range src.ReplicationControllers {
				addMap(rc.Spec.Selector)
			}
			for _, rs := range src.ReplicaSets {
				addSelector(rs.Spec.Selector)
			}
			for _, ss := range src.StatefulSets {
				addSelector(ss.Spec.Selector)
			}
		}
	}
	// Map iteration gave the keys in no order: the index is the same
	// whatever the order, its postings' order is not.
	slices.Sort(keys)
	snap.PrepareLabelIndex(keys, topo)
}
