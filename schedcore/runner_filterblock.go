package schedcore

import (
	"context"
	"fmt"
	"math/bits"

	v1 "k8s.io/api/core/v1"
)

// maxFilterBlock bounds the nodes runFiltersListed filters at once (one
// bit each in a word).
const maxFilterBlock = 64

// runFiltersListed is runFilters on a block of nodes of the snapshot's
// list: node k of the block is list[ps[k]], of generation gens[ps[k]]
// (gens is the list's column of generations). It runs
// the block plugin by plugin rather than node by node: the remembered
// verdicts of a plugin are read in one tight pass over its column, and
// Filter runs only on the nodes still passing whose verdict is not
// remembered. Each node still meets the filters in order and stops at the
// first that does not succeed, so its status is runFilters' own: out[k]
// is its rejection, and bit k of the returned mask is set when it passes
// every filter. Filter calls are independent of each other, so their
// order across nodes changes nothing.
//
// With out nil the rejections are not kept, only told apart from the
// passes (a pass that counts them: CycleState.DiagnoseFailuresOnly): a
// remembered rejection is then read with the remembered passes, in the
// same pass over the plugin's column, and its status is not loaded (but
// for a block that wraps around the list, whose nodes are read one by
// one).
//
// A status that is neither a success nor a rejection is returned at once
// (as an Error naming the plugin), the block left unfinished, as the
// caller stops the pass.
//
// The caller does not time plugins (state.RecordPluginMetrics is false):
// a timed cycle filters node by node.
func (f *Framework) runFiltersListed(ctx context.Context, state *CycleState, pod *v1.Pod, list []*NodeInfo, gens []int64, ps []int, out []*Status) (uint64, *Status) {
	n := len(ps)
	// Nodes at consecutive positions (all but a block where the pass
	// wraps around the list) have their remembered passes read in one
	// pass without branches on the nodes' order.
	p0, run := 0, []int64(nil)
	if n > 0 && ps[n-1]-ps[0] == n-1 {
		p0, run = ps[0], gens[ps[0]:ps[0]+n]
	}
	filters := state.filters
	remembered, views, rejects := state.remembered, state.filterViews, state.filterRejects
	if state.filtersFor != f {
		filters, remembered = f.activeFilters(state), nil
	}
	// alive has bit k set while node k has met no rejection.
	alive := ^uint64(0) >> (maxFilterBlock - n)
	if n == 0 {
		alive = 0
	}
	var todo [maxFilterBlock]uint8
	for j, pl := range filters {
		if alive == 0 {
			break
		}
		memo := j < len(remembered) && remembered[j]
		nt := 0
		if memo {
			v, rj := views[j], rejects[j]
			rest := alive
			if run != nil && out == nil {
				pass, rej := verdictsAt(v, p0, run)
				alive &^= rej
				rest = alive &^ pass
			} else if run != nil {
				rest &^= passesAt(v, p0, run)
			}
			for a := rest; a != 0; a &= a - 1 {
				k := bits.TrailingZeros64(a)
				if val, ok := v.getAt(ps[k], gens[ps[k]]); ok {
					if val == verdictPass {
						continue
					}
					// A remembered rejection: the plugin's shared
					// status, stamped, as Filter would return it.
					if s := rj.status(val); s != nil {
						if out != nil {
							out[k] = s
						}
						alive &^= 1 << k
						continue
					}
				}
				todo[nt] = uint8(k)
				nt++
			}
		} else {
			for a := alive; a != 0; a &= a - 1 {
				todo[nt] = uint8(bits.TrailingZeros64(a))
				nt++
			}
		}
		for _, k := range todo[:nt] {
			s := pl.Filter(ctx, state, pod, list[ps[k]])
			if s.IsSuccess() {
				if memo {
					rememberFilter(views[j], rejects[j], ps[k], gens[ps[k]], s, false)
				}
				continue
			}
			if !s.IsRejected() {
				return 0, AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
			}
			shared := s.shared
			s = s.WithPlugin(pl.Name())
			if memo {
				rememberFilter(views[j], rejects[j], ps[k], gens[ps[k]], s, shared)
			}
			if out != nil {
				out[k] = s
			}
			alive &^= 1 << k
		}
	}
	return alive, nil
}

// A block of the filter loop fits in runFiltersListed's words.
var _ [maxFilterBlock - filterBlock]struct{}

// passesAt returns the nodes at positions p0, p0+1, ... of generations
// gens whose remembered verdict in v is a pass: bit k for position p0+k
// (at most 64 positions).
//
// An entry remembering a pass for generation g is the one word
// (g-base)<<verdictValueBits | verdictPass (putAt): the positions' entries
// are compared with it, one load and one comparison each.
func passesAt(v VerdictView, p0 int, gens []int64) uint64 {
	if p0 < 0 || p0+len(gens) > len(v.entries) {
		var m uint64
		for k, g := range gens {
			if val, ok := v.getAt(p0+k, g); ok && val == verdictPass {
				m |= 1 << k
			}
		}
		return m
	}
	var m uint64
	es, base := v.entries[p0:p0+len(gens)], v.base
	for k, g := range gens {
		off := g - base
		if off > 0 && off < verdictSpan && es[k].Load() == uint32(off)<<verdictValueBits|uint32(verdictPass) {
			m |= 1 << k
		}
	}
	return m
}

// verdictsAt is passesAt with the remembered rejections: rej has bit k set
// when position p0+k remembers, for generation gens[k], one of the
// plugin's rejections (a value a rejectTable gave: its slot holds the
// status for good).
//
// An entry of generation g holds (g-base)<<verdictValueBits | value:
// less the word it would be for value 0, it leaves the value, and any
// entry of another generation leaves a number past the values.
func verdictsAt(v VerdictView, p0 int, gens []int64) (pass, rej uint64) {
	if p0 < 0 || p0+len(gens) > len(v.entries) {
		for k, g := range gens {
			if val, ok := v.getAt(p0+k, g); ok {
				if val == verdictPass {
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
		if d := es[k].Load() - uint32(off)<<verdictValueBits; d == uint32(verdictPass) {
			pass |= 1 << k
		} else if isRejection(d) {
			rej |= 1 << k
		}
	}
	return pass, rej
}

// isRejection reports whether val is one of a rejectTable's values.
func isRejection(val uint32) bool {
	return val-uint32(verdictFirstReject) < maxRememberedRejections
}
