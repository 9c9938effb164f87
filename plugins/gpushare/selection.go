package gpushare

import (
	"fmt"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// selectGPUs applies the configured selection on a node that fits r.
func (pl *GpuShare) selectGPUs(r Request, g *NodeGPUs, cpuLeft int64) ([]int, error) {
	switch pl.selection {
	case SelectBest:
		return bestFit(g, r), nil
	case SelectWorst:
		if r.Milli < MilliPerGPU {
			if i := g.WorstFit(r.Milli); i >= 0 {
				return []int{i}, nil
			}
			return nil, nil
		}
		return g.Exclusive(r.Count), nil
	case SelectRandom:
		if r.Milli < MilliPerGPU {
			c, n := -1, 0
			for i, f := range g.Free {
				if f >= r.Milli {
					if n++; pl.h.Rand().Intn(n) == 0 {
						c = i
					}
				}
			}
			if c < 0 {
				return nil, nil
			}
			return []int{c}, nil
		}
		return g.Exclusive(r.Count), nil
	}
	sel, err := pl.gpuSelector()
	if err != nil {
		return nil, err
	}
	return sel.SelectGPUs(r, g, cpuLeft), nil
}

// gpuSelector finds the score plugin gpuSelection names, once.
func (pl *GpuShare) gpuSelector() (GPUSelector, error) {
	pl.selectorOnce.Do(func() {
		fw := pl.h.Framework()
		var p schedcore.Plugin
		ok := false
		if fw != nil {
			p, ok = fw.Plugin(pl.selection)
		}
		if !ok {
			pl.selectorErr = fmt.Errorf("gpuSelection: %q is neither best, worst, random nor a plugin enabled in the profile", pl.selection)
			return
		}
		if pl.selector, ok = p.(GPUSelector); !ok {
			pl.selectorErr = fmt.Errorf("gpuSelection: plugin %q does not select GPUs", pl.selection)
		}
	})
	return pl.selector, pl.selectorErr
}
