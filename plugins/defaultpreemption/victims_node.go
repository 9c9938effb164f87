package defaultpreemption

import (
	"context"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// selectVictimUnitsOnNode is SelectVictimsOnNode with GenericWorkload on
// (kube's Evaluator.GetVictimsOnNode + DefaultPreemption.SelectVictimsOnNode
// over DomainVictims): the node's pods form units (crossNodesVictims), a
// disruptionMode all group with all its scheduled pods, on any node, and a
// member's priority is its PodGroup's. Only nodeInfo (the main node, a
// copy) is changed; the unit's pods on other nodes go through the
// PreFilter extensions only, with their node as the snapshot lists it
// (kube: "Plugins that read remote NodeInfo directly during Filter will
// observe stale state for those nodes").
func (pl *DefaultPreemption) selectVictimUnitsOnNode(ctx context.Context, state *schedcore.CycleState, preemptor *v1.Pod, nodeInfo *schedcore.NodeInfo,
	pdbs []*policyv1.PodDisruptionBudget, now time.Time) ([]*v1.Pod, int, []*Victim, *schedcore.Status) {
	fw := pl.h.Framework()
	feats := pl.h.Features()
	main := nodeInfo.Name()
	nodeOf := func(pi *schedcore.PodInfo) *schedcore.NodeInfo {
		if n := pi.Pod.Spec.NodeName; n != main {
			ni, _ := pl.h.Snapshot().Get(n)
			return ni
		}
		return nodeInfo
	}
	remove := func(v *Victim) error {
		for _, pi := range v.Pods {
			if pi.Pod.Spec.NodeName == main {
				if err := nodeInfo.RemovePod(pi.Pod, feats); err != nil {
					return err
				}
			}
			if err := fw.RunPreFilterExtensionRemovePod(ctx, state, preemptor, pi, nodeOf(pi)).AsError(); err != nil {
				return err
			}
		}
		return nil
	}
	add := func(v *Victim) error {
		for _, pi := range v.Pods {
			if pi.Pod.Spec.NodeName == main {
				nodeInfo.AddPodInfo(pi, feats)
			}
			if err := fw.RunPreFilterExtensionAddPod(ctx, state, preemptor, pi, nodeOf(pi)).AsError(); err != nil {
				return err
			}
		}
		return nil
	}

	prio := schedcore.PodPriority(preemptor)
	var potential []*Victim
	for _, v := range pl.crossNodesVictims([]*schedcore.NodeInfo{nodeInfo}, now) {
		if v.Priority < prio {
			potential = append(potential, v)
		}
	}
	if len(potential) == 0 {
		return nil, 0, nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonNoVictims)
	}
	for _, v := range potential {
		if err := remove(v); err != nil {
			return nil, 0, nil, schedcore.AsStatus(err)
		}
	}
	if st := fw.RunFilterPluginsWithNominatedPods(ctx, state, preemptor, nodeInfo); !st.IsSuccess() {
		return nil, 0, nil, st
	}
	sort.SliceStable(potential, func(i, j int) bool { return moreImportantVictim(potential[i], potential[j]) })
	violating, nonViolating := filterVictimsWithPDBViolation(potential, pdbs)
	var victims []*Victim
	reprieve := func(v *Victim) (bool, error) {
		if err := add(v); err != nil {
			return false, err
		}
		if fw.RunFilterPluginsWithNominatedPods(ctx, state, preemptor, nodeInfo).IsSuccess() {
			return true, nil
		}
		if err := remove(v); err != nil {
			return false, err
		}
		victims = append(victims, v)
		return false, nil
	}
	numViolating := 0
	for _, vv := range violating {
		fits, err := reprieve(vv.victim)
		if err != nil {
			return nil, 0, nil, schedcore.AsStatus(err)
		}
		if !fits {
			numViolating += vv.violateCount
		}
	}
	for _, v := range nonViolating {
		if _, err := reprieve(v); err != nil {
			return nil, 0, nil, schedcore.AsStatus(err)
		}
	}
	if len(violating) != 0 && len(nonViolating) != 0 {
		sort.SliceStable(victims, func(i, j int) bool { return moreImportantVictim(victims[i], victims[j]) })
	}
	var out []*v1.Pod
	for _, v := range victims {
		for _, pi := range v.Pods {
			out = append(out, pi.Pod)
		}
	}
	return out, numViolating, victims, nil
}
