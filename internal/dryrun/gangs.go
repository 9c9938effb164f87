package dryrun

import (
	"sort"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// gangReport sums up the groups of pending pods (schedcore.PodGroupPlugin:
// Coscheduling's gangs): a group is Scheduled when at least minMember of
// its pods were placed, else Unschedulable with the reason of the member
// that failed on its own (the last one whose failure was not a rejection
// for the group's sake), or, when none did, a member that never got a
// cycle (gated), or else the first group rejection (a timeout). It also
// stamps each unschedulable member with its group.
func gangReport(pending []*v1.Pod, e *engine.Engine, placed sets.Set[string], failed map[string]*failure, unsched []report.Unschedulable) []report.Group {
	type gang struct {
		g       report.Group
		members []*v1.Pod
	}
	gangs := map[string]*gang{}
	var order []string
	memberOf := map[string]string{}
	for _, p := range pending {
		fw := e.Framework(p)
		if fw == nil {
			continue
		}
		pg, ok := fw.PodGroup(p)
		if !ok {
			continue
		}
		gg := gangs[pg.Name]
		if gg == nil {
			gg = &gang{g: report.Group{Group: pg.Name, MinMember: pg.MinMember}}
			gangs[pg.Name] = gg
			order = append(order, pg.Name)
		}
		gg.members = append(gg.members, p)
		gg.g.Pods++
		if placed.Has(schedcore.PodKey(p)) {
			gg.g.Scheduled++
		}
		memberOf[schedcore.PodName(p)] = pg.Name
	}
	for i := range unsched {
		unsched[i].Group = memberOf[unsched[i].Pod]
	}
	if len(gangs) == 0 {
		return nil
	}
	sort.Strings(order)
	out := make([]report.Group, 0, len(order))
	for _, key := range order {
		gg := gangs[key]
		g := gg.g
		if g.Scheduled >= g.MinMember {
			g.Status = report.GroupScheduled
			out = append(out, g)
			continue
		}
		g.Status = report.GroupUnschedulable
		var own, rejected *failure
		var ownPod, rejectedPod, gatedPod string
		for _, p := range gg.members {
			k := schedcore.PodKey(p)
			if placed.Has(k) {
				continue
			}
			f := failed[k]
			if f == nil {
				if gatedPod == "" {
					gatedPod = schedcore.PodName(p)
				}
				continue
			}
			if f.own != "" && (own == nil || f.ownSeq > own.ownSeq) {
				own, ownPod = f, schedcore.PodName(p)
			}
			if f.ForGroup && (rejected == nil || f.seq < rejected.seq) {
				rejected, rejectedPod = f, schedcore.PodName(p)
			}
		}
		switch {
		case own != nil:
			g.Pod, g.Message = ownPod, own.own
		case gatedPod != "":
			g.Pod = gatedPod
			for _, u := range unsched {
				if u.Pod == gatedPod {
					g.Message = u.Message
				}
			}
		case rejected != nil:
			g.Pod, g.Message = rejectedPod, rejected.msg
		}
		out = append(out, g)
	}
	return out
}

// podGroupReport lists the Workload API PodGroups with pending members
// (GenericWorkload): the members bound and not, and the condition the
// pod-group cycles wrote.
func podGroupReport(c *engine.Offline, pending []*v1.Pod, placed sets.Set[string]) []report.PodGroup {
	if !c.Options.Features.GenericWorkload {
		return nil
	}
	members := map[string][]*v1.Pod{}
	for _, p := range pending {
		if name, ok := schedcore.PodGroupNameOf(p); ok {
			members[p.Namespace+"/"+name] = append(members[p.Namespace+"/"+name], p)
		}
	}
	var out []report.PodGroup
	for _, pg := range c.PodGroups() {
		key := pg.Namespace + "/" + pg.Name
		ms := members[key]
		if len(ms) == 0 {
			continue
		}
		g := report.PodGroup{PodGroup: key, Policy: "basic", Bound: []string{}, Unbound: []string{}}
		if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
			g.Policy, g.MinCount = "gang", gang.MinCount
		}
		for _, p := range ms {
			if placed.Has(schedcore.PodKey(p)) {
				g.Bound = append(g.Bound, schedcore.PodName(p))
			} else {
				g.Unbound = append(g.Unbound, schedcore.PodName(p))
			}
		}
		if cnd := apimeta.FindStatusCondition(pg.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled); cnd != nil {
			g.Condition = &report.PodGroupCondition{Status: string(cnd.Status), Reason: cnd.Reason, Message: cnd.Message}
		}
		out = append(out, g)
	}
	return out
}
