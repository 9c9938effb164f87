package defaultpreemption

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Victim units, kube-scheduler v1.37's preemption.Victim (types.go,
// util.go): with GenericWorkload on, a pod whose PodGroup has
// spec.disruptionMode.all is evicted or reprieved with every scheduled
// pod of its group, on any node; any other pod is a unit of its own.

// Victim is a unit preemption evicts or reprieves whole.
type Victim struct {
	// Pods are the unit's pods: one, or every scheduled pod of a
	// disruptionMode all group.
	Pods []*schedcore.PodInfo
	// Priority is the PodGroup's spec.priority for a member of a group
	// the snapshot knows, else the pod's own.
	Priority int32
	// Type is pod, or podgroup for a group unit or a member of a group
	// (kube's victim key type: it ranks the units, see moreImportantVictim).
	Type schedcore.EntityKeyType
	// EarliestStart is the earliest start time of its pods (now for a pod
	// not started).
	EarliestStart time.Time
}

// IsGroup reports whether the unit counts as a pod-group disruption.
func (v *Victim) IsGroup() bool { return v.Type == schedcore.PodGroupKeyType }

// newVictim is kube's NewVictim.
func newVictim(pods []*schedcore.PodInfo, prio int32, t schedcore.EntityKeyType, now time.Time) *Victim {
	v := &Victim{Pods: pods, Priority: prio, Type: t}
	for i, pi := range pods {
		if st := startTime(pi.Pod, now); i == 0 || st.Before(v.EarliestStart) {
			v.EarliestStart = st
		}
	}
	return v
}

// groupLister is the snapshot's PodGroup lister when GenericWorkload is
// on (nil otherwise: every pod is its own unit with its own priority).
func (pl *DefaultPreemption) groupLister() schedcore.PodGroupLister {
	if !pl.h.Features().GenericWorkload || pl.h.Snapshot() == nil {
		return nil
	}
	return pl.h.Snapshot().PodGroups()
}

// podGroupOf is the PodGroup a pod names, if the lister has it.
func podGroupOf(p *v1.Pod, l schedcore.PodGroupLister) *schedulingv1beta1.PodGroup {
	if l == nil {
		return nil
	}
	name, ok := schedcore.PodGroupNameOf(p)
	if !ok {
		return nil
	}
	pg, err := l.Get(p.Namespace, name)
	if err != nil {
		return nil
	}
	return pg
}

// victimPriority is kube's GetPodPriority: a member's priority is its
// PodGroup's.
func victimPriority(p *v1.Pod, l schedcore.PodGroupLister) int32 {
	if pg := podGroupOf(p, l); pg != nil {
		return schedcore.PodGroupPriority(pg)
	}
	return schedcore.PodPriority(p)
}

// podVictim is kube's NewPodVictim: a unit of one pod, typed podgroup
// when the pod names a group (and the lister is there).
func podVictim(pi *schedcore.PodInfo, l schedcore.PodGroupLister, now time.Time) *Victim {
	t := schedcore.PodKeyType
	if _, ok := schedcore.PodGroupNameOf(pi.Pod); ok && l != nil {
		t = schedcore.PodGroupKeyType
	}
	return newVictim([]*schedcore.PodInfo{pi}, victimPriority(pi.Pod, l), t, now)
}

// crossNodesVictims is kube's getCrossNodesVictims: the units of the
// pods on nodes, in node then pod order, a disruptionMode all group once,
// made of all its scheduled pods (a group with none known: the pod alone).
func (pl *DefaultPreemption) crossNodesVictims(nodes []*schedcore.NodeInfo, now time.Time) []*Victim {
	l := pl.groupLister()
	seen := map[schedcore.EntityKey]bool{}
	var out []*Victim
	for _, ni := range nodes {
		for _, pi := range ni.Pods {
			p := pi.Pod
			pg := podGroupOf(p, l)
			if pg == nil || pg.Spec.DisruptionMode == nil || pg.Spec.DisruptionMode.All == nil {
				key := schedcore.PodEntityKey(p.Namespace, p.Name)
				if !seen[key] {
					seen[key] = true
					out = append(out, podVictim(pi, l, now))
				}
				continue
			}
			key := schedcore.PodGroupKey(p.Namespace, pg.Name)
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, pl.groupVictim(pi, pg, l, now))
		}
	}
	return out
}

// groupVictim is kube's searchCrossNodesVictimPods for a leaf PodGroup.
func (pl *DefaultPreemption) groupVictim(pi *schedcore.PodInfo, pg *schedulingv1beta1.PodGroup, l schedcore.PodGroupLister, now time.Time) *Victim {
	st, err := pl.h.Snapshot().PodGroupStates().Get(pi.Pod.Namespace, pg.Name)
	if err != nil {
		return podVictim(pi, l, now)
	}
	scheduled := st.ScheduledPods()
	if len(scheduled) == 0 {
		return podVictim(pi, l, now)
	}
	// kube lists them from a map; by node and name here, so that the
	// victims' order does not change from run to run.
	sortPodsByNodeAndName(scheduled)
	pods := make([]*schedcore.PodInfo, len(scheduled))
	for i, p := range scheduled {
		pods[i] = pl.podInfoOf(p)
	}
	return newVictim(pods, victimPriority(pi.Pod, l), schedcore.PodGroupKeyType, now)
}

// podInfoOf is the snapshot's PodInfo of a scheduled pod (its node's),
// else a new one.
func (pl *DefaultPreemption) podInfoOf(p *v1.Pod) *schedcore.PodInfo {
	if ni, err := pl.h.Snapshot().Get(p.Spec.NodeName); err == nil && ni != nil {
		k := schedcore.PodKey(p)
		for _, pi := range ni.Pods {
			if pi.Key() == k {
				return pi
			}
		}
	}
	return schedcore.NewPodInfo(p)
}

// moreImportantVictim is kube's MoreImportantVictim: higher priority;
// then group units before pods; then more pods; then the earlier start.
func moreImportantVictim(a, b *Victim) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if ra, rb := victimRank(a), victimRank(b); ra != rb {
		return ra > rb
	}
	if len(a.Pods) != len(b.Pods) {
		return len(a.Pods) > len(b.Pods)
	}
	return a.EarliestStart.Before(b.EarliestStart)
}

func victimRank(v *Victim) int {
	if v.Type == schedcore.PodGroupKeyType {
		return 2
	}
	return 1
}

// violatingVictim is a unit with pods that violate a PDB, and how many.
type violatingVictim struct {
	victim       *Victim
	violateCount int
}

// filterVictimsWithPDBViolation is kube's FilterVictimsWithPDBViolation
// over units: each matching PDB's disruptionsAllowed is spent pod by pod
// in unit order; a unit with any violating pod violates, counted per pod.
func filterVictimsWithPDBViolation(victims []*Victim, pdbs []*policyv1.PodDisruptionBudget) (violating []violatingVictim, nonViolating []*Victim) {
	violates := newPDBBudget(pdbs).violates
	for _, v := range victims {
		n := 0
		for _, pi := range v.Pods {
			if violates(pi.Pod) {
				n++
			}
		}
		if n > 0 {
			violating = append(violating, violatingVictim{victim: v, violateCount: n})
		} else {
			nonViolating = append(nonViolating, v)
		}
	}
	return violating, nonViolating
}

// sortPodsByNodeAndName orders pods by node, then namespace and name.
func sortPodsByNodeAndName(pods []*v1.Pod) {
	sort.Slice(pods, func(i, j int) bool {
		a, b := pods[i], pods[j]
		if a.Spec.NodeName != b.Spec.NodeName {
			return a.Spec.NodeName < b.Spec.NodeName
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
}
