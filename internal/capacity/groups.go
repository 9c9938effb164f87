package capacity

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apidefaults "github.com/kubectl-sched/kubectl-sched/internal/defaults"
	"github.com/kubectl-sched/kubectl-sched/internal/explain/podgroup"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/internal/whatif"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ErrGateOff is returned for a Workload given while GenericWorkload is off:
// the API server serves scheduling.k8s.io/v1beta1 only with the gate, and
// kube-scheduler then has no pod-group cycle.
var ErrGateOff = fmt.Errorf("the Workload API needs the GenericWorkload feature gate (--feature-gates GenericWorkload=true)")

// gangs returns the PodGroups one copy of the spec is: a Workload's, the
// spec's own gang, or none.
func (s *Spec) gangs() []*Gang {
	if s.Workload != nil {
		return s.Groups
	}
	if s.Gang != nil {
		return []*Gang{s.Gang}
	}
	return nil
}

// PodGroupCycle reports whether the spec's copies go through kube's
// pod-group cycle (GenericWorkload on, a scheduling.k8s.io PodGroup or a
// Workload), rather than Coscheduling or the pod cycle.
func (s *Spec) PodGroupCycle() bool {
	return s.Workload != nil || (s.Gang != nil && s.Gang.PodGroup != nil)
}

// Pods returns how many pods one copy has: a gang's or Workload's
// members, or 1.
func (s *Spec) Pods() int {
	n := 0
	for _, g := range s.gangs() {
		n += len(g.Members)
	}
	if n == 0 && s.Pod != nil {
		return 1
	}
	return n
}

// typedPodGroup decodes a scheduling.k8s.io/v1beta1 PodGroup as the API
// server stores it: its defaults applied, then its validation (kube's
// messages; an invalid one is refused at the object).
func typedPodGroup(o snapshot.Object, ns string) (*schedulingv1beta1.PodGroup, error) {
	pg := &schedulingv1beta1.PodGroup{}
	if err := o.Decode(pg); err != nil {
		return nil, err
	}
	pg.Namespace = ns
	pg.ResourceVersion, pg.UID = "", ""
	pg.Status = schedulingv1beta1.PodGroupStatus{}
	apidefaults.PodGroup(pg)
	if err := apidefaults.ValidatePodGroup(pg); err != nil {
		return nil, o.Errorf("%v", err)
	}
	if len(pg.Spec.ResourceClaims) > 0 {
		// DRAWorkloadResourceClaims (beta, off by default in 1.37): the
		// engine does not allocate a group's own claims.
		return nil, o.Errorf("%v: spec.resourceClaims: a PodGroup's own claims (DRAWorkloadResourceClaims) are not simulated; give the claims in the members' spec.resourceClaims", ErrNotASpec)
	}
	return pg, nil
}

// addWorkload reads a scheduling.k8s.io/v1beta1 Workload: a spec whose
// copy is every PodGroup of the input that names it in
// spec.workloadRef.workloadName (gathered by workloads once all objects
// are read). kube-scheduler v1.37 reads PodGroups, never Workloads: the
// Workload only ties its groups into one unit of the count.
func (l *loader) addWorkload(o snapshot.Object, ns, source string) error {
	if !l.podGroupCycle {
		return o.Errorf("%v: %v", ErrNotASpec, ErrGateOff)
	}
	w := &schedulingv1beta1.Workload{}
	if err := o.Decode(w); err != nil {
		return err
	}
	w.Namespace = ns
	if err := apidefaults.ValidateWorkload(w); err != nil {
		return o.Errorf("%v", err)
	}
	for _, s := range l.specs {
		if s.Workload != nil && s.Workload.Namespace == ns && s.Workload.Name == w.Name {
			return o.Errorf("Workload given twice")
		}
	}
	l.specs = append(l.specs, &Spec{Kind: KindWorkload, Name: ns + "/" + w.Name, Source: source, Workload: w})
	return nil
}

// workloads moves the PodGroups that name a Workload of the input into
// it, and refuses what kube would never schedule: a Workload without
// PodGroups, and a gang whose minCount is above its members (kube's
// GangScheduling keeps such a gang before the queue for ever).
func (l *loader) workloads() error {
	kept := l.specs[:0]
	byName := map[string]*Spec{}
	for _, s := range l.specs {
		if s.Workload != nil {
			byName[s.Name] = s
		}
	}
	for _, s := range l.specs {
		if g := s.Gang; g != nil && g.PodGroup != nil && g.PodGroup.Spec.WorkloadRef != nil {
			if w := byName[g.PodGroup.Namespace+"/"+g.PodGroup.Spec.WorkloadRef.WorkloadName]; w != nil {
				w.Groups = append(w.Groups, g)
				continue
			}
		}
		kept = append(kept, s)
	}
	l.specs = kept
	for _, s := range l.specs {
		if s.Workload != nil && len(s.Groups) == 0 {
			return fmt.Errorf("%s: Workload %s: no PodGroup among the specs names it in spec.workloadRef.workloadName (a Workload is counted with its PodGroups and their pods): %w", s.Source, s.Name, ErrNotASpec)
		}
		for _, g := range s.gangs() {
			pg := g.PodGroup
			if pg == nil {
				continue
			}
			if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil && int(gang.MinCount) > len(g.Members) {
				return fmt.Errorf("%s: PodGroup %s/%s: spec.schedulingPolicy.gang.minCount %d is above its %d pods among the specs: kube-scheduler never schedules it (GangScheduling: %q): %w",
					g.Source, pg.Namespace, pg.Name, gang.MinCount, len(g.Members), "waiting for minCount pods from a gang to appear in scheduling queue", ErrNotASpec)
			}
		}
	}
	return nil
}

// topologyKey is the key of the i-th group's topology constraint when
// TopologyAwareWorkloadScheduling is on (off: kube ignores it), or "".
func (c *counter) topologyKey(i int) string {
	if !c.r.o.Features.TopologyAwareWorkloadScheduling {
		return ""
	}
	if sc := c.spec.gangs()[i].PodGroup.Spec.SchedulingConstraints; sc != nil && len(sc.Topology) > 0 {
		return sc.Topology[0].Key
	}
	return ""
}

// groupsOf describes the PodGroups of one copy of a pod-group-cycle spec;
// a topology constraint is named only with TopologyAwareWorkloadScheduling
// on (off, kube-scheduler has no placement generator and ignores it).
func groupsOf(s *Spec, topology bool) []report.CapacityGroup {
	var out []report.CapacityGroup
	for _, g := range s.gangs() {
		pg := g.PodGroup
		cg := report.CapacityGroup{Name: pg.Name, Policy: "basic", Members: len(g.Members)}
		if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
			cg.Policy, cg.MinCount = "gang", gang.MinCount
		}
		if c := pg.Spec.SchedulingConstraints; topology && c != nil && len(c.Topology) > 0 {
			cg.TopologyKey = c.Topology[0].Key
		}
		out = append(out, cg)
	}
	return out
}

// groupOutcomes says, group by group, what the pod-group cycle did with
// the copy that did not fit whole: how many members it bound, the
// group's message (its PodGroupInitiallyScheduled condition, kube's
// words, else the first member's failure) and the placements tried.
func (c *counter) groupOutcomes(pods []*v1.Pod, placed []whatif.Placement, failed []whatif.Failure) []report.CapacityGroupOutcome {
	bound := map[string]int{}
	boundPods := map[string]bool{}
	for _, p := range placed {
		if n, ok := schedcore.PodGroupNameOf(p.Pod); ok {
			bound[n]++
			boundPods[schedcore.PodName(p.Pod)] = true
		}
	}
	members := map[string]int{}
	for _, p := range pods {
		if n, ok := schedcore.PodGroupNameOf(p); ok {
			members[n]++
		}
	}
	ns := pods[0].Namespace
	var out []report.CapacityGroupOutcome
	for i, name := range c.copyNames {
		o := report.CapacityGroupOutcome{PodGroup: name, Bound: bound[name], Members: members[name]}
		if pg := c.sim.PodGroup(ns, name); pg != nil {
			if cnd := apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled); cnd != nil && cnd.Status == metav1.ConditionFalse {
				o.Message = cnd.Message
			}
		}
		if o.Message == "" && o.Bound < o.Members {
			for _, f := range failed {
				if n, ok := schedcore.PodGroupNameOf(f.Pod); ok && n == name {
					o.Message = schedcore.PodName(f.Pod) + ": " + f.Message
					break
				}
			}
		}
		gang := c.spec.gangs()[i].PodGroup.Spec.SchedulingPolicy.Gang
		switch {
		case o.Bound > 0 && o.Bound < o.Members && gang != nil:
			o.Note = fmt.Sprintf("kube binds the %d members placed (minCount %d reached) and keeps the other %d pending: the copy does not count", o.Bound, gang.MinCount, o.Members-o.Bound)
		case o.Bound > 0 && o.Bound < o.Members:
			o.Note = fmt.Sprintf("basic policy: kube binds the %d members placed and keeps the other %d pending: the copy does not count", o.Bound, o.Members-o.Bound)
		case o.Bound == o.Members && len(c.copyNames) > 1:
			o.Note = "bound whole; another PodGroup of the Workload did not fit (kube schedules each PodGroup on its own)"
		}
		for _, p := range c.sim.Placements(ns, name) {
			rp := report.PodGroupPlacement{Name: p.Name, Nodes: p.Nodes, Feasible: p.Feasible, Message: p.Message, Chosen: p.Chosen}
			if p.Scored {
				rp.Score = &p.Score
			}
			o.Placements = append(o.Placements, rp)
		}
		if o.Bound < o.Members {
			var left []*v1.Pod
			for _, p := range pods {
				if n, _ := schedcore.PodGroupNameOf(p); n == name && !boundPods[schedcore.PodName(p)] {
					left = append(left, p)
				}
			}
			o.Shortfall = podgroup.Shortfalls(c.sim.Nodes(), c.topologyKey(i), o.Placements, left, c.r.o.Features)
			if note := podgroup.NoDomainNote(c.sim.Nodes(), c.topologyKey(i)); note != "" {
				o.Note = note
			}
		}
		out = append(out, o)
	}
	return out
}

// groupStoppedBy is the message of the first group of the copy that was
// not bound whole, else fallback.
func groupStoppedBy(outcomes []report.CapacityGroupOutcome, fallback string) string {
	for _, o := range outcomes {
		if o.Bound < o.Members && o.Message != "" {
			return o.Message
		}
	}
	return fallback
}
