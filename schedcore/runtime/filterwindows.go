package runtime

import (
	"math/bits"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// nextWindowSize is the length of the window of a pass that starts at
// offset off, having found found of the toFind nodes it looks for: the
// rest of the nodes, or, when it samples, as many as nextWindow says (at
// least 64).
func (p *filterPass) nextWindowSize(toFind, off, found int) int {
	numAll := len(p.nodes)
	window := numAll - off
	if toFind < numAll {
		window = min(window, max(nextWindow(toFind-found, off, found), 64))
	}
	return window
}

// runWindow filters the window of window nodes at offset base, block by
// block: in parallel when it has enough blocks (minParallelFilterBlocks)
// and the pass goes through every node.
//
// A sampled pass's windows run on the calling goroutine up to
// minParallelSampledBlocks blocks, also the long ones of a pass through
// mostly failing nodes (a pod that fits a tenth of them filters
// thousands): on 2 CPUs, sampled Mixed/5000Nodes runs took about 5% less
// CPU so (in turns, 2026-12-05, load 7), the wake-up of the other worker
// for each window, its search for work after it and its reading the
// verdicts and nodes into its own cache costing more than the work it
// took over. The windows of a sampled pass in a cluster of tens of
// thousands of nodes (5000 nodes, 5% of 100,000) are worth a parallel
// step, and a pass that looks for every node (every node scored,
// Explain) filters its one window, the whole list, in parallel.
func (p *filterPass) runWindow(base, window int) {
	p.base, p.window = base, window
	// The window's nodes are handed out in blocks of filterBlock, so
	// that a worker's per-node overhead is a loop step, not a call.
	blocks := (window + filterBlock - 1) / filterBlock
	if p.count {
		// A block that does not run (the context is done) passes none.
		clear(p.passBits[:blocks])
	}
	if blocks < minParallelFilterBlocks || (p.sampled && blocks < minParallelSampledBlocks) {
		// What UntilAtLeast does below its threshold, without making
		// the method value it would be handed.
		for blk := 0; blk < blocks && p.ctx.Err() == nil; blk++ {
			p.block(blk)
		}
		return
	}
	p.fw.handle.Parallelizer().UntilAtLeast(p.ctx, blocks, minParallelFilterBlocks, p.block)
}

// listPos is the list position of the pass's i-th node (from startIdx,
// around the list).
func (p *filterPass) listPos(i int) int {
	q := p.startIdx + i
	if q >= len(p.nodes) {
		q -= len(p.nodes)
	}
	return q
}

// recordWindows filters the nodes in windows until it has found toFind
// feasible ones (appended to feasible, their list positions to pos when
// the pass goes by position) or filtered every node, recording each
// rejected node's status in diag as kube does. It returns the feasible
// nodes and how many nodes it processed (found feasible or rejected).
func (p *filterPass) recordWindows(toFind int, feasible []*schedcore.NodeInfo, pos *[]int32, diag *schedcore.Diagnosis) ([]*schedcore.NodeInfo, int) {
	numAll := len(p.nodes)
	statuses, passed := p.statuses, p.passed
	processed := 0
	// The nodes are distinct: with no status set before this pass (the
	// nominated node's), none is set twice.
	fresh := diag.NodeToStatus.Len() == 0
	// The (plugin, code) pairs of the rejections recorded so far.
	var seen [8]struct {
		plugin string
		code   schedcore.Code
	}
	numSeen := 0
	var lastSeen *schedcore.Status
	for off := 0; off < numAll && len(feasible) < toFind && p.firstErr == nil; {
		base, window := off, p.nextWindowSize(toFind, off, len(feasible))
		p.sampled = toFind < numAll
		p.runWindow(base, window)
		rejected := 0
		for i := base; i < base+window; i++ {
			if statuses[i] != nil {
				rejected++
			}
		}
		// Room for this window's rejections, and as much again as the
		// earlier windows' when there were some: the windows of a sampled
		// pass then copy the list a few times, not once each.
		diag.NodeToStatus.Grow(rejected + diag.NodeToStatus.Len())
		for i := base; i < base+window; i++ {
			if len(feasible) >= toFind {
				break
			}
			q := p.listPos(i)
			if passed[i] {
				feasible = append(feasible, p.nodes[q])
				if p.byPos {
					*pos = append(*pos, int32(q))
				}
				processed++
			} else if s := statuses[i]; s != nil {
				var name string
				if p.byPos {
					name = p.snap.ListedNames()[q]
				} else {
					name = p.nodes[q].Name()
				}
				if fresh {
					diag.NodeToStatus.SetNew(name, s)
				} else {
					diag.NodeToStatus.Set(name, s)
				}
				// What AddPluginStatus records depends on the plugin and
				// the code alone: once per distinct pair is enough. A
				// remembered rejection is the same status node after
				// node: the last one recorded is checked first.
				if s == lastSeen {
					processed++
					continue
				}
				lastSeen = s
				plugin, code, known := s.Plugin(), s.Code(), false
				for k := range numSeen {
					if seen[k].plugin == plugin && seen[k].code == code {
						known = true
						break
					}
				}
				if !known {
					if numSeen < len(seen) {
						seen[numSeen].plugin, seen[numSeen].code = plugin, code
						numSeen++
					}
					diag.AddPluginStatus(s)
				}
				processed++
			}
		}
		off += window
	}
	return feasible, processed
}

// countWindows is recordWindows for a pass by position that counts the
// rejected nodes (filterPass.count): it returns the feasible nodes and
// how many nodes were rejected before the last one needed, as many as
// recordWindows would record, when the pass found some node and stopped
// on no error. (Otherwise its count means nothing: the caller filters
// again, recording.)
//
// A block's nodes are each either feasible or rejected, so the word of
// its passes tells both: the rejected nodes among the first j of a block
// are j less the passes among them.
func (p *filterPass) countWindows(toFind int, feasible []*schedcore.NodeInfo, pos *[]int32) ([]*schedcore.NodeInfo, int) {
	numAll := len(p.nodes)
	rejected := 0
	for off := 0; off < numAll && len(feasible) < toFind && p.firstErr == nil; {
		base, window := off, p.nextWindowSize(toFind, off, len(feasible))
		p.sampled = toFind < numAll
		p.runWindow(base, window)
		for blk := 0; blk*filterBlock < window && len(feasible) < toFind; blk++ {
			lo := base + blk*filterBlock
			n := min(filterBlock, window-blk*filterBlock)
			m := p.passBits[blk]
			if need := toFind - len(feasible); bits.OnesCount64(m) >= need {
				// The block holds the last node needed: the nodes after
				// it are not processed.
				for range need - 1 {
					m &= m - 1
				}
				n = bits.TrailingZeros64(m) + 1
				m = p.passBits[blk] & (1<<n - 1)
			}
			rejected += n - bits.OnesCount64(m)
			for ; m != 0; m &= m - 1 {
				q := p.listPos(lo + bits.TrailingZeros64(m))
				feasible = append(feasible, p.nodes[q])
				*pos = append(*pos, int32(q))
			}
		}
		off += window
	}
	return feasible, rejected
}
