package capacity

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// describe adds to a spec's result what a person reads beside the count:
// the per-zone and per-label counts and, when a copy stopped the count,
// the nearest nodes' gaps for it.
func (c *counter) describe(ctx context.Context, res *report.CapacitySpec) error {
	labels := map[string]map[string]string{}
	for _, ni := range c.sim.Nodes() {
		labels[ni.Name()] = ni.Node().Labels
	}
	res.Zones = map[string]int{}
	for node, n := range res.Nodes {
		res.Zones[labels[node][ZoneLabel]] += n
	}
	for _, l := range c.r.o.GroupBy {
		if res.Labels == nil {
			res.Labels = map[string]map[string]int{}
		}
		m := map[string]int{}
		for node, n := range res.Nodes {
			m[labels[node][l]] += n
		}
		res.Labels[l] = m
	}
	if res.LimitedBy != report.LimitedByFit || c.r.o.Nearest < 0 || len(c.next) == 0 {
		return nil
	}
	// A gang's members are alike: the first speaks for the copy.
	pod := c.next[0]
	explainer := c.sim.Explainer(c.r.base, explain.Options{Config: c.r.o.Config, Registry: c.r.o.Registry, Features: c.r.o.Features, Nearest: c.r.o.Nearest})
	var ex *report.Explanation
	explainIt := func(p *v1.Pod) (err error) {
		ex, err = explainer.Explain(ctx, p)
		return err
	}
	var err error
	if hasTemplateClaims(pod) {
		// The copy's claims went with it when it fit nowhere: explained
		// without them, DynamicResources would stop at PreFilter (no
		// claim) and name no node. Back in the cluster with claims of its
		// own, it is explained as its cycle saw it.
		err = c.sim.WithPending(pod, explainIt)
	} else {
		err = explainIt(pod)
	}
	if err != nil {
		return err
	}
	for _, name := range ex.Nearest {
		for _, n := range ex.Nodes {
			if n.Node != name {
				continue
			}
			nn := report.NearNode{Node: name, Reasons: []string{}, Gaps: []string{}}
			for _, f := range n.Failures {
				nn.Reasons = append(nn.Reasons, f.Plugin+": "+f.Reason)
			}
			details := false
			for _, g := range n.Gaps {
				nn.Gaps = append(nn.Gaps, g.Gap)
				nn.Details = append(nn.Details, g.Details)
				details = details || len(g.Details) > 0
			}
			if !details {
				nn.Details = nil
			}
			res.Nearest = append(res.Nearest, nn)
		}
	}
	return nil
}

// leftover sums the nodes' allocatable and free resources, and their DRA
// devices (leftoverDevices).
func leftover(nodes []*schedcore.NodeInfo, dra *schedcore.DRAManager) report.Leftover {
	l := report.Leftover{Allocatable: map[string]int64{}, Free: map[string]int64{}, Nodes: map[string]map[string]int64{}}
	devices, free := leftoverDevices(dra)
	for _, ni := range nodes {
		a, r := &ni.Allocatable, &ni.Requested
		left := map[string]int64{
			"cpu":    a.MilliCPU - r.MilliCPU,
			"memory": a.Memory - r.Memory,
			"pods":   int64(a.AllowedPodNumber - len(ni.Pods)),
		}
		alloc := map[string]int64{"cpu": a.MilliCPU, "memory": a.Memory, "pods": int64(a.AllowedPodNumber)}
		if a.EphemeralStorage > 0 {
			left["ephemeral-storage"] = a.EphemeralStorage - r.EphemeralStorage
			alloc["ephemeral-storage"] = a.EphemeralStorage
		}
		for k, v := range a.ScalarResources {
			left[string(k)] = v - r.ScalarResources[k]
			alloc[string(k)] = v
		}
		for k, v := range devices[ni.Name()] {
			left[k] = free[ni.Name()][k]
			alloc[k] = v
		}
		for k, v := range left {
			l.Free[k] += v
		}
		for k, v := range alloc {
			l.Allocatable[k] += v
		}
		l.Nodes[ni.Name()] = left
	}
	return l
}

// DeviceResource is the name leftover gives a DRA driver's devices,
// "<driver>/devices", as replay's series columns do.
func DeviceResource(driver string) string { return driver + "/devices" }

// leftoverDevices counts, per node and DeviceResource, the devices the
// node's own ResourceSlices publish (the newest generation of each pool)
// and those of them no allocation holds (an allocation with admin access
// holds none; a device shared through consumable capacity is held once
// any claim has a share of it). Slices shared by several nodes are left
// out: their devices are no node's.
func leftoverDevices(dra *schedcore.DRAManager) (devices, free map[string]map[string]int64) {
	if dra == nil || dra.Empty() {
		return nil, nil
	}
	type poolKey struct{ driver, pool string }
	type deviceKey struct{ driver, pool, device string }
	slices := dra.Slices()
	gen := map[poolKey]int64{}
	for _, s := range slices {
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		gen[k] = max(gen[k], s.Spec.Pool.Generation)
	}
	held := map[deviceKey]bool{}
	allocs, _ := dra.Allocations()
	for _, a := range allocs {
		for _, r := range a.Devices.Results {
			if r.AdminAccess != nil && *r.AdminAccess {
				continue
			}
			held[deviceKey{r.Driver, r.Pool, r.Device}] = true
		}
	}
	devices, free = map[string]map[string]int64{}, map[string]map[string]int64{}
	for _, s := range slices {
		if s.Spec.NodeName == nil || *s.Spec.NodeName == "" || s.Spec.Pool.Generation != gen[poolKey{s.Spec.Driver, s.Spec.Pool.Name}] {
			continue
		}
		node, res := *s.Spec.NodeName, DeviceResource(s.Spec.Driver)
		if devices[node] == nil {
			devices[node], free[node] = map[string]int64{}, map[string]int64{}
		}
		for _, d := range s.Spec.Devices {
			devices[node][res]++
			if !held[deviceKey{s.Spec.Driver, s.Spec.Pool.Name, d.Name}] {
				free[node][res]++
			}
		}
	}
	return devices, free
}
