package noderesources

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	resourcehelper "k8s.io/component-helpers/resource"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// balancedAllocationPreScoreStateKey holds the pod's requests between
// PreScore and Score.
const balancedAllocationPreScoreStateKey schedcore.StateKey = "PreScore" + names.NodeResourcesBalancedAllocation

// BalancedAllocation favors nodes whose resource usage stays balanced across
// the configured resources once the pod is placed, compared with before.
type BalancedAllocation struct {
	scorer *resourceAllocationScorer
}

var (
	_ schedcore.PreScorePlugin  = (*BalancedAllocation)(nil)
	_ schedcore.ScorePlugin     = (*BalancedAllocation)(nil)
	_ schedcore.NodeLocalScorer = (*BalancedAllocation)(nil)
)

// NewBalancedAllocation builds the plugin from NodeResourcesBalancedAllocationArgs
// (nil means the defaults: cpu and memory). Unlike NodeResourcesFit's
// scoring it uses the plain requests, of the pod and of the node, and honours
// the pod-level resources and in-place resize gates for the incoming pod.
func NewBalancedAllocation(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	args, err := balancedAllocationArgs(obj)
	if err != nil {
		return nil, err
	}
	f := features(h)
	scorer := newScorer(balancedAllocation, args.Resources, true, resourcehelper.PodResourcesOptions{
		UseStatusResources: f.InPlacePodVerticalScaling,
		InPlacePodLevelResourcesVerticalScalingEnabled: f.InPlacePodLevelResourcesVerticalScaling,
		SkipPodLevelResources:                          !f.PodLevelResources,
	})
	scorer.dra = newDRAScoring(h)
	return &BalancedAllocation{scorer: scorer}, nil
}

// Name returns NodeResourcesBalancedAllocation.
func (ba *BalancedAllocation) Name() string { return names.NodeResourcesBalancedAllocation }

type balancedAllocationPreScoreState struct {
	// podRequests are in the order of the configured resources.
	podRequests []int64
	// dra is the devices of the classes backing the DRA extended
	// resources the pod requests, nil when it requests none.
	dra *draTotals
}

// Clone shares the state: it is never modified after PreScore.
func (s *balancedAllocationPreScoreState) Clone() schedcore.StateData { return s }

// PreScore computes the pod's requests once. A pod that requests none of
// the resources is skipped (kubernetes#129138: scoring best-effort pods by
// balance would pile them onto one node).
func (ba *BalancedAllocation) PreScore(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodes []*schedcore.NodeInfo) *schedcore.Status {
	reqs := ba.scorer.podRequests(pod)
	if isBestEffort(reqs) {
		return schedcore.Skipped()
	}
	state.Write(balancedAllocationPreScoreStateKey, &balancedAllocationPreScoreState{podRequests: reqs, dra: ba.scorer.draTotals(ctx, reqs, nodes)})
	return nil
}

// Score is kube v1.37's balance score: see balancedResourceScorer. Without
// PreScore state the requests are computed here (a best-effort pod scores 0).
func (ba *BalancedAllocation) Score(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	s, ok := schedcore.Lookup[*balancedAllocationPreScoreState](state, balancedAllocationPreScoreStateKey)
	if !ok {
		reqs := ba.scorer.podRequests(pod)
		if isBestEffort(reqs) {
			return 0, nil
		}
		s = &balancedAllocationPreScoreState{podRequests: reqs, dra: ba.scorer.draTotals(ctx, reqs, []*schedcore.NodeInfo{nodeInfo})}
	}
	return ba.scorer.nodeScore(nodeInfo, s.podRequests, s.dra)
}

// balancedResourceScorer scores the change in balance, as kube v1.37 does:
// with b(x) = (1 - std of the usage fractions) * MaxNodeScore, both with the
// pod (requested) and without it (allocated), each in [50, 100], the score is
// 50 + (50 + with - without)/2: about 75 when the pod changes little, towards
// 100 when it improves the balance, towards 50 when it worsens it.
func balancedResourceScorer(requested, allocated, allocatable []int64) int64 {
	with := balancedResourceScore(requested, allocatable)
	without := balancedResourceScore(allocated, allocatable)
	return schedcore.MaxNodeScore/2 + (schedcore.MaxNodeScore/2+with-without)/2
}

// balancedResourceScore is (1 - std) * MaxNodeScore over the fractions
// requested/allocatable (capped at 1) of the resources the node has; with two
// resources std is |f0-f1|/2, with more the population standard deviation,
// with fewer 0. The float operations are kube's, in kube's order.
func balancedResourceScore(requested, allocatable []int64) int64 {
	var buf [maxStackResources]float64
	fractions := buf[:0]
	var total float64
	for i := range requested {
		if allocatable[i] == 0 {
			continue
		}
		f := float64(requested[i]) / float64(allocatable[i])
		if f > 1 {
			f = 1
		}
		total += f
		fractions = append(fractions, f)
	}
	std := 0.0
	if len(fractions) == 2 {
		std = math.Abs((fractions[0] - fractions[1]) / 2)
	} else if len(fractions) > 2 {
		mean := total / float64(len(fractions))
		var sum float64
		for _, f := range fractions {
			sum += (f - mean) * (f - mean)
		}
		std = math.Sqrt(sum / float64(len(fractions)))
	}
	return int64((1 - std) * float64(schedcore.MaxNodeScore))
}

// ScoreKey is the pod's requests: with the resources, fixed for the plugin,
// they and the node's resources are all Score reads.
func (ba *BalancedAllocation) ScoreKey(state *schedcore.CycleState, _ *v1.Pod, k *schedcore.MemoKey) bool {
	s, ok := schedcore.Lookup[*balancedAllocationPreScoreState](state, balancedAllocationPreScoreStateKey)
	if !ok {
		return false
	}
	requestsKey(k, s.podRequests)
	s.dra.key(k)
	return true
}
