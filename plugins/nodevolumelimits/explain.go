package nodevolumelimits

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// driverVolumes is what Filter counts for one CSI driver of the pod on a
// node: for ExplainFilter, which says how far the node is from fitting.
type driverVolumes struct {
	Driver string
	// Installed is false when the driver's CSIDriver sets
	// preventPodSchedulingIfMissing and the node's CSINode lacks it.
	Installed bool
	// Limit is the CSINode's allocatable count; -1 when it sets none.
	Limit int
	// Attached are the distinct volumes of the driver the node's pods use;
	// New the pod's volumes of the driver not among them.
	Attached, New int
}

// exceeded says whether the pod's new volumes go over the limit.
func (d driverVolumes) exceeded() bool { return d.Limit >= 0 && d.Attached+d.New > d.Limit }

// volumeCounts returns, per driver of the pod's volumes (by name), what
// Filter counts on the node; nil when the pod has none or a claim is
// missing. It allocates; it is for ExplainFilter, not a scheduling cycle.
func (pl *CSILimits) volumeCounts(pod *v1.Pod, nodeInfo *schedcore.NodeInfo) []driverVolumes {
	storage := pl.h.Snapshot().StorageLister()
	csiNode := storage.CSINode(nodeInfo.Node().Name)
	newVolumes := map[string]string{}
	if err := pl.filterAttachableVolumes(pl.h.Logger(), storage, pod, csiNode, true, newVolumes); err != nil || len(newVolumes) == 0 {
		return nil
	}
	attached := map[string]string{}
	for _, ep := range nodeInfo.Pods {
		if err := pl.filterAttachableVolumes(pl.h.Logger(), storage, ep.Pod, csiNode, false, attached); err != nil {
			return nil
		}
	}
	limits := getVolumeLimits(csiNode)
	byDriver := map[string]*driverVolumes{}
	get := func(driver string) *driverVolumes {
		d, ok := byDriver[driver]
		if !ok {
			d = &driverVolumes{Driver: driver, Installed: checkCSIDriverOnNode(storage, driver, csiNode), Limit: -1}
			if l, ok := limits[driver]; ok {
				d.Limit = int(l)
			}
			byDriver[driver] = d
		}
		return d
	}
	for unique, driver := range newVolumes {
		if _, ok := attached[unique]; !ok {
			get(driver).New++
		} else {
			get(driver)
		}
	}
	for _, driver := range attached {
		if d, ok := byDriver[driver]; ok {
			d.Attached++
		}
	}
	out := make([]driverVolumes, 0, len(byDriver))
	for _, d := range byDriver {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Driver < out[j].Driver })
	return out
}

// ExplainFilter says, per CSI driver of the pod's volumes, that it is not
// on the node's CSINode, or how many volumes the node attaches at most,
// how many its pods use and how many the pod adds. The shortfall is the
// share of the pod's new volumes over the limit.
func (pl *CSILimits) ExplainFilter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	out := &schedcore.FilterExplanation{}
	for _, d := range pl.volumeCounts(pod, nodeInfo) {
		switch {
		case !d.Installed:
			out.Gaps = append(out.Gaps, schedcore.Gap{Text: fmt.Sprintf("CSI driver %s is not on the node's CSINode (its CSIDriver sets preventPodSchedulingIfMissing)", d.Driver)})
			out.Shortfall = 1
		case d.exceeded():
			out.Gaps = append(out.Gaps, schedcore.Gap{Text: fmt.Sprintf("%s: the node attaches at most %d volume(s) (CSINode allocatable), its pods use %d, this pod adds %d", d.Driver, d.Limit, d.Attached, d.New)})
			out.Shortfall = max(out.Shortfall, schedcore.ShortfallOf(int64(d.Attached+d.New-d.Limit), int64(d.New)))
		}
	}
	if len(out.Gaps) == 0 {
		return nil
	}
	return out
}
