package gpushare

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ExplainFilter says, from the GPU state Filter read, what the node lacks:
// no GPUs or another model (shortfall 1: freeing the node cannot help),
// else the free thousandths of its best GPU against the share ("needs a
// GPU with 600m free; the freest has 540m"), or its fully free GPUs
// against the count, with every GPU's free thousandths as details. The
// shortfall is the missing share of the request.
func (pl *GpuShare) ExplainFilter(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	s, st := readState(state)
	if st != nil || !s.req.IsGPU() {
		return nil
	}
	g := s.NodeGPUs(ni)
	r := s.req
	switch {
	case g.Count() == 0:
		return schedcore.NewFilterExplanation(1, fmt.Sprintf("node has no GPUs (allocatable %s is 0)", pl.resource))
	case !r.AcceptsModel(g.Model):
		model := g.Model
		if model == "" {
			model = "of no model (no " + pl.modelLabel + " label)"
		}
		return schedcore.NewFilterExplanation(1, fmt.Sprintf("node's GPUs are %s; the pod accepts %s", model, strings.Join(r.Models, ", ")))
	case g.Fits(r):
		return nil
	}
	var details []string
	for i, f := range g.Free {
		details = append(details, fmt.Sprintf("GPU %d: %dm free", i, f))
	}
	if r.Count == 1 {
		best := g.WorstFit(0)
		ex := schedcore.NewFilterExplanation(schedcore.ShortfallOf(r.Milli-g.Free[best], r.Milli),
			fmt.Sprintf("needs a GPU with %dm free; the freest has %dm (GPU %d)", r.Milli, g.Free[best], best))
		ex.Gaps[0].Details = details
		return ex
	}
	free := g.FullyFree()
	ex := schedcore.NewFilterExplanation(schedcore.ShortfallOf(int64(r.Count-free), int64(r.Count)),
		fmt.Sprintf("needs %d fully free GPUs; the node has %d of %d", r.Count, free, g.Count()))
	ex.Gaps[0].Details = details
	return ex
}
