package engine

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// Placement is a pod ("namespace/name") bound to a node.
type Placement struct {
	Pod, Node string
}

// CommitPlacements returns a copy of the cluster in which the given pods
// are bound to their nodes, in order, as the scheduler commits them: each
// pod's cycle runs on its node alone (PreFilter, Filter), then Reserve and
// PreBind, so that its ResourceClaims get their allocation and
// reservation (and template claims exist, see CreateTemplateClaims). It
// rebuilds a recorded state: kube's placements replayed on the snapshot
// they were made on. Without DRA objects the pods are only bound (what
// the cache accounts is the same). The given cluster is not modified.
func CommitPlacements(ctx context.Context, cl *snapshot.Cluster, o Options, placements []Placement) (*snapshot.Cluster, error) {
	work := *cl
	work.Pods = make([]*v1.Pod, len(cl.Pods))
	for i, p := range cl.Pods {
		work.Pods[i] = p.DeepCopy()
	}
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	cache := schedcore.NewCache(o.Features)
	snap := schedcore.NewEmptySnapshot()
	dra := schedcore.NewDRAManager()
	dra.SetDeviceTaintRules(o.Features.DRADeviceTaints && o.Features.DRADeviceTaintRules)
	byKey := map[string]int{}
	writer := &MemoryClaimWriter{DRA: dra, OnPodStatus: func(pod *v1.Pod, st *v1.PodExtendedResourceClaimStatus) {
		if i, ok := byKey[schedcore.PodName(pod)]; ok {
			work.Pods[i].Status.ExtendedResourceClaimStatus = st.DeepCopy()
		}
	}}
	profiles, err := BuildProfiles(ctx, o, snap, Driver{DRA: dra, ClaimWriter: writer})
	if err != nil {
		return nil, err
	}
	FillDRA(dra, &work)
	FillCache(cache, &work, profiles.ByName)
	for i, p := range work.Pods {
		byKey[schedcore.PodName(p)] = i
	}
	for _, pl := range placements {
		i, ok := byKey[pl.Pod]
		if !ok {
			return nil, fmt.Errorf("placement of %s: no such pod", pl.Pod)
		}
		pod := work.Pods[i]
		fw := profiles.ByName[pod.Spec.SchedulerName]
		if fw == nil {
			return nil, fmt.Errorf("placement of %s: no profile %q", pl.Pod, pod.Spec.SchedulerName)
		}
		if !work.DRA.Empty() {
			cache.UpdateSnapshot(snap)
			if err := commitOn(ctx, fw, cache, snap, pod, pl.Node); err != nil {
				return nil, fmt.Errorf("placement of %s on %s: %w", pl.Pod, pl.Node, err)
			}
		}
		bound := work.Pods[i].DeepCopy()
		bound.Spec.NodeName = pl.Node
		if err := cache.AddPod(bound); err != nil {
			return nil, err
		}
		work.Pods[i] = bound
	}
	if !work.DRA.Empty() {
		work.DRA.ResourceClaims = dra.Claims()
	}
	return &work, nil
}

// commitOn runs the pod's cycle on the node alone, then Reserve and
// PreBind; the pod is assumed on the node meanwhile and forgotten after
// (the caller adds it bound).
func commitOn(ctx context.Context, fw *schedruntime.Framework, cache *schedcore.Cache, snap *schedcore.Snapshot, pod *v1.Pod, node string) error {
	state := schedcore.NewCycleState()
	if _, st, _ := fw.RunPreFilterPlugins(ctx, state, pod); !st.IsSuccess() {
		return fmt.Errorf("prefilter: %w", st.AsError())
	}
	ni, err := snap.Get(node)
	if err != nil {
		return err
	}
	if st := fw.RunFilterPlugins(ctx, state, pod, ni); !st.IsSuccess() {
		return fmt.Errorf("filter: %w", st.AsError())
	}
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = node
	if err := cache.AssumePod(assumed); err != nil {
		return err
	}
	defer cache.ForgetPod(assumed)
	if st := fw.RunReservePluginsReserve(ctx, state, assumed, node); !st.IsSuccess() {
		return fmt.Errorf("reserve: %w", st.AsError())
	}
	if st := fw.RunPreBindPlugins(ctx, state, assumed, node); !st.IsSuccess() {
		return fmt.Errorf("prebind: %w", st.AsError())
	}
	return nil
}
