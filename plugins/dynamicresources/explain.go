package dynamicresources

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/dynamic-resource-allocation/resourceclaim"
	"k8s.io/dynamic-resource-allocation/structured"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

var _ schedcore.FilterExplainer = (*DynamicResources)(nil)

// ExplainFilter says why Filter rejected the node, from the cycle state
// its Filter read (the claims, the slices and the allocated devices
// PreFilter gathered): for an allocated claim not available there, where
// it is allocated; for claims the node's devices cannot satisfy, per
// request the devices it needs and what the node has ("needs 2 free
// devices of class gpu.example.com matching ...; node-7 has 1 free, 1
// allocated to ml/trainer-0"), with one detail line per device saying why
// it was not taken: a class or request CEL selector that is false (which
// one), allocated and to whom, a taint not tolerated, counters or
// capacity used up; then a matchAttribute constraint no value satisfies.
// The shortfall is the share of the wanted devices the node lacks (1 when
// the node has none, or its devices would do one request at a time only).
func (pl *DynamicResources) ExplainFilter(ctx context.Context, cs *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, status *schedcore.Status) *schedcore.FilterExplanation {
	state, _ := pl.claimsState(cs)
	node := nodeInfo.Node()
	if state == nil || node == nil {
		return nil
	}
	switch status.Message() {
	case ErrReasonNotAvailable:
		return pl.explainUnavailable(state, node)
	case ErrReasonCannotFit:
		return pl.explainCannotFit(state, nodeInfo)
	case ErrReasonExtendedStale:
		return nil
	}
	if state.allocator == nil || state.allocated == nil {
		return nil
	}
	nodeExtended, _, st := pl.filterExtendedResources(state, pod, nodeInfo)
	if st != nil {
		return nil
	}
	extended := state.claims.extendedResourceClaim()
	var claims []*resourceapi.ResourceClaim
	for _, c := range state.claims.toAllocate() {
		if c == extended {
			if nodeExtended == nil {
				continue
			}
			c = nodeExtended
		}
		claims = append(claims, c)
	}
	x := &nodeExplainer{pl: pl, ctx: ctx, node: node, allocated: state.allocated}
	x.gatherDevices(state.slices)
	return x.explain(claims)
}

// explainUnavailable names the allocated claims Filter found unavailable
// on the node, and where their devices are.
func (pl *DynamicResources) explainUnavailable(state *stateData, node *v1.Node) *schedcore.FilterExplanation {
	ex := &schedcore.FilterExplanation{Shortfall: 1}
	for index, claim := range state.claims.all() {
		name := claim.Namespace + "/" + claim.Name
		a := claim.Status.Allocation
		switch sel := state.informationsForClaim[index].availableOnNodes; {
		case sel != nil && !sel.Match(node):
			g := schedcore.Gap{Text: fmt.Sprintf("claim %s is allocated to devices that are not available on %s%s", name, node.Name, reservedFor(claim))}
			for _, r := range a.Devices.Results {
				g.Details = append(g.Details, fmt.Sprintf("%s/%s/%s (request %s)", r.Driver, r.Pool, r.Device, r.Request))
			}
			ex.Gaps = append(ex.Gaps, g)
		case allocationRequiresOptionalNodeOperations(a) && !slices.Contains(node.Status.DeclaredFeatures, optionalNodeOperationsFeature):
			ex.Gaps = append(ex.Gaps, schedcore.Gap{Text: fmt.Sprintf("claim %s has devices that skip node operations; %s does not declare the %s feature", name, node.Name, optionalNodeOperationsFeature)})
		case a != nil && pl.bindingConditions():
			ready, err := isClaimReadyForBinding(claim)
			switch {
			case err != nil:
				ex.Gaps = append(ex.Gaps, schedcore.Gap{Text: fmt.Sprintf("claim %s: %v", name, err)})
			case !ready && pl.isClaimTimeout(claim):
				ex.Gaps = append(ex.Gaps, schedcore.Gap{Text: fmt.Sprintf("claim %s: its devices' binding conditions were not met within %s", name, pl.bindingTimeout)})
			}
		}
	}
	if len(ex.Gaps) == 0 {
		return nil
	}
	return ex
}

// explainCannotFit names the DRA-backed extended resources of the pod
// that the node does not have and no DeviceClass provides.
func (pl *DynamicResources) explainCannotFit(state *stateData, nodeInfo *schedcore.NodeInfo) *schedcore.FilterExplanation {
	var texts []string
	for name, q := range state.podScalarResources {
		if !isDRAExtendedResourceName(name) || q == 0 {
			continue
		}
		if _, ok := nodeInfo.Allocatable.ScalarResources[name]; ok || pl.dra.ExtendedResourceClass(name) != nil {
			continue
		}
		texts = append(texts, fmt.Sprintf("needs %d %s: %s has none and no DeviceClass provides it", q, name, nodeInfo.Name()))
	}
	if len(texts) == 0 {
		return nil
	}
	sort.Strings(texts)
	return schedcore.NewFilterExplanation(1, texts...)
}

// reservedFor renders who a claim is reserved for (" (reserved for
// ml/a, ml/b)"), "" when nobody.
func reservedFor(c *resourceapi.ResourceClaim) string {
	if len(c.Status.ReservedFor) == 0 {
		return ""
	}
	names := make([]string, len(c.Status.ReservedFor))
	for i, r := range c.Status.ReservedFor {
		names[i] = c.Namespace + "/" + r.Name
	}
	return " (reserved for " + strings.Join(names, ", ") + ")"
}

// nodeDevice is a device the allocator may consider for the node.
type nodeDevice struct {
	id    structured.DeviceID
	slice *resourceapi.ResourceSlice
	dev   *resourceapi.Device
}

func (d *nodeDevice) String() string { return d.id.String() }

// nodeExplainer explains one node.
type nodeExplainer struct {
	pl        *DynamicResources
	ctx       context.Context
	node      *v1.Node
	allocated *structured.AllocatedState
	// devices are those of the complete, current pools the node sees, in
	// pool and slice order; incomplete names the pools being updated.
	devices    []*nodeDevice
	incomplete []string
	// counters are each visible pool's counters left ("driver/pool" ->
	// counter set -> counter), computed on first use.
	counters map[string]map[string]map[string]resource.Quantity
	slices   []*resourceapi.ResourceSlice
}

// gatherDevices collects the devices of the slices the node sees, as the
// allocator's GatherPools does: node-local slices, slices whose node
// selector matches or that serve all nodes, devices selected per device;
// of each pool the current generation only, and nothing from a pool that
// is incomplete (not all its slices published) or being replaced.
func (x *nodeExplainer) gatherDevices(all []*resourceapi.ResourceSlice) {
	x.slices = all
	f := x.pl.allocFeatures
	type poolState struct {
		gen     int64
		visible []*resourceapi.ResourceSlice
	}
	pools := map[string]*poolState{}
	var order []string
	for _, s := range all {
		k := s.Spec.Driver + "/" + s.Spec.Pool.Name
		match := false
		switch nodeName, allNodes := ptr.Deref(s.Spec.NodeName, ""), ptr.Deref(s.Spec.AllNodes, false); {
		case nodeName != "" || allNodes || s.Spec.NodeSelector != nil:
			match, _ = structured.NodeMatches(f, x.node, nodeName, allNodes, s.Spec.NodeSelector)
		case ptr.Deref(s.Spec.PerDeviceNodeSelection, false):
			for i := range s.Spec.Devices {
				d := &s.Spec.Devices[i]
				if ok, _ := structured.NodeMatches(f, x.node, ptr.Deref(d.NodeName, ""), ptr.Deref(d.AllNodes, false), d.NodeSelector); ok {
					match = true
					break
				}
			}
		}
		if !match {
			continue
		}
		p := pools[k]
		if p == nil {
			p = &poolState{gen: s.Spec.Pool.Generation}
			pools[k] = p
			order = append(order, k)
		}
		switch {
		case s.Spec.Pool.Generation > p.gen:
			p.gen, p.visible = s.Spec.Pool.Generation, []*resourceapi.ResourceSlice{s}
		case s.Spec.Pool.Generation == p.gen:
			p.visible = append(p.visible, s)
		}
	}
	sort.Strings(order)
	for _, k := range order {
		p := pools[k]
		first := p.visible[0]
		published, newest := 0, p.gen
		for _, s := range all {
			if s.Spec.Driver != first.Spec.Driver || s.Spec.Pool.Name != first.Spec.Pool.Name {
				continue
			}
			newest = max(newest, s.Spec.Pool.Generation)
			if s.Spec.Pool.Generation == p.gen {
				published++
			}
		}
		if newest > p.gen {
			continue // being replaced: the allocator ignores it
		}
		if int64(published) != first.Spec.Pool.ResourceSliceCount {
			x.incomplete = append(x.incomplete, fmt.Sprintf("pool %s is being updated (%d of %d slices published): none of its devices can be allocated", k, published, first.Spec.Pool.ResourceSliceCount))
			continue
		}
		for _, s := range p.visible {
			for i := range s.Spec.Devices {
				d := &s.Spec.Devices[i]
				if ptr.Deref(s.Spec.PerDeviceNodeSelection, false) {
					if ok, _ := structured.NodeMatches(f, x.node, ptr.Deref(d.NodeName, ""), ptr.Deref(d.AllNodes, false), d.NodeSelector); !ok {
						continue
					}
				}
				x.devices = append(x.devices, &nodeDevice{id: structured.MakeDeviceID(s.Spec.Driver, s.Spec.Pool.Name, d.Name), slice: s, dev: d})
			}
		}
	}
}

// request is one request or subrequest of a claim, as the allocator
// reads it.
type request struct {
	claim       *resourceapi.ResourceClaim
	name        string // "gpu", or "gpu/big" for a subrequest
	base        string // the request's name
	class       string
	selectors   []resourceapi.DeviceSelector
	mode        resourceapi.DeviceAllocationMode
	count       int64
	adminAccess bool
	tolerations []resourceapi.DeviceToleration
	capacity    *resourceapi.CapacityRequirements
}

func exactRequest(c *resourceapi.ResourceClaim, name string, r *resourceapi.ExactDeviceRequest) request {
	return request{claim: c, name: name, base: name, class: r.DeviceClassName, selectors: r.Selectors, mode: r.AllocationMode, count: r.Count,
		adminAccess: ptr.Deref(r.AdminAccess, false), tolerations: r.Tolerations, capacity: r.Capacity}
}

func subRequest(c *resourceapi.ResourceClaim, base string, r *resourceapi.DeviceSubRequest) request {
	return request{claim: c, name: resourceclaim.CreateSubRequestRef(base, r.Name), base: base, class: r.DeviceClassName, selectors: r.Selectors,
		mode: r.AllocationMode, count: r.Count, tolerations: r.Tolerations, capacity: r.Capacity}
}

// verdict is why a device was not taken for a request ("" kind: free).
type verdict struct {
	kind string // "", "nomatch", "allocated", "tainted", "counters", "capacity"
	why  string
	// who holds an allocated device.
	who []string
}

// requestOutcome is what the node has for one request.
type requestOutcome struct {
	req      request
	free     []*nodeDevice
	verdicts []verdict
	wanted   int64
	missing  int64
}

// explain builds the node's explanation for the claims to allocate.
func (x *nodeExplainer) explain(claims []*resourceapi.ResourceClaim) *schedcore.FilterExplanation {
	ex := &schedcore.FilterExplanation{}
	for _, t := range x.incomplete {
		ex.Gaps = append(ex.Gaps, schedcore.Gap{Text: t})
	}
	var wanted, missing int64
	var all []*requestOutcome
	for _, claim := range claims {
		claimMissing := int64(0)
		byName := map[string]*requestOutcome{}
		for i := range claim.Spec.Devices.Requests {
			r := &claim.Spec.Devices.Requests[i]
			if r.Exactly != nil {
				o := x.outcome(exactRequest(claim, r.Name, r.Exactly))
				byName[r.Name] = o
				all = append(all, o)
				wanted += o.wanted
				claimMissing += o.missing
				if o.missing > 0 {
					ex.Gaps = append(ex.Gaps, x.gap(o, ""))
				}
				continue
			}
			// firstAvailable: the first subrequest the node can satisfy is
			// taken; when none can, each one's gap is given and the
			// nearest counts.
			var best *requestOutcome
			var gaps []schedcore.Gap
			for j := range r.FirstAvailable {
				o := x.outcome(subRequest(claim, r.Name, &r.FirstAvailable[j]))
				if best == nil || o.missing*best.wanted < best.missing*o.wanted {
					best = o
				}
				gaps = append(gaps, x.gap(o, fmt.Sprintf(" (choice %d of %d)", j+1, len(r.FirstAvailable))))
			}
			if best == nil {
				continue
			}
			byName[r.Name] = best
			all = append(all, best)
			wanted += best.wanted
			claimMissing += best.missing
			if best.missing > 0 {
				ex.Gaps = append(ex.Gaps, gaps...)
			}
		}
		if claimMissing == 0 {
			gaps, short := x.constraintGaps(claim, byName)
			ex.Gaps = append(ex.Gaps, gaps...)
			claimMissing += short
		}
		missing += claimMissing
	}
	if len(ex.Gaps) == len(x.incomplete) && missing == 0 {
		if g, ok := x.competition(all); ok {
			ex.Gaps = append(ex.Gaps, g)
		} else if len(all) > 0 {
			ex.Gaps = append(ex.Gaps, schedcore.Gap{Text: fmt.Sprintf("each request has enough free devices on %s, but the allocator found no combination that satisfies all claims at once (devices sharing counters, or constraints across them)", x.node.Name)})
		}
	}
	if len(ex.Gaps) == 0 {
		return nil
	}
	ex.Shortfall = 1
	if missing > 0 && len(x.incomplete) == 0 {
		ex.Shortfall = schedcore.ShortfallOf(missing, wanted)
	}
	return ex
}

// outcome classifies every device for the request, in the allocator's
// order of checks.
func (x *nodeExplainer) outcome(r request) *requestOutcome {
	o := &requestOutcome{req: r, verdicts: make([]verdict, len(x.devices))}
	class, _ := x.pl.dra.Class(r.class)
	matching := int64(0)
	for i, d := range x.devices {
		v := x.classify(r, class, d)
		o.verdicts[i] = v
		if v.kind != "nomatch" {
			matching++
		}
		if v.kind == "" {
			o.free = append(o.free, d)
		}
	}
	free := int64(len(o.free))
	switch r.mode {
	case resourceapi.DeviceAllocationModeAll:
		o.wanted = max(matching, 1)
		if matching == 0 || free < matching || len(x.incomplete) > 0 {
			o.missing = max(o.wanted-free, 1)
		}
	default:
		o.wanted = max(r.count, 1)
		o.missing = max(o.wanted-free, 0)
	}
	return o
}

// classify says why the device cannot serve the request ("" kind: it is
// free for it).
func (x *nodeExplainer) classify(r request, class *resourceapi.DeviceClass, d *nodeDevice) verdict {
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
	if !r.adminAccess && x.allocated.AllocatedDevices.Has(d.id) {
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
		ok, _, err := expr.DeviceMatches(x.ctx, cel.Device{Driver: d.slice.Spec.Driver, AllowMultipleAllocations: d.dev.AllowMultipleAllocations, Attributes: d.dev.Attributes, Capacity: d.dev.Capacity})
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

// gap renders a request's outcome: what it needs, what the node has, one
// detail per device not free.
func (x *nodeExplainer) gap(o *requestOutcome, choice string) schedcore.Gap {
	r := o.req
	var need string
	switch r.mode {
	case resourceapi.DeviceAllocationModeAll:
		need = "all devices of class " + r.class
	default:
		need = fmt.Sprintf("%d free %s of class %s", o.wanted, plural(o.wanted, "device", "devices"), r.class)
	}
	if r.adminAccess {
		need += " (admin access)"
	}
	var exprs []string
	for _, s := range r.selectors {
		if s.CEL != nil {
			exprs = append(exprs, s.CEL.Expression)
		}
	}
	if len(exprs) > 0 {
		need += " matching " + strings.Join(exprs, " and ")
	}
	if r.mode == resourceapi.DeviceAllocationModeAll {
		need += ", every one free"
	}
	counts := map[string]int{}
	var who []string
	for _, v := range o.verdicts {
		counts[v.kind]++
		for _, w := range v.who {
			if !slices.Contains(who, w) {
				who = append(who, w)
			}
		}
	}
	sort.Strings(who)
	has := fmt.Sprintf("%d free", len(o.free))
	if n := counts["allocated"]; n > 0 {
		has += fmt.Sprintf(", %d allocated to %s", n, strings.Join(who, ", "))
	}
	for _, k := range []struct{ kind, word string }{{"tainted", "tainted"}, {"counters", "out of counters"}, {"capacity", "without the capacity"}} {
		if n := counts[k.kind]; n > 0 {
			has += fmt.Sprintf(", %d %s", n, k.word)
		}
	}
	if n := counts["nomatch"]; n > 0 {
		has += fmt.Sprintf(", %d not matching", n)
	}
	if len(x.devices) == 0 {
		has = "no device"
	}
	g := schedcore.Gap{Text: fmt.Sprintf("request %s%s of claim %s: needs %s; %s has %s", r.name, choice, r.claim.Namespace+"/"+r.claim.Name, need, x.node.Name, has)}
	for i, v := range o.verdicts {
		line := x.devices[i].String() + ": "
		switch v.kind {
		case "":
			line += "free"
		case "allocated":
			line += "allocated to " + strings.Join(v.who, ", ")
			if len(v.who) == 0 {
				line = x.devices[i].String() + ": allocated (in flight)"
			}
		default:
			line += v.why
		}
		g.Details = append(g.Details, line)
	}
	return g
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// taintString renders a device taint as kubectl renders node taints.
func taintString(t resourceapi.DeviceTaint) string {
	if t.Value == "" {
		return t.Key + ":" + string(t.Effect)
	}
	return t.Key + "=" + t.Value + ":" + string(t.Effect)
}

// constraintGaps checks the claim's matchAttribute constraints against
// the free devices of the requests they bind: a constraint fails when no
// single value of the attribute has enough free devices for each request.
// missing is what the best value lacks, summed over the failed ones.
func (x *nodeExplainer) constraintGaps(claim *resourceapi.ResourceClaim, byName map[string]*requestOutcome) (out []schedcore.Gap, missing int64) {
	for _, c := range claim.Spec.Devices.Constraints {
		if c.MatchAttribute == nil {
			continue
		}
		attr := *c.MatchAttribute
		names := c.Requests
		if len(names) == 0 {
			for _, r := range claim.Spec.Devices.Requests {
				names = append(names, r.Name)
			}
		}
		// per value: devices free for each request
		perValue := map[string]map[string]int64{}
		var reqs []*requestOutcome
		for _, n := range names {
			base, _, _ := strings.Cut(n, "/")
			o := byName[base]
			if o == nil {
				continue
			}
			reqs = append(reqs, o)
			for _, d := range o.free {
				v, ok := attributeValue(d, attr)
				if !ok {
					continue
				}
				if perValue[v] == nil {
					perValue[v] = map[string]int64{}
				}
				perValue[v][o.req.name]++
			}
		}
		if len(reqs) == 0 {
			continue
		}
		best := int64(-1)
		for _, counts := range perValue {
			short := int64(0)
			for _, o := range reqs {
				short += max(o.wanted-counts[o.req.name], 0)
			}
			if best < 0 || short < best {
				best = short
			}
		}
		if best == 0 {
			continue
		}
		if best < 0 {
			for _, o := range reqs {
				best += o.wanted
			}
			best++
		}
		missing += best
		g := schedcore.Gap{Text: fmt.Sprintf("constraint of claim %s: the devices of requests %s must have the same %s; no value of it has enough free devices on %s", claim.Namespace+"/"+claim.Name, strings.Join(names, ", "), attr, x.node.Name)}
		values := make([]string, 0, len(perValue))
		for v := range perValue {
			values = append(values, v)
		}
		sort.Strings(values)
		for _, v := range values {
			var parts []string
			for _, o := range reqs {
				parts = append(parts, fmt.Sprintf("%d of %d for %s", perValue[v][o.req.name], o.wanted, o.req.name))
			}
			g.Details = append(g.Details, fmt.Sprintf("%s=%s: %s", attr, v, strings.Join(parts, ", ")))
		}
		if len(values) == 0 {
			g.Details = append(g.Details, "no free device has the attribute")
		}
		out = append(out, g)
	}
	return out, missing
}

// attributeValue looks an attribute up as the allocator does: by its
// fully qualified name, or by its bare name when the domain is the
// device's driver.
func attributeValue(d *nodeDevice, name resourceapi.FullyQualifiedName) (string, bool) {
	a, ok := d.dev.Attributes[resourceapi.QualifiedName(name)]
	if !ok {
		domain, id, found := strings.Cut(string(name), "/")
		if !found || domain != d.slice.Spec.Driver {
			return "", false
		}
		if a, ok = d.dev.Attributes[resourceapi.QualifiedName(id)]; !ok {
			return "", false
		}
	}
	switch {
	case a.IntValue != nil:
		return fmt.Sprint(*a.IntValue), true
	case a.BoolValue != nil:
		return fmt.Sprint(*a.BoolValue), true
	case a.StringValue != nil:
		return *a.StringValue, true
	case a.VersionValue != nil:
		return *a.VersionValue, true
	}
	return fmt.Sprint(a), true
}

// competition finds requests that each have enough free devices alone but
// not together: the distinct free devices they draw on are fewer than
// they want in all.
func (x *nodeExplainer) competition(all []*requestOutcome) (schedcore.Gap, bool) {
	var wanted int64
	distinct := map[structured.DeviceID]bool{}
	var names []string
	for _, o := range all {
		if o.req.adminAccess || o.req.mode == resourceapi.DeviceAllocationModeAll {
			continue
		}
		wanted += o.wanted
		for _, d := range o.free {
			if ptr.Deref(d.dev.AllowMultipleAllocations, false) {
				// A device with consumable capacity may serve several
				// requests: counting devices says nothing.
				return schedcore.Gap{}, false
			}
			distinct[d.id] = true
		}
		names = append(names, fmt.Sprintf("%s of claim %s (%d)", o.req.name, o.req.claim.Namespace+"/"+o.req.claim.Name, o.wanted))
	}
	if len(names) < 2 || int64(len(distinct)) >= wanted {
		return schedcore.Gap{}, false
	}
	return schedcore.Gap{Text: fmt.Sprintf("requests %s need %d devices in all; %s has %d free that match them", strings.Join(names, ", "), wanted, x.node.Name, len(distinct))}, true
}
