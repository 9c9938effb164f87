package drain

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// gangs reports the Workload API PodGroups the drain takes members from
// (GenericWorkload on; with it off a pod's spec.schedulingGroup means
// nothing to the scheduler). The recreated members were placed by the
// engine's pod-group cycle, as kube-scheduler does: it binds a gang's
// pending members together or not at all, so an evicted member left
// pending means its siblings were left pending too, whatever room there
// was for them. A gang is broken when an evicted member is not back on a
// node: pending, or lost (nothing recreates it).
func gangs(cl *snapshot.Cluster, rep *report.Drain, out *report.DryRun, enabled bool) []report.DrainGang {
	if !enabled {
		return nil
	}
	groupOf := func(p *v1.Pod) (string, bool) {
		name, ok := schedcore.PodGroupNameOf(p)
		return p.Namespace + "/" + name, ok
	}
	pods := map[string]*v1.Pod{}
	members := map[string]int{}
	for _, p := range cl.Pods {
		if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		pods[schedcore.PodName(p)] = p
		if g, ok := groupOf(p); ok {
			members[g]++
		}
	}
	byKey := map[string]*report.DrainGang{}
	gang := func(name string) *report.DrainGang {
		p := pods[name]
		if p == nil {
			return nil
		}
		g, ok := groupOf(p)
		if !ok {
			return nil
		}
		if byKey[g] == nil {
			byKey[g] = &report.DrainGang{PodGroup: g, Members: members[g]}
		}
		return byKey[g]
	}
	for _, m := range rep.Moves {
		g := gang(m.Pod)
		if g == nil {
			continue
		}
		g.Evicted++
		if m.To != "" {
			g.Placed++
			continue
		}
		g.Pending++
		if g.Message == "" {
			g.Message = m.Reason
		}
	}
	for _, l := range rep.Lost {
		if g := gang(l.Pod); g != nil {
			g.Evicted++
			g.Lost++
		}
	}
	pgs := map[string]*schedulingv1beta1.PodGroup{}
	for _, pg := range cl.Workloads.PodGroups {
		pgs[pg.Namespace+"/"+pg.Name] = pg
	}
	conditions := map[string]*report.PodGroupCondition{}
	for _, pg := range out.PodGroups {
		conditions[pg.PodGroup] = pg.Condition
	}
	var list []report.DrainGang
	for key, g := range byKey {
		if pg := pgs[key]; pg != nil {
			g.Policy = "basic"
			if gp := pg.Spec.SchedulingPolicy.Gang; gp != nil {
				g.Policy, g.MinCount = "gang", gp.MinCount
			}
		}
		g.Broken = g.Pending+g.Lost > 0
		switch c := conditions[key]; {
		case !g.Broken:
			g.Message = ""
		case c != nil && c.Status == string(v1.ConditionFalse) && g.Pending > 0:
			g.Message = c.Message
		case g.Pending == 0:
			g.Message = fmt.Sprintf("%d evicted member(s) not recreated", g.Lost)
		}
		list = append(list, *g)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].PodGroup < list[j].PodGroup })
	return list
}
