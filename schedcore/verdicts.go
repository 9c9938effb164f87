package schedcore

import (
	"sync/atomic"
)

// The values a filter memo (the runtime's Framework.filterMemo) holds for a node: a pass,
// or one of the plugin's remembered rejections (RejectTable).
const (
	VerdictPass uint16 = 1
	// VerdictFirstReject is the value of a plugin's first remembered
	// rejection; the k-th is VerdictFirstReject+k.
	VerdictFirstReject uint16 = 2
)

// getAt returns the value remembered at list position i for the node of
// generation gen: Get for a node known by its position and generation
// (the snapshot's columns) rather than by its NodeInfo.
func (v VerdictView) getAt(i int, gen int64) (uint16, bool) {
	off := gen - v.base
	if i < 0 || i >= len(v.entries) || off <= 0 || off >= verdictSpan {
		return 0, false
	}
	e := v.entries[i].Load()
	if e>>verdictValueBits != uint32(off) {
		return 0, false
	}
	return uint16(e & maxVerdictValue), true
}

// GetAt is Get for the node at list position pos (0-based) with
// generation gen, as the runtime's loops over the snapshot's list know
// it: the NodeInfo is not read.
func (v VerdictView) GetAt(pos int, gen int64) (uint16, bool) { return v.getAt(pos, gen) }

// PutAt is Put for the node at list position pos with generation gen.
func (v VerdictView) PutAt(pos int, gen int64, val uint16) { v.putAt(pos, gen, val) }

// putAt is Put for the node of generation gen at list position i.
func (v VerdictView) putAt(i int, gen int64, val uint16) {
	off := gen - v.base
	if i < 0 || i >= len(v.entries) || off <= 0 || off >= verdictSpan || val > maxVerdictValue {
		return
	}
	v.entries[i].Store(uint32(off)<<verdictValueBits | uint32(val))
}

// MaxRememberedRejections bounds the distinct rejections a filter memo
// remembers per plugin.
const MaxRememberedRejections = 8

// RejectTable holds the distinct rejections of one NodeLocalFilter that
// its memo remembers: statuses made with NewSharedStatus (the same for
// every node and every call, stamped with the plugin's name), each under
// a small value. Filter and the memo's readers use it from parallel
// goroutines: slots are filled once, atomically, and never change.
type RejectTable struct {
	slots [MaxRememberedRejections]atomic.Pointer[Status]
}

// value returns the value remembering s, a stamped copy of a shared
// status, adding it if there is room; false when s cannot be remembered.
func (t *RejectTable) value(s *Status) (uint16, bool) {
	for k := range t.slots {
		p := t.slots[k].Load()
		if p == nil {
			if t.slots[k].CompareAndSwap(nil, s) {
				return VerdictFirstReject + uint16(k), true
			}
			p = t.slots[k].Load()
		}
		if p == s || sameRejection(p, s) {
			return VerdictFirstReject + uint16(k), true
		}
	}
	return 0, false
}

// RememberFilter remembers, in v at node position pos and generation
// gen, the status s a NodeLocalFilter's Filter gave there: a pass, or a
// rejection that was shared (shared is s's flag before it was stamped
// with the plugin's name). Any other rejection is not remembered: it may
// differ from node to node, or be changed by its reader.
func RememberFilter(v VerdictView, rejects *RejectTable, pos int, gen int64, s *Status, shared bool) {
	if s.IsSuccess() {
		v.putAt(pos, gen, VerdictPass)
		return
	}
	if shared {
		if val, ok := rejects.value(s); ok {
			v.putAt(pos, gen, val)
		}
	}
}

// Status returns the rejection remembered under v (nil if none).
func (t *RejectTable) Status(v uint16) *Status {
	k := int(v) - int(VerdictFirstReject)
	if k < 0 || k >= len(t.slots) {
		return nil
	}
	return t.slots[k].Load()
}

// sameRejection reports whether two rejections say the same thing: code,
// plugin, reasons, no error, the same group mark.
func sameRejection(a, b *Status) bool {
	return a.Equal(b) && a.err == nil && b.err == nil && a.forGroup == b.forGroup
}

// sameList reports whether a and b are the same slice (not only equal).
func sameList(a, b []*NodeInfo) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// PassesAt returns the nodes at positions p0, p0+1, ... of generations
// gens whose remembered verdict in v is a pass: bit k for position p0+k
// (at most 64 positions).
//
// An entry remembering a pass for generation g is the one word
// (g-base)<<verdictValueBits | VerdictPass (putAt): the positions' entries
// are compared with it, one load and one comparison each.
func (v VerdictView) PassesAt(p0 int, gens []int64) uint64 {
	if p0 < 0 || p0+len(gens) > len(v.entries) {
		var m uint64
		for k, g := range gens {
			if val, ok := v.getAt(p0+k, g); ok && val == VerdictPass {
				m |= 1 << k
			}
		}
		return m
	}
	var m uint64
	es, base := v.entries[p0:p0+len(gens)], v.base
	for k, g := range gens {
		off := g - base
		if off > 0 && off < verdictSpan && es[k].Load() == uint32(off)<<verdictValueBits|uint32(VerdictPass) {
			m |= 1 << k
		}
	}
	return m
}

// VerdictsAt is PassesAt with the remembered rejections: rej has bit k set
// when position p0+k remembers, for generation gens[k], one of the
// plugin's rejections (a value a rejectTable gave: its slot holds the
// status for good).
//
// An entry of generation g holds (g-base)<<verdictValueBits | value:
// less the word it would be for value 0, it leaves the value, and any
// entry of another generation leaves a number past the values.
func (v VerdictView) VerdictsAt(p0 int, gens []int64) (pass, rej uint64) {
	if p0 < 0 || p0+len(gens) > len(v.entries) {
		for k, g := range gens {
			if val, ok := v.getAt(p0+k, g); ok {
				if val == VerdictPass {
					pass |= 1 << k
				} else if isRejection(uint32(val)) {
					rej |= 1 << k
				}
			}
		}
		return pass, rej
	}
	es, base := v.entries[p0:p0+len(gens)], v.base
	for k, g := range gens {
		off := g - base
		if off <= 0 || off >= verdictSpan {
			continue
		}
		if d := es[k].Load() - uint32(off)<<verdictValueBits; d == uint32(VerdictPass) {
			pass |= 1 << k
		} else if isRejection(d) {
			rej |= 1 << k
		}
	}
	return pass, rej
}

// isRejection reports whether val is one of a rejectTable's values.
func isRejection(val uint32) bool {
	return val-uint32(VerdictFirstReject) < MaxRememberedRejections
}
