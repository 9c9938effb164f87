package dynamicresources

// Why a device on the node was not taken: class or selector false, held,
// tainted, counters or capacity used up.

import (
	"fmt"
	"slices"
	"sort"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"
)

// classify says why the device cannot serve the request ("" kind: it is
// free for it).
func (x *nodeExplainer) classify(r request, class *resourceapi.DeviceClass, d *nodeDevice) verdict {
	held := !r.adminAccess && x.allocated.AllocatedDevices.Has(d.id)
	if x.short && held && r.mode != resourceapi.DeviceAllocationModeAll {
		// Not free, whatever comes before: for a number of devices only
		// the free ones count (requestOutcome.free).
		return verdict{kind: "allocated"}
	}
	if !x.pl.allocFeatures.DeviceBindingAndStatus && len(d.dev.BindingConditions) > 0 {
		return verdict{kind: "nomatch", why: "has binding conditions, which the DRADeviceBindingConditions feature (off) is needed for"}
	}
	if class != nil {
		if why := x.selectorsFail(d, class.Spec.Selectors, "class "+class.Name+" selector"); why != "" {
			return verdict{kind: "nomatch", why: why}
		}
	}
	if why := x.selectorsFail(d, r.selectors, "request selector"); why != "" {
		return verdict{kind: "nomatch", why: why}
	}
	multi := x.pl.allocFeatures.ConsumableCapacity && ptr.Deref(d.dev.AllowMultipleAllocations, false)
	if held {
		if x.short {
			return verdict{kind: "allocated"}
		}
		return verdict{kind: "allocated", who: x.holders(d)}
	}
	if len(d.dev.ConsumesCounters) > 0 {
		if !x.pl.allocFeatures.PartitionableDevices {
			return verdict{kind: "nomatch", why: "consumes counters, which the DRAPartitionableDevices feature (off) is needed for"}
		}
		if !(multi && x.capacityInUse(d.id)) {
			if why := x.countersShort(d); why != "" {
				return verdict{kind: "counters", why: why}
			}
		}
	}
	if x.pl.allocFeatures.DeviceTaints {
		for _, t := range d.dev.Taints {
			if t.Effect != resourceapi.DeviceTaintEffectNoExecute && t.Effect != resourceapi.DeviceTaintEffectNoSchedule {
				continue
			}
			if !slices.ContainsFunc(r.tolerations, func(tol resourceapi.DeviceToleration) bool { return resourceclaim.ToleratesTaint(tol, t) }) {
				return verdict{kind: "tainted", why: fmt.Sprintf("tainted %s, not tolerated", taintString(t))}
			}
		}
	}
	if x.pl.allocFeatures.ConsumableCapacity {
		if why := x.capacityShort(r, d, multi); why != "" {
			return verdict{kind: "capacity", why: why}
		}
	}
	return verdict{}
}

// selectorsFail evaluates the CEL selectors in order and describes the
// first that is false (or fails), "" when all are true.
func (x *nodeExplainer) selectorsFail(d *nodeDevice, sels []resourceapi.DeviceSelector, what string) string {
	for i, sel := range sels {
		if sel.CEL == nil {
			continue
		}
		expr := x.pl.celCache.GetOrCompile(sel.CEL.Expression)
		if expr.Error != nil {
			return fmt.Sprintf("%s #%d does not compile: %v", what, i, expr.Error)
		}
		ok, err := x.pl.explain.deviceMatches(x.ctx, x.index, expr, sel.CEL.Expression, d)
		if err != nil {
			return fmt.Sprintf("%s #%d fails: %v: %s", what, i, cel.EnhanceRuntimeError(err), sel.CEL.Expression)
		}
		if !ok {
			return fmt.Sprintf("%s #%d is false: %s", what, i, sel.CEL.Expression)
		}
	}
	return ""
}

// holders names the pods (or, unreserved, the claims) holding a device.
func (x *nodeExplainer) holders(d *nodeDevice) []string {
	var out []string
	for _, c := range x.pl.dra.ClaimsAllocatingDevice(d.id.Driver.String(), d.id.Pool.String(), d.id.Device.String()) {
		if len(c.Status.ReservedFor) == 0 {
			out = append(out, "claim "+c.Namespace+"/"+c.Name)
			continue
		}
		for _, r := range c.Status.ReservedFor {
			if n := c.Namespace + "/" + r.Name; !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	return out
}

func (x *nodeExplainer) capacityInUse(id structured.DeviceID) bool {
	if _, ok := x.allocated.AggregatedCapacity[id]; ok {
		return true
	}
	for s := range x.allocated.AllocatedSharedDeviceIDs {
		if s.GetDeviceID() == id {
			return true
		}
	}
	return false
}

// poolCounters returns what is left of each counter of the device's pool
// after the allocated devices' consumption.
func (x *nodeExplainer) poolCounters(d *nodeDevice) map[string]map[string]resource.Quantity {
	k := d.slice.Spec.Driver + "/" + d.slice.Spec.Pool.Name
	if left, ok := x.counters[k]; ok {
		return left
	}
	if x.counters == nil {
		x.counters = map[string]map[string]map[string]resource.Quantity{}
	}
	left := map[string]map[string]resource.Quantity{}
	var pool []*resourceapi.ResourceSlice
	for _, s := range x.slices {
		if s.Spec.Driver == d.slice.Spec.Driver && s.Spec.Pool.Name == d.slice.Spec.Pool.Name && s.Spec.Pool.Generation == d.slice.Spec.Pool.Generation {
			pool = append(pool, s)
		}
	}
	for _, s := range pool {
		for _, set := range s.Spec.SharedCounters {
			m := map[string]resource.Quantity{}
			for name, c := range set.Counters {
				m[name] = c.Value.DeepCopy()
			}
			left[set.Name] = m
		}
	}
	for _, s := range pool {
		for i := range s.Spec.Devices {
			dev := &s.Spec.Devices[i]
			id := structured.MakeDeviceID(s.Spec.Driver, s.Spec.Pool.Name, dev.Name)
			if !structured.IsDeviceAllocated(id, x.allocated) {
				continue
			}
			for _, cc := range dev.ConsumesCounters {
				for name, c := range cc.Counters {
					if q, ok := left[cc.CounterSet][name]; ok {
						q.Sub(c.Value)
						left[cc.CounterSet][name] = q
					}
				}
			}
		}
	}
	x.counters[k] = left
	return left
}

// countersShort describes the first counter the device needs more of
// than its pool has left, "" when there is enough.
func (x *nodeExplainer) countersShort(d *nodeDevice) string {
	left := x.poolCounters(d)
	for _, cc := range d.dev.ConsumesCounters {
		names := make([]string, 0, len(cc.Counters))
		for n := range cc.Counters {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			have, ok := left[cc.CounterSet][n]
			need := cc.Counters[n].Value
			if !ok || have.Cmp(need) < 0 {
				if have.Sign() < 0 {
					have = resource.Quantity{}
				}
				return fmt.Sprintf("counter %s of set %s used up: needs %s, %s left", n, cc.CounterSet, need.String(), have.String())
			}
		}
	}
	return ""
}

// capacityShort describes the first capacity the request needs more of
// than the device has left, "" when it fits. The amount consumed is the
// request's, rounded as the device's request policy says, or the policy's
// default, or (no request) the whole capacity.
func (x *nodeExplainer) capacityShort(r request, d *nodeDevice, multi bool) string {
	if r.capacity != nil {
		names := make([]string, 0, len(r.capacity.Requests))
		for n := range r.capacity.Requests {
			names = append(names, string(n))
		}
		sort.Strings(names)
		for _, n := range names {
			if _, ok := d.dev.Capacity[resourceapi.QualifiedName(n)]; !ok {
				return "has no capacity " + n
			}
		}
	}
	names := make([]string, 0, len(d.dev.Capacity))
	for n := range d.dev.Capacity {
		names = append(names, string(n))
	}
	sort.Strings(names)
	used := x.allocated.AggregatedCapacity[d.id]
	for _, n := range names {
		qn := resourceapi.QualifiedName(n)
		c := d.dev.Capacity[qn]
		need := c.Value.DeepCopy()
		if c.RequestPolicy != nil && c.RequestPolicy.Default != nil {
			need = c.RequestPolicy.Default.DeepCopy()
		}
		if r.capacity != nil {
			if q, ok := r.capacity.Requests[qn]; ok {
				need = roundUp(q, c.RequestPolicy)
			}
		}
		left := c.Value.DeepCopy()
		if u, ok := used[qn]; ok && u != nil {
			left.Sub(*u)
		}
		if need.Cmp(left) > 0 {
			if !multi {
				return fmt.Sprintf("capacity %s too small: needs %s, the device has %s", n, need.String(), c.Value.String())
			}
			if left.Sign() < 0 {
				left = resource.Quantity{}
			}
			return fmt.Sprintf("capacity %s used up: needs %s, %s of %s left", n, need.String(), left.String(), c.Value.String())
		}
	}
	return ""
}

// roundUp is the amount a request consumes under a request policy: the
// smallest valid value at least the request (valid values, or the range's
// minimum plus whole steps).
func roundUp(q resource.Quantity, p *resourceapi.CapacityRequestPolicy) resource.Quantity {
	if p == nil {
		return q.DeepCopy()
	}
	switch {
	case p.ValidRange != nil && p.ValidRange.Min != nil:
		lo := p.ValidRange.Min
		if q.Cmp(*lo) <= 0 {
			return lo.DeepCopy()
		}
		if p.ValidRange.Step == nil || p.ValidRange.Step.MilliValue() <= 0 {
			return q.DeepCopy()
		}
		step, base := p.ValidRange.Step.MilliValue(), lo.MilliValue()
		n := (q.MilliValue() - base + step - 1) / step
		return *resource.NewMilliQuantity(base+n*step, q.Format)
	case len(p.ValidValues) > 0:
		for _, v := range p.ValidValues {
			if q.Cmp(v) <= 0 {
				return v.DeepCopy()
			}
		}
	}
	return q.DeepCopy()
}
