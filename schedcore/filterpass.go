package schedcore

import (
	"context"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
)

// filterScratch is findNodesThatPassFilters' per-node verdicts, reused
// across cycles (several cycles may run at once: each takes its own).
type filterScratch struct {
	statuses []*Status
	passed   []bool
	pass     filterPass
}

// filterPass is one findNodesThatPassFilters pass's inputs and first
// error, read by the window's blocks (block), which may run in parallel.
type filterPass struct {
	ctx      context.Context
	fw       *Framework
	state    *CycleState
	pod      *v1.Pod
	nodes    []*NodeInfo
	snap     *Snapshot
	byPos    bool
	startIdx int
	statuses []*Status
	passed   []bool
	// base and window are the current window's first index and length.
	base, window int
	// The first error stops the pass: the blocks not started yet return
	// at once (a flag, not a context of its own: making and cancelling one
	// cost each cycle more than the flag, as in RunScorePlugins).
	errOnce  sync.Once
	firstErr error
	failed   atomic.Bool
}

// block filters the window's block blk: its verdicts go to the block's own
// slots of statuses and passed.
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
		if s := p.fw.runFiltersListed(p.ctx, p.state, p.pod, p.nodes, p.snap.listGens, ps[:end-lo], p.statuses[lo:end], p.passed[lo:end]); s != nil {
			p.fail(s)
		}
		return
	}
	for i := lo; i < end; i++ {
		q := p.startIdx + i
		if q >= numAll {
			q -= numAll
		}
		s := p.fw.RunFilterPluginsWithNominatedPods(p.ctx, p.state, p.pod, p.nodes[q])
		if s.Code() == Error {
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
func (p *filterPass) fail(s *Status) {
	p.errOnce.Do(func() { p.firstErr = s.AsError(); p.failed.Store(true) })
}

var filterScratchPool sync.Pool

// getFilterScratch returns cleared verdicts for n nodes.
func getFilterScratch(n int) *filterScratch {
	s, _ := filterScratchPool.Get().(*filterScratch)
	if s == nil || cap(s.statuses) < n {
		return &filterScratch{statuses: make([]*Status, n), passed: make([]bool, n)}
	}
	s.statuses, s.passed = s.statuses[:n], s.passed[:n]
	return s
}

// putFilterScratch clears s (its statuses must not keep rejections alive)
// and keeps it for the next cycle.
func putFilterScratch(s *filterScratch) {
	clear(s.statuses)
	clear(s.passed)
	s.pass = filterPass{}
	filterScratchPool.Put(s)
}
