package dynamicresources

import (
	"context"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/dynamic-resource-allocation/cel"
	"k8s.io/utils/ptr"
)

// A pool none of whose devices any request of the claims can select
// (DeviceClass and request CEL selectors, evaluated by the library's CEL
// as the allocator evaluates them) cannot change the allocator's answer
// through what is allocated in it: the allocator only looks at such a
// pool to skip its devices, and what it does with an incomplete or
// invalid pool depends on the slices alone (the objects revision). The
// memo therefore keys such a pool by its content only, not by its
// allocation version: an allocation from a zone's shared FPGA pool does
// not invalidate the GPU claims' answers of every node in the zone.
// Anything not known for sure (a missing class, a selector that does not
// compile or fails, a request of unknown shape) counts as selectable.

// selection evaluates the claims' selectors on devices.
type selection struct {
	class func(name string) (*resourceapi.DeviceClass, bool)
	cel   *cel.Cache
}

// relKey keys the relevance answers: the claims (interned specs) and the
// pool's content (interned static signature).
type relKey struct {
	claims int64
	static int64
}

// mayMatch reports whether some request of the claims may select some
// device of the slices.
func (s *selection) mayMatch(ctx context.Context, claims []*resourceapi.ResourceClaim, slices []*resourceapi.ResourceSlice) bool {
	if s == nil || s.class == nil || s.cel == nil {
		return true
	}
	for _, sl := range slices {
		for i := range sl.Spec.Devices {
			d := &sl.Spec.Devices[i]
			dev := cel.Device{Driver: sl.Spec.Driver, AllowMultipleAllocations: d.AllowMultipleAllocations, Attributes: d.Attributes, Capacity: d.Capacity}
			for _, c := range claims {
				for _, r := range c.Spec.Devices.Requests {
					switch {
					case r.Exactly != nil:
						if s.requestMayMatch(ctx, r.Exactly.DeviceClassName, r.Exactly.Selectors, dev) {
							return true
						}
					case len(r.FirstAvailable) > 0:
						for _, sub := range r.FirstAvailable {
							if s.requestMayMatch(ctx, sub.DeviceClassName, sub.Selectors, dev) {
								return true
							}
						}
					default:
						return true
					}
				}
			}
		}
	}
	return false
}

// requestMayMatch: the class's selectors, then the request's, all true
// (or not known to be false).
func (s *selection) requestMayMatch(ctx context.Context, className string, sels []resourceapi.DeviceSelector, dev cel.Device) bool {
	class, ok := s.class(className)
	if !ok {
		return true
	}
	return s.selectorsMayMatch(ctx, class.Spec.Selectors, dev) && s.selectorsMayMatch(ctx, sels, dev)
}

func (s *selection) selectorsMayMatch(ctx context.Context, sels []resourceapi.DeviceSelector, dev cel.Device) bool {
	for _, sel := range sels {
		if sel.CEL == nil {
			// A selector of another kind: the allocator rejects it.
			return true
		}
		expr := s.cel.GetOrCompile(sel.CEL.Expression)
		if expr.Error != nil {
			return true
		}
		ok, _, err := expr.DeviceMatches(ctx, dev)
		if err != nil {
			return true
		}
		if !ok {
			return false
		}
	}
	return true
}

// relevantLocked reports whether what is allocated in pool p may change
// the allocator's answer for the claims (relevance.go); pools the node
// sees without slices in the index count as relevant.
func (m *allocationMemo) relevantLocked(ctx context.Context, claimsID int64, claims []*resourceapi.ResourceClaim, p string) bool {
	static, ok := m.staticID[p]
	if !ok || m.sel == nil {
		return true
	}
	k := relKey{claims: claimsID, static: static}
	r, ok := m.relevant[k]
	if !ok {
		r = m.sel.mayMatch(ctx, claims, m.poolSlices[p])
		if ctx.Err() != nil {
			return true
		}
		m.relevant[k] = r
	}
	return r
}

// inertPoolLocked reports whether pool p, when the claims cannot select
// any of its devices, leaves the allocator's answer as if the node did not
// see it: the pool is complete (all its slices of one generation, as many
// as it says), valid (device names unique, no counters; plainPoolLocked),
// without devices that choose their nodes or declare compatibility groups
// (the allocator ignores such slices with that feature off, making the
// pool incomplete). The allocator then takes nothing from it, raises no
// error for it (a selector that fails makes the pool relevant), and keeps
// the order of the other pools. Failures are shared between nodes that
// differ only in such pools.
func (m *allocationMemo) inertPoolLocked(p string) bool {
	if v, ok := m.inert[p]; ok {
		return v
	}
	ss := m.poolSlices[p]
	inert := len(ss) > 0 && m.plainPoolLocked(p) && int64(len(ss)) == ss[0].Spec.Pool.ResourceSliceCount
	names := map[string]bool{}
	for _, s := range ss {
		if !inert {
			break
		}
		if s.Spec.Pool.Generation != ss[0].Spec.Pool.Generation || ptr.Deref(s.Spec.PerDeviceNodeSelection, false) {
			inert = false
		}
		for _, d := range s.Spec.Devices {
			if names[d.Name] {
				inert = false
			}
			names[d.Name] = true
		}
	}
	m.inert[p] = inert
	return inert
}
