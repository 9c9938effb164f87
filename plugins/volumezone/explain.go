package volumezone

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.ShortfallExplainer = (*VolumeZone)(nil)

// ExplainFilter names, for each topology label of the pod's bound PVs that
// the node does not satisfy, the PV's zones (or regions) and what the node
// has, from the PV topologies PreFilter collected. A PV cannot move, so
// the shortfall is 1.
func (pl *VolumeZone) ExplainFilter(_ context.Context, cs *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	var tops []pvTopology
	if state, ok := schedcore.Lookup[*stateData](cs, preFilterStateKey); ok {
		tops = state.podPVTopologies
	} else if tops, _ = pl.getPVbyPod(pl.h.Logger(), pod); tops == nil {
		return nil
	}
	node := nodeInfo.Node()
	if !hasTopologyLabel(node) {
		return nil
	}
	var out []string
	for i := range tops {
		if v, has, ok := tops[i].matches(node); !ok {
			out = append(out, fmt.Sprintf("PV %s is in %s, %s", tops[i].pvName, zonesOf(tops[i]), nodeHas(node, tops[i].key, v, has)))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return schedcore.NewFilterExplanation(1, out...)
}

// FilterShortfall is ExplainFilter's shortfall, always 1: a volume is in the node's zone or it is not.
func (pl *VolumeZone) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}

// zonesOf renders a PV topology: "key=zone" or "key in (a, b)".
func zonesOf(t pvTopology) string {
	values := make([]string, 0, len(t.values))
	for z := range t.values {
		values = append(values, z)
	}
	sort.Strings(values)
	if len(values) == 1 {
		return t.key + "=" + values[0]
	}
	return fmt.Sprintf("%s in (%s)", t.key, strings.Join(values, ", "))
}

// nodeHas says what the node has for key: its value (the GA label's when
// key is a beta one the node lacks) or that it has no such label.
func nodeHas(node *v1.Node, key, value string, has bool) string {
	if !has {
		return fmt.Sprintf("node has no %s label", key)
	}
	if _, direct := node.Labels[key]; !direct {
		return fmt.Sprintf("node has %s=%s", translateToGALabel(key), value)
	}
	return fmt.Sprintf("node has %s=%s", key, value)
}
