package defaultpreemption

import (
	"context"
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Workload-aware preemption, kube-scheduler v1.37's PodGroupEvaluator
// (framework/preemption/podgrouppreemption.go) behind
// DefaultPreemption.PodGroupPostFilter: the preemptor is a whole pod group
// and the domain the whole cluster.

// Messages of kube-scheduler v1.37's pod-group preemption, word for word.
const (
	// GroupMsgPrefix starts every message PodGroupPostFilter returns.
	GroupMsgPrefix = "pod group preemption: "
	// ErrReasonNoGroupVictims: no unit has a lower priority than the group.
	ErrReasonNoGroupVictims = "No preemption victims found for incoming preemptor"
	// MsgOngoingGroupPreemption: a victim of an earlier preemption is still
	// terminating on a member's nominated node.
	MsgOngoingGroupPreemption = "ongoing preemption on nominated nodes"
	// msgGroupFound is the success message: the number of victim pods.
	msgGroupFound = "found a placement for podgroup, preempting %d victims"
	// groupCandidateName is the candidate kube names in events: the domain.
	groupCandidateName = "cluster"
)

var _ schedcore.PodGroupPostFilterPlugin = (*DefaultPreemption)(nil)

// PodGroupPostFilter runs pod-group preemption in a mutation session of
// the snapshot (restored afterwards): the group algorithm is run once on
// the cluster without every lower-priority unit, then units are put back,
// the most important first, as long as every placed member still passes
// its filters; the units left are evicted, and each placed member is
// nominated to its node. Every message is prefixed "pod group preemption: ".
func (pl *DefaultPreemption) PodGroupPostFilter(ctx context.Context, _ *schedcore.CycleState, pg schedcore.PodGroupInfo, schedule schedcore.PodGroupSchedulingFunc) (res *schedcore.PodGroupPostFilterResult, status *schedcore.Status) {
	if f := pl.h.Preemption().GroupAttempted; f != nil {
		defer func() { f(status.Code().String()) }()
	}
	snap := pl.h.Snapshot()
	if err := snap.StartMutations(); err != nil {
		return nil, schedcore.AsStatus(fmt.Errorf("pod group preemption: failed to start mutations: %w", err))
	}
	defer func() {
		if err := snap.EndMutations(); err != nil {
			status = schedcore.AsStatus(fmt.Errorf("pod group preemption: failed to end mutations: %w", err))
		}
	}()
	res, st := pl.preemptPodGroup(ctx, pg, schedule)
	if msg := st.Message(); msg != "" {
		return res, schedcore.NewStatus(st.Code(), GroupMsgPrefix+msg)
	}
	return res, st
}

// groupPreemptor is kube's podGroupPreemptor for a leaf PodGroup.
type groupPreemptor struct {
	pg       *schedulingv1beta1.PodGroup
	members  []*v1.Pod
	priority int32
	policy   schedulingv1beta1.PreemptionPolicy
}

// newGroupPreemptor takes the group's priority from the PodGroup; its
// policy is Never when any member's is (kube with PodGroupPreemptionPolicy
// off, the alpha gate's default).
func newGroupPreemptor(g schedcore.PodGroupInfo) *groupPreemptor {
	p := &groupPreemptor{pg: g.PodGroup(), members: g.UnscheduledPods(), policy: schedulingv1beta1.PreemptLowerPriority}
	p.priority = schedcore.PodGroupPriority(p.pg)
	for _, m := range p.members {
		if m.Spec.PreemptionPolicy != nil && *m.Spec.PreemptionPolicy == v1.PreemptNever {
			p.policy = schedulingv1beta1.PreemptNever
			break
		}
	}
	return p
}

// preemptPodGroup is kube's PodGroupEvaluator.Preempt.
func (pl *DefaultPreemption) preemptPodGroup(ctx context.Context, g schedcore.PodGroupInfo, schedule schedcore.PodGroupSchedulingFunc) (*schedcore.PodGroupPostFilterResult, *schedcore.Status) {
	p := newGroupPreemptor(g)
	if p.policy == schedulingv1beta1.PreemptNever {
		return nil, schedcore.NewStatus(schedcore.Unschedulable, MsgPolicyNever)
	}
	if pl.isOngoingGroupPreemption(p) {
		return &schedcore.PodGroupPostFilterResult{NominatingInfos: currentNominations(p)}, schedcore.NewStatus(schedcore.Success, MsgOngoingGroupPreemption)
	}
	var pdbs []*policyv1.PodDisruptionBudget
	if f := pl.h.Preemption().PDBs; f != nil {
		pdbs = f()
	}
	r, st := pl.selectVictimsOnDomain(ctx, p, pdbs, schedule)
	if !st.IsSuccess() {
		return nil, st
	}
	if st := pl.actuateGroup(ctx, p, r); !st.IsSuccess() {
		return &schedcore.PodGroupPostFilterResult{NominatingInfos: r.nominations}, st
	}
	return &schedcore.PodGroupPostFilterResult{NominatingInfos: r.nominations}, schedcore.NewStatus(schedcore.Success, fmt.Sprintf(msgGroupFound, len(r.pods)))
}

// isOngoingGroupPreemption: a member's nominated node holds a pod of lower
// priority than the group that is terminating because of preemption.
func (pl *DefaultPreemption) isOngoingGroupPreemption(p *groupPreemptor) bool {
	l := pl.groupLister()
	seen := map[string]bool{}
	for _, m := range p.members {
		nn := m.Status.NominatedNodeName
		if nn == "" || seen[nn] {
			continue
		}
		seen[nn] = true
		ni, err := pl.h.Snapshot().Get(nn)
		if err != nil || ni == nil {
			continue
		}
		for _, pi := range ni.Pods {
			if victimPriority(pi.Pod, l) < p.priority && PodTerminatingByPreemption(pi.Pod) {
				return true
			}
		}
	}
	return false
}

// currentNominations are the members' nominated nodes as they are.
func currentNominations(p *groupPreemptor) map[types.NamespacedName]*schedcore.NominatingInfo {
	out := make(map[types.NamespacedName]*schedcore.NominatingInfo, len(p.members))
	for _, m := range p.members {
		out[types.NamespacedName{Namespace: m.Namespace, Name: m.Name}] = &schedcore.NominatingInfo{NominatingMode: schedcore.ModeOverride, NominatedNodeName: m.Status.NominatedNodeName}
	}
	return out
}

// groupVictims is kube's selectVictimsResult.
type groupVictims struct {
	nominations      map[types.NamespacedName]*schedcore.NominatingInfo
	units            []*Victim
	pods             []*v1.Pod
	numPDBViolations int
	numGroups        int
}

// selectVictimsOnDomain is kube's: every unit of lower priority than the
// group leaves the snapshot; the group algorithm runs once there; units
// are then put back (PDB-violating ones first, each part from the most
// important) and kept when every placed member still passes its filters
// on its node, with the members before it assumed and reserved.
func (pl *DefaultPreemption) selectVictimsOnDomain(ctx context.Context, p *groupPreemptor, pdbs []*policyv1.PodDisruptionBudget, schedule schedcore.PodGroupSchedulingFunc) (*groupVictims, *schedcore.Status) {
	snap := pl.h.Snapshot()
	fw := pl.h.Framework()
	now := pl.now()
	var potential []*Victim
	for _, v := range pl.crossNodesVictims(snap.List(), now) {
		if v.Priority < p.priority {
			potential = append(potential, v)
		}
	}
	if len(potential) == 0 {
		return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonNoGroupVictims)
	}
	for _, v := range potential {
		for _, pi := range v.Pods {
			if err := snap.MutationRemovePod(pi.Pod, pi.Pod.Spec.NodeName); err != nil {
				return nil, schedcore.AsStatus(err)
			}
		}
	}
	assignments, st := schedule(ctx)
	if !st.IsSuccess() {
		return nil, st
	}
	sort.SliceStable(potential, func(i, j int) bool { return moreImportantVictim(potential[i], potential[j]) })
	violating, nonViolating := filterVictimsWithPDBViolation(potential, pdbs)
	var valid []schedcore.ProposedAssignment
	for _, a := range assignments.ProposedAssignments {
		if a.NodeName != "" {
			valid = append(valid, a)
		}
	}

	// withPreFilter adds (or removes) a unit's pods and tells every placed
	// member's PreFilter state, with the node as it is after the change.
	withPreFilter := func(v *Victim, add bool) error {
		for _, pi := range v.Pods {
			node := pi.Pod.Spec.NodeName
			var err error
			if add {
				err = snap.MutationAddPod(pi, node)
			} else {
				err = snap.MutationRemovePod(pi.Pod, node)
			}
			if err != nil {
				return err
			}
			ni, _ := snap.Get(node)
			for _, a := range valid {
				var st *schedcore.Status
				if add {
					st = fw.RunPreFilterExtensionAddPod(ctx, a.CycleState, a.Pod(), pi, ni)
				} else {
					st = fw.RunPreFilterExtensionRemovePod(ctx, a.CycleState, a.Pod(), pi, ni)
				}
				if !st.IsSuccess() {
					return st.AsError()
				}
			}
		}
		return nil
	}
	reprieve := func(v *Victim) (fits bool, err error) {
		if err := withPreFilter(v, true); err != nil {
			return false, err
		}
		var cleanup []func() error
		defer func() {
			for i := len(cleanup) - 1; i >= 0; i-- {
				if e := cleanup[i](); e != nil && err == nil {
					err = e
				}
			}
		}()
		for _, a := range valid {
			ni, _ := snap.Get(a.NodeName)
			if !fw.RunFilterPluginsWithNominatedPods(ctx, a.CycleState, a.Pod(), ni).IsSuccess() {
				if err := withPreFilter(v, false); err != nil {
					return false, err
				}
				return false, nil
			}
			// The member assumed and reserved where the algorithm put it,
			// for the members after it (their states already count it).
			placed := *a.Pod()
			placed.Spec.NodeName = a.NodeName
			if err := snap.MutationAddPod(a.PodInfo.ForPod(&placed), a.NodeName); err != nil {
				return false, err
			}
			fw.RunReservePluginsReserve(ctx, a.CycleState, a.Pod(), a.NodeName)
			cleanup = append(cleanup, func() error {
				fw.RunReservePluginsUnreserve(ctx, a.CycleState, a.Pod(), a.NodeName)
				return snap.MutationRemovePod(&placed, a.NodeName)
			})
		}
		return true, nil
	}

	r := &groupVictims{}
	var victims []*Victim
	for _, vv := range violating {
		fits, err := reprieve(vv.victim)
		if err != nil {
			return nil, schedcore.AsStatus(err)
		}
		if !fits {
			victims = append(victims, vv.victim)
			r.numPDBViolations += vv.violateCount
		}
	}
	for _, v := range nonViolating {
		fits, err := reprieve(v)
		if err != nil {
			return nil, schedcore.AsStatus(err)
		}
		if !fits {
			victims = append(victims, v)
		}
	}
	sort.SliceStable(victims, func(i, j int) bool { return moreImportantVictim(victims[i], victims[j]) })
	r.units = victims
	for _, v := range victims {
		if v.IsGroup() {
			r.numGroups++
		}
		for _, pi := range v.Pods {
			r.pods = append(r.pods, pi.Pod)
		}
	}
	r.nominations = make(map[types.NamespacedName]*schedcore.NominatingInfo, len(valid))
	for _, a := range valid {
		pod := a.Pod()
		r.nominations[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}] = &schedcore.NominatingInfo{NominatingMode: schedcore.ModeOverride, NominatedNodeName: a.NodeName}
	}
	return r, nil
}

// actuateGroup is kube's actuatePodGroupPreemption: each victim not
// already being deleted is rejected in memory when it waits at Permit,
// else evicted; a Normal "Preempted" event regarding it names the
// PodGroup. (kube's executor also clears lower-priority nominations to the
// candidate's node, "cluster": no node has that name.)
func (pl *DefaultPreemption) actuateGroup(ctx context.Context, p *groupPreemptor, r *groupVictims) *schedcore.Status {
	hooks := pl.h.Preemption()
	if f := hooks.GroupVictims; f != nil {
		f(len(r.pods))
	}
	if f := hooks.Disruptions; f != nil && r.numGroups > 0 {
		f(string(schedcore.PodGroupKeyType), r.numGroups)
	}
	fw := pl.h.Framework()
	schedulerName := ""
	if len(p.members) > 0 {
		schedulerName = p.members[0].Spec.SchedulerName
	}
	for _, victim := range r.pods {
		if victim.DeletionTimestamp != nil {
			continue
		}
		if fw != nil {
			if wp := fw.GetWaitingPod(victim.UID); wp != nil {
				wp.Reject(Name, "preempted")
				pl.groupEvent(victim, p, " (in kube-scheduler memory).")
				continue
			}
		}
		if hooks.Evictor == nil {
			continue
		}
		var err error
		if ge, ok := hooks.Evictor.(schedcore.PodGroupEvictor); ok {
			err = ge.PreemptPodForPodGroup(ctx, p.pg, schedulerName, victim)
		} else if len(p.members) > 0 {
			err = hooks.Evictor.PreemptPod(ctx, p.members[0], victim, groupCandidateName)
		}
		if err != nil {
			return schedcore.AsStatus(err)
		}
		pl.groupEvent(victim, p, "")
	}
	return nil
}

func (pl *DefaultPreemption) groupEvent(victim *v1.Pod, p *groupPreemptor, suffix string) {
	if pl.h.Events() == nil || p.pg == nil {
		return
	}
	pl.h.Events().Eventf(victim, p.pg, v1.EventTypeNormal, "Preempted", "Preempting", "Preempted by %s %v on node %v%s", schedcore.PodGroupKeyType, p.pg.UID, groupCandidateName, suffix)
}
