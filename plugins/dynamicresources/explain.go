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
	return pl.explainFilter(ctx, cs, pod, nodeInfo, status)
}

var _ schedcore.ShortfallExplainer = (*DynamicResources)(nil)

// FilterShortfall is ExplainFilter's shortfall (1 for no explanation),
// without the texts: the requests' outcomes are the same, the holders of
// the allocated devices are not looked up, no gap is formatted, and for a
// request of a number of devices a device held by another claim is known
// not to be free without evaluating its selectors (only the free devices
// count there). Nodes whose devices are alike for the claims share one
// answer (sharedShortfall).
func (pl *DynamicResources) FilterShortfall(ctx context.Context, cs *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, status *schedcore.Status) float64 {
	state, claims, e, devices := pl.explainCase(cs, pod, nodeInfo, status)
	if devices {
		return pl.sharedShortfall(ctx, state, nodeInfo, claims)
	}
	if e != nil {
		return e.Shortfall
	}
	return 1
}

// explainFilter is ExplainFilter.
func (pl *DynamicResources) explainFilter(ctx context.Context, cs *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, status *schedcore.Status) *schedcore.FilterExplanation {
	state, claims, e, devices := pl.explainCase(cs, pod, nodeInfo, status)
	if !devices {
		return e
	}
	return pl.explainDevices(ctx, state, nodeInfo.Node(), claims, false)
}

// explainCase sorts out the rejection: an allocated claim not available
// on the node or an extended resource it lacks (e, explained), nothing to
// say (e nil), or claims its devices cannot satisfy (devices: the claims
// to allocate there, as Filter gave them to the allocator).
func (pl *DynamicResources) explainCase(cs *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo, status *schedcore.Status) (state *stateData, claims []*resourceapi.ResourceClaim, e *schedcore.FilterExplanation, devices bool) {
	state, _ = pl.claimsState(cs)
	node := nodeInfo.Node()
	if state == nil || node == nil {
		return nil, nil, nil, false
	}
	switch status.Message() {
	case ErrReasonNotAvailable:
		return state, nil, pl.explainUnavailable(state, node), false
	case ErrReasonCannotFit:
		return state, nil, pl.explainCannotFit(state, nodeInfo), false
	case ErrReasonExtendedStale:
		return state, nil, nil, false
	}
	if state.allocator == nil || state.allocated == nil {
		return state, nil, nil, false
	}
	nodeExtended, _, st := pl.filterExtendedResources(state, pod, nodeInfo)
	if st != nil {
		return state, nil, nil, false
	}
	extended := state.claims.extendedResourceClaim()
	if extended == nil || nodeExtended != nil {
		// Filter's claims (the cycle's list, or the node variant's).
		return state, state.claimsToAllocate(nodeExtended), nil, true
	}
	// The special claim without a variant for the node is left out.
	for _, c := range state.claims.toAllocate() {
		if c != extended {
			claims = append(claims, c)
		}
	}
	return state, claims, nil, true
}

// explainDevices explains why the node's devices cannot serve the claims;
// short, for FilterShortfall: its shortfall and number of gaps are
// ExplainFilter's, its gaps are empty.
func (pl *DynamicResources) explainDevices(ctx context.Context, state *stateData, node *v1.Node, claims []*resourceapi.ResourceClaim, short bool) *schedcore.FilterExplanation {
	x := &nodeExplainer{pl: pl, ctx: ctx, node: node, allocated: state.allocated, short: short}
	x.gatherDevices(pl.explain.index(state.slices))
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
	// short: for FilterShortfall, no texts (see there).
	short bool
	// index is the slices' index.
	index *explainSlices
}

// gatherDevices collects the devices of the slices the node sees, as the
// allocator's GatherPools does: node-local slices, slices whose node
// selector matches or that serve all nodes, devices selected per device;
// of each pool the current generation only, and nothing from a pool that
// is incomplete (not all its slices published) or being replaced.
func (x *nodeExplainer) gatherDevices(idx *explainSlices) {
	all := idx.of
	x.slices, x.index = all, idx
	f := x.pl.allocFeatures
	type poolState struct {
		gen     int64
		visible []*resourceapi.ResourceSlice
	}
	pools := map[string]*poolState{}
	var order []string
	// Only the slices naming the node or none can match it.
	idx.candidates(x.node.Name, func(s *resourceapi.ResourceSlice) {
		k := s.Spec.Driver + "/" + s.Spec.Pool.Name
		match := false
		switch nodeName, allNodes := ptr.Deref(s.Spec.NodeName, ""), ptr.Deref(s.Spec.AllNodes, false); {
		case nodeName != "" || allNodes || s.Spec.NodeSelector != nil:
			match = idx.matches(s, x.node)
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
			return
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
	})
	sort.Strings(order)
	for _, k := range order {
		p := pools[k]
		first := p.visible[0]
		// Every slice of the pool, the node's or not, counts.
		gens := idx.pools[poolKey{first.Spec.Driver, first.Spec.Pool.Name}]
		published, newest := gens.count[p.gen], max(gens.newest, p.gen)
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
