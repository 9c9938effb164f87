package replay

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// DRA devices in the series: one column per DRA driver, named
// "<driver>/devices", counting devices. A node's capacity is the devices
// its node-local ResourceSlices publish (the current generation of each
// pool); a device is allocated while at least one running pod's claim
// holds it (a claim shared by several pods counts its devices once, a
// device used with admin access does not count, nor do devices of slices
// that belong to no single node). Which devices a claim takes is known
// only once it is allocated, so these columns have no arrived demand and
// no fragmentation.

// DeviceColumn is the name of the series column of a DRA driver's devices.
func DeviceColumn(driver string) string { return driver + "/devices" }

// nodeDevices counts, per node and driver, the devices of the cluster's
// node-local ResourceSlices, current pool generations only, and returns
// the pools they are in ("driver/pool").
func nodeDevices(cl *snapshot.Cluster) (map[string]map[string]int64, map[string]bool) {
	if cl == nil || len(cl.DRA.ResourceSlices) == 0 {
		return nil, nil
	}
	type poolKey struct{ driver, pool string }
	gen := map[poolKey]int64{}
	for _, s := range cl.DRA.ResourceSlices {
		k := poolKey{s.Spec.Driver, s.Spec.Pool.Name}
		gen[k] = max(gen[k], s.Spec.Pool.Generation)
	}
	out, pools := map[string]map[string]int64{}, map[string]bool{}
	for _, s := range cl.DRA.ResourceSlices {
		node := ptr.Deref(s.Spec.NodeName, "")
		if node == "" || s.Spec.Pool.Generation != gen[poolKey{s.Spec.Driver, s.Spec.Pool.Name}] {
			continue
		}
		if out[node] == nil {
			out[node] = map[string]int64{}
		}
		out[node][s.Spec.Driver] += int64(len(s.Spec.Devices))
		pools[s.Spec.Driver+"/"+s.Spec.Pool.Name] = true
	}
	return out, pools
}

// deviceDrivers lists the drivers of nodeDevices, sorted.
func deviceDrivers(devs map[string]map[string]int64) []string {
	seen := map[string]bool{}
	for _, byDriver := range devs {
		for d := range byDriver {
			seen[d] = true
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// deviceUse is one device a running pod holds, with its series column.
type deviceUse struct {
	key string
	col int
}

// heldDevices returns the devices of a pod's allocation that count in the
// series: those of drivers with a column, not used with admin access.
func (r *recorder) heldDevices(devs []engine.PodDevice) []deviceUse {
	var out []deviceUse
	for _, d := range devs {
		if ptr.Deref(d.AdminAccess, false) {
			continue
		}
		col, ok := r.index[v1.ResourceName(DeviceColumn(d.Driver))]
		if !ok {
			continue
		}
		if !r.localPools[d.Driver+"/"+d.Pool] {
			continue
		}
		// Shares of a device with consumable capacity count it once.
		out = append(out, deviceUse{key: d.Driver + "/" + d.Pool + "/" + d.Device, col: col})
	}
	return out
}

// accountDevices adds (sign 1) or removes (-1) a pod's devices from its
// node's use: a device counts while any running pod holds it.
func (r *recorder) accountDevices(n *nodeRec, devs []deviceUse, sign int) {
	for _, d := range devs {
		before := r.deviceHolders[d.key]
		r.deviceHolders[d.key] = before + sign
		if r.deviceHolders[d.key] == 0 {
			delete(r.deviceHolders, d.key)
		}
		if (before == 0) == (sign > 0) {
			n.used[d.col] += int64(sign)
			if n.present {
				r.allocated[d.col] += int64(sign)
			}
		}
	}
}
