package runtime

import (
	"context"
	"math/bits"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// filterScratch is findNodesThatPassFilters' per-node verdicts, reused
// across cycles (several cycles may run at once: each takes its own).
type filterScratch struct {
	statuses []*schedcore.Status
	passed   []bool
	// written is how many of statuses and passed a pass may have set
	// (the nodes its windows covered): a counting pass sets none.
	written int
	// passBits holds a counting pass's verdicts, one word per block of
	// the window (bit k: the block's k-th node passed).
	passBits []uint64
	pass     filterPass
}

// filterPass is one findNodesThatPassFilters pass's inputs and first
// error, read by the window's blocks (block), which may run in parallel.
type filterPass struct {
	ctx      context.Context
	fw       *Framework
	state    *schedcore.CycleState
	pod      *v1.Pod
	nodes    []*schedcore.NodeInfo
	snap     *schedcore.Snapshot
	byPos    bool
	startIdx int
	statuses []*schedcore.Status
	passed   []bool
	// count is set for a pass that counts the rejected nodes rather than
	// keeping their statuses (CycleState.DiagnoseFailuresOnly): the
	// blocks' verdicts go to passBits, not to statuses and passed.
	count    bool
	passBits []uint64
	// base and window are the current window's first index and length.
	base, window int
	// sampled is set when the pass looks for fewer nodes than it has
	// (percentageOfNodesToScore): its windows run on the calling
	// goroutine (runWindow).
	sampled bool
	// The first error stops the pass: the blocks not started yet return
	// at once (a flag, not a context of its own: making and cancelling one
	// cost each cycle more than the flag, as in RunScorePlugins).
	errOnce  sync.Once
	firstErr error
	failed   atomic.Bool
}

// block filters the window's block blk: its verdicts go to the block's own
// slots of statuses and passed, or, in a counting pass, to its word of
// passBits.
func (p *filterPass) block(blk int) {
	if p.failed.Load() {
		return
	}
	numAll := len(p.nodes)
	lo, end := p.base+blk*filterBlock, p.base+min(p.window, (blk+1)*filterBlock)
	if p.byPos {
		// The block plugin by plugin (runFiltersListed).
		var ps [filterBlock]int
		for i := lo; i < end; i++ {
			q := p.startIdx + i
			if q >= numAll {
				q -= numAll
			}
			ps[i-lo] = q
		}
		if p.count {
			alive, s := p.fw.runFiltersListed(p.ctx, p.state, p.pod, p.nodes, p.snap.ListedGenerations(), ps[:end-lo], nil)
			if s != nil {
				p.fail(s)
			}
			p.passBits[blk] = alive
			return
		}
		alive, s := p.fw.runFiltersListed(p.ctx, p.state, p.pod, p.nodes, p.snap.ListedGenerations(), ps[:end-lo], p.statuses[lo:end])
		if s != nil {
			p.fail(s)
			return
		}
		for a := alive; a != 0; a &= a - 1 {
			p.passed[lo+bits.TrailingZeros64(a)] = true
		}
		return
	}
	for i := lo; i < end; i++ {
		q := p.startIdx + i
		if q >= numAll {
			q -= numAll
		}
		s := p.fw.RunFilterPluginsWithNominatedPods(p.ctx, p.state, p.pod, p.nodes[q])
		if s.Code() == schedcore.Error {
			p.fail(s)
			return
		}
		if s.IsSuccess() {
			p.passed[i] = true
		} else {
			p.statuses[i] = s
		}
	}
}

// fail records the pass's first error.
func (p *filterPass) fail(s *schedcore.Status) {
	p.errOnce.Do(func() { p.firstErr = s.AsError(); p.failed.Store(true) })
}

var filterScratchPool sync.Pool

// getFilterScratch returns cleared verdicts for n nodes.
func getFilterScratch(n int) *filterScratch {
	s, _ := filterScratchPool.Get().(*filterScratch)
	blocks := (n + filterBlock - 1) / filterBlock
	if s == nil || cap(s.statuses) < n {
		return &filterScratch{statuses: make([]*schedcore.Status, n), passed: make([]bool, n), passBits: make([]uint64, blocks)}
	}
	s.statuses, s.passed = s.statuses[:n], s.passed[:n]
	if cap(s.passBits) < blocks {
		s.passBits = make([]uint64, blocks)
	}
	s.passBits = s.passBits[:blocks]
	return s
}

// putFilterScratch clears what a pass wrote of s (its statuses must not
// keep rejections alive) and keeps it for the next cycle. passBits need
// no clearing: a counting pass sets a window's words before reading them.
func putFilterScratch(s *filterScratch) {
	w := min(s.written, len(s.statuses))
	clear(s.statuses[:w])
	clear(s.passed[:w])
	s.written = 0
	s.pass = filterPass{}
	filterScratchPool.Put(s)
}
