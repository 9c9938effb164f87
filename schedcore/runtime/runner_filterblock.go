package runtime

import (
	"context"
	"fmt"
	"math/bits"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
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
func (f *Framework) runFiltersListed(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, list []*schedcore.NodeInfo, gens []int64, ps []int, out []*schedcore.Status) (uint64, *schedcore.Status) {
	n := len(ps)
	// Nodes at consecutive positions (all but a block where the pass
	// wraps around the list) have their remembered passes read in one
	// pass without branches on the nodes' order.
	p0, run := 0, []int64(nil)
	if n > 0 && ps[n-1]-ps[0] == n-1 {
		p0, run = ps[0], gens[ps[0]:ps[0]+n]
	}
	cr := peekRun(state)
	filters := cr.filters
	remembered, views, rejects := cr.remembered, cr.filterViews, cr.filterRejects
	if cr.filtersFor != f {
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
				pass, rej := v.VerdictsAt(p0, run)
				alive &^= rej
				rest = alive &^ pass
			} else if run != nil {
				rest &^= v.PassesAt(p0, run)
			}
			for a := rest; a != 0; a &= a - 1 {
				k := bits.TrailingZeros64(a)
				if val, ok := v.GetAt(ps[k], gens[ps[k]]); ok {
					if val == schedcore.VerdictPass {
						continue
					}
					// A remembered rejection: the plugin's shared
					// status, stamped, as Filter would return it.
					if s := rj.Status(val); s != nil {
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
					schedcore.RememberFilter(views[j], rejects[j], ps[k], gens[ps[k]], s, false)
				}
				continue
			}
			if !s.IsRejected() {
				return 0, schedcore.AsStatus(fmt.Errorf("running %q filter plugin: %w", pl.Name(), s.AsError())).WithPlugin(pl.Name())
			}
			shared := s.IsShared()
			s = s.WithPlugin(pl.Name())
			if memo {
				schedcore.RememberFilter(views[j], rejects[j], ps[k], gens[ps[k]], s, shared)
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
