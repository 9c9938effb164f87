// Package podgroup is `explain podgroup`: a Workload API PodGroup's
// pending members through kube's pod-group cycle on the cluster as listed,
// in memory, and what the nodes lack, domain by domain, for the members
// left over (capacity reports the same shortfalls for its gang copies).
package podgroup

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/explain"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

var (
	// ErrNotFound is returned by Run for a PodGroup that
	// is not in the cluster.
	ErrNotFound = errors.New("podgroup not found")
	// ErrNoPendingMembers is returned by Run for a PodGroup none
	// of whose members is pending.
	ErrNoPendingMembers = errors.New("no pending members")
	// ErrGenericWorkloadOff is returned by Run when the
	// GenericWorkload feature gate is off: kube has no pod-group cycle
	// then and schedules the members one by one.
	ErrGenericWorkloadOff = errors.New("the GenericWorkload feature gate is off: kube-scheduler schedules the members of a PodGroup one by one, as ordinary pods (explain each with kubectl sched explain pod, or turn the gate on with --feature-gates GenericWorkload=true)")
)

// Run explains the Workload API PodGroup namespace/name: its
// pending members are scheduled by kube's pod-group cycle on the cluster
// as listed, the other pending pods left pending (as explain.Run leaves
// them for one pod), in memory: nothing is bound anywhere. The cycle is the
// engine's, so the members' nodes, their messages and the group's
// PodGroupInitiallyScheduled condition are a dry-run's of the same state
// without the other pending pods. The cluster is not modified.
func Run(ctx context.Context, cl *snapshot.Cluster, namespace, name string, o explain.Options) (*report.PodGroupExplanation, error) {
	if len(cl.Nodes) == 0 {
		return nil, engine.ErrNoNodes
	}
	var pg *schedulingv1beta1.PodGroup
	for _, g := range cl.Workloads.PodGroups {
		if g.Namespace == namespace && g.Name == name {
			pg = g
			break
		}
	}
	if pg == nil {
		for _, u := range cl.Others {
			if u.GetKind() == "PodGroup" && u.GroupVersionKind().Group == "scheduling.x-k8s.io" && u.GetNamespace() == namespace && u.GetName() == name {
				return nil, fmt.Errorf("podgroup %s/%s is a scheduler-plugins PodGroup (%s, the Coscheduling plugin's), not a scheduling.k8s.io/v1beta1 one: %w (kubectl sched dryrun reports Coscheduling gangs; explain pod explains each member)",
					namespace, name, u.GetAPIVersion(), ErrNotFound)
			}
		}
		return nil, fmt.Errorf("podgroups.scheduling.k8s.io %q not found in namespace %q: %w", name, namespace, ErrNotFound)
	}
	if !o.Features.GenericWorkload {
		return nil, ErrGenericWorkloadOff
	}
	isMember := func(p *v1.Pod) bool {
		n, ok := schedcore.PodGroupNameOf(p)
		return ok && n == name && p.Namespace == namespace
	}
	rep := &report.PodGroupExplanation{PodGroup: namespace + "/" + name, Policy: "basic", PodMembers: []report.PodGroupMember{}}
	if gang := pg.Spec.SchedulingPolicy.Gang; gang != nil {
		rep.Policy, rep.MinCount = "gang", gang.MinCount
	}
	// The work cluster: every pod but the pending ones of other groups
	// and none (they stay pending, as explain pod leaves them).
	work := *cl
	work.Pods = make([]*v1.Pod, 0, len(cl.Pods))
	for _, p := range cl.Pods {
		done := p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
		if isMember(p) && !done {
			rep.Members++
			if p.Spec.NodeName != "" {
				rep.Bound++
			}
		}
		if p.Spec.NodeName == "" && !done && !isMember(p) {
			continue
		}
		work.Pods = append(work.Pods, p)
	}

	nodes := map[string]string{}
	failed := map[string]string{}
	obs := engine.Observer{
		Placed: func(p *v1.Pod, node string, _ int, _ schedruntime.ScheduleResult) {
			nodes[schedcore.PodKey(p)] = node
			delete(failed, schedcore.PodKey(p))
		},
		Failed: func(p *v1.Pod, f engine.Failure) {
			failed[schedcore.PodKey(p)] = f.Status.Message()
		},
		Evicted: func(victim *v1.Pod, node string, preemptor *v1.Pod) {
			rep.Evictions = append(rep.Evictions, report.Eviction{Pod: schedcore.PodName(victim), Node: node, Preemptor: schedcore.PodName(preemptor)})
		},
		// Pod-group preemption: the PodGroup is the preemptor, the
		// victim's node the node (kube's candidate is the whole cluster).
		GroupEvicted: func(victim *v1.Pod, pg *schedulingv1beta1.PodGroup) {
			rep.Evictions = append(rep.Evictions, report.Eviction{Pod: schedcore.PodName(victim), Node: victim.Spec.NodeName, Preemptor: pg.Namespace + "/" + pg.Name})
		},
	}
	c, pending, err := engine.NewOffline(ctx, &work, engine.Options{
		Config: o.Config, Registry: o.Registry, Features: o.Features, Seed: o.Seed, UseSeed: o.UseSeed,
		ClaimsAsListed: o.Live,
	}, obs)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.Scheduler.Hooks.Placements = func(g *schedcore.QueuedPodGroupInfo, outcomes []schedruntime.PlacementOutcome) {
		if g.Namespace != namespace || g.Name != name {
			return
		}
		rep.Placements = rep.Placements[:0]
		for _, o := range outcomes {
			p := report.PodGroupPlacement{Name: o.Name, Nodes: o.Nodes, Feasible: o.Feasible, Message: o.Message, Chosen: o.Chosen}
			if o.Scored {
				p.Score = &o.Score
			}
			rep.Placements = append(rep.Placements, p)
		}
	}
	var members []*v1.Pod
	for _, p := range pending {
		if isMember(p) {
			members = append(members, p)
		}
	}
	if len(members) == 0 {
		return nil, fmt.Errorf("podgroup %s/%s: %w (%d members known, all bound)", namespace, name, ErrNoPendingMembers, rep.Members)
	}
	if c.Framework(members[0]) == nil {
		return nil, explain.UnknownProfile(members[0], c.Profiles)
	}
	c.Submit(pending...)
	if err := c.Run(ctx); err != nil {
		return nil, err
	}
	placed := 0
	var firstFailure string
	for _, p := range members {
		k := schedcore.PodKey(p)
		m := report.PodGroupMember{Pod: schedcore.PodName(p)}
		switch {
		case nodes[k] != "":
			m.Node = nodes[k]
			placed++
		case failed[k] != "":
			m.Message = failed[k]
		default:
			if cur, ok := c.Pod(p.Namespace, p.Name); ok && len(cur.Spec.SchedulingGates) > 0 {
				m.Message = "Scheduling is blocked due to non-empty scheduling gates"
			} else if msg, plugin := c.GatedBy(ctx, p); plugin != "" {
				m.Message = msg
			} else {
				m.Message = "waiting in the scheduling queue (never attempted)"
			}
		}
		if m.Message != "" && firstFailure == "" {
			firstFailure = m.Pod + ": " + m.Message
		}
		rep.PodMembers = append(rep.PodMembers, m)
	}
	for _, g := range c.PodGroups() {
		if g.Namespace == namespace && g.Name == name {
			if cnd := apimeta.FindStatusCondition(g.Status.Conditions, schedulingv1beta1.PodGroupInitiallyScheduled); cnd != nil {
				rep.Condition = &report.PodGroupCondition{Status: string(cnd.Status), Reason: cnd.Reason, Message: cnd.Message}
			}
		}
	}
	switch rep.Policy {
	case "gang":
		rep.Fits = placed > 0 && placed+rep.Bound >= int(rep.MinCount)
	default:
		rep.Fits = placed == len(members)
	}
	rep.Message = podGroupMessage(rep, placed, len(members), firstFailure)
	rep.Reasons = groupReasons(rep.PodMembers)
	if !rep.Fits {
		// What the nodes lack, domain by domain, for the members left
		// over, on the state as listed (the cycle reverted its assumes).
		var left []*v1.Pod
		for i, m := range rep.PodMembers {
			if m.Node == "" {
				left = append(left, members[i])
			}
		}
		key := ""
		if sc := pg.Spec.SchedulingConstraints; o.Features.TopologyAwareWorkloadScheduling && sc != nil && len(sc.Topology) > 0 {
			key = sc.Topology[0].Key
			rep.TopologyKey = key
		}
		rep.Shortfall = Shortfalls(c.Current().List(), key, rep.Placements, left, o.Features)
		if note := NoDomainNote(c.Current().List(), key); note != "" {
			rep.Message += "; " + note
		}
	}
	return rep, nil
}

// groupReasons groups the members left over by their message, in the
// order the messages first come.
func groupReasons(members []report.PodGroupMember) []report.PodGroupReason {
	var out []report.PodGroupReason
	at := map[string]int{}
	for _, m := range members {
		if m.Node != "" {
			continue
		}
		i, ok := at[m.Message]
		if !ok {
			i = len(out)
			at[m.Message] = i
			out = append(out, report.PodGroupReason{Message: m.Message})
		}
		out[i].Members = append(out[i].Members, m.Pod)
	}
	return out
}

// podGroupMessage is the one line of the verdict.
func podGroupMessage(rep *report.PodGroupExplanation, placed, pending int, firstFailure string) string {
	if rep.Policy == "gang" && int(rep.MinCount) > rep.Members {
		return fmt.Sprintf("minCount %d is above the %d members known: the members wait before the queue until enough exist", rep.MinCount, rep.Members)
	}
	msg := fmt.Sprintf("%d of %d pending members placed", placed, pending)
	if rep.Policy == "gang" {
		msg += fmt.Sprintf(" (%d already bound, minCount %d)", rep.Bound, rep.MinCount)
	}
	switch {
	case !rep.Fits && rep.Condition != nil && rep.Condition.Message != "":
		msg += "; " + rep.Condition.Message
	case firstFailure != "":
		msg += "; " + firstFailure
	}
	return msg
}
