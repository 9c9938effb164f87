package gpushare

import (
	"math/bits"
	"sort"
)

// NodeGPUs is one node's GPUs as GpuShare accounts them: the model and the
// free thousandths of each device, by device index. A value is immutable
// once built (a new one replaces it when the node changes), so the parallel
// Filter and Score loops read it without locks.
type NodeGPUs struct {
	// Model is the node's GPU model label ("" when unlabelled).
	Model string
	// Free is each GPU's free thousandths, 0..1000, by device index. Its
	// length is the node's GPU count.
	Free []int64
	// Tags records which kinds of GPU pods the node holds, as the
	// artifact's GpuClustering reads them: bit 0 a GPU-sharing pod, bit k
	// (1..31) a pod with k whole GPUs.
	Tags uint32
}

// tagOf is the Tags bit of a request (0 for a pod without GPUs).
func tagOf(r Request) uint32 {
	switch {
	case !r.IsGPU():
		return 0
	case r.Shared():
		return 1
	case r.Count < 32:
		return 1 << uint(r.Count)
	default:
		return 1 << 31
	}
}

// NumTags is the number of distinct kinds of GPU pods on the node.
func (g *NodeGPUs) NumTags() int { return bits.OnesCount32(g.Tags) }

// HasTag reports whether the node holds a pod of r's kind.
func (g *NodeGPUs) HasTag(r Request) bool { return g.Tags&tagOf(r) != 0 }

// Count is the number of GPUs.
func (g *NodeGPUs) Count() int { return len(g.Free) }

// TotalFree is the free thousandths over all GPUs.
func (g *NodeGPUs) TotalFree() int64 {
	var t int64
	for _, f := range g.Free {
		t += f
	}
	return t
}

// FullyFree counts the GPUs with all their thousandths free.
func (g *NodeGPUs) FullyFree() int {
	n := 0
	for _, f := range g.Free {
		if f == MilliPerGPU {
			n++
		}
	}
	return n
}

// Fits reports whether the GPUs can hold r, as the artifact's GpuShare
// Filter decides: a one-GPU request needs a GPU with r.Milli free; a
// multi-GPU request (whole GPUs) needs r.Count fully free GPUs.
func (g *NodeGPUs) Fits(r Request) bool {
	if !r.IsGPU() {
		return true
	}
	if r.Count == 1 {
		for _, f := range g.Free {
			if f >= r.Milli {
				return true
			}
		}
		return false
	}
	return g.FullyFree() >= r.Count
}

// BestFit returns the GPU a one-GPU request takes by best fit: the one with
// the least free thousandths that still holds it, the lowest index among
// equals; -1 when none holds it.
func (g *NodeGPUs) BestFit(milli int64) int {
	c := -1
	for i, f := range g.Free {
		if f >= milli && (c == -1 || f < g.Free[c]) {
			c = i
		}
	}
	return c
}

// WorstFit returns the GPU with the most free thousandths that holds the
// request, the lowest index among equals; -1 when none.
func (g *NodeGPUs) WorstFit(milli int64) int {
	c := -1
	for i, f := range g.Free {
		if f >= milli && (c == -1 || f > g.Free[c]) {
			c = i
		}
	}
	return c
}

// Exclusive returns the first n fully free GPUs by index (the artifact's
// AllocateExclusiveGpuId), or nil when there are fewer.
func (g *NodeGPUs) Exclusive(n int) []int {
	out := make([]int, 0, n)
	for i, f := range g.Free {
		if len(out) == n {
			break
		}
		if f == MilliPerGPU {
			out = append(out, i)
		}
	}
	if len(out) < n {
		return nil
	}
	return out
}

// Take returns a copy with r placed on the GPUs ids.
func (g *NodeGPUs) Take(r Request, ids []int) *NodeGPUs {
	c := &NodeGPUs{Model: g.Model, Free: append([]int64(nil), g.Free...), Tags: g.Tags | tagOf(r)}
	for _, i := range ids {
		c.Free[i] -= r.Milli
	}
	return c
}

// ascending returns the device indexes by free thousandths, smallest first,
// keeping index order among equals (the artifact's
// SortedMilliGpuLeftIndexList(true)).
func ascending(free []int64) []int {
	idx := make([]int, len(free))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return free[idx[a]] < free[idx[b]] })
	return idx
}

// packInto subtracts r from free in place the way the artifact's
// NodeResource.Sub does (GPUs by free thousandths, smallest first, each
// that holds r.Milli takes one share) and reports whether all r.Count
// shares found a GPU. FGD scores whole-GPU pods on this state.
func packInto(free []int64, r Request) bool {
	need := r.Count
	if need == 0 {
		return true
	}
	for _, i := range ascending(free) {
		if r.Milli <= free[i] {
			free[i] -= r.Milli
			if need--; need == 0 {
				return true
			}
		}
	}
	return false
}
