package drain

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// This file is the only one that drives the engine: through the dry-run
// driver, which places a cluster's pending pods in queue order, each
// binding committed before the next, with the configured profile.

// place schedules the drained cluster's pending pods (the replacements).
func place(ctx context.Context, cl *snapshot.Cluster, o Options) (*report.DryRun, error) {
	if len(cl.Nodes) == 0 {
		// Every node deleted: nothing can be placed.
		return placeNowhere(cl), nil
	}
	return dryrun.Run(ctx, cl, dryrun.Options{Config: o.Config, Registry: o.Registry, Features: o.Features, NoPreemption: o.NoPreemption})
}

// placeNowhere is the outcome with no node at all: kube's message for a
// cluster without nodes.
func placeNowhere(cl *snapshot.Cluster) *report.DryRun {
	rep := &report.DryRun{}
	for _, p := range cl.Pods {
		if p.Spec.NodeName == "" {
			rep.Unschedulable = append(rep.Unschedulable, report.Unschedulable{Pod: p.Namespace + "/" + p.Name, Message: "no nodes available to schedule pods"})
		}
	}
	return rep
}

// usageOf is each node's requested resources as the engine accounts them,
// for the cluster's bound pods.
func usageOf(ctx context.Context, cl *snapshot.Cluster, o Options) []report.NodeUsage {
	c := *cl
	c.Pods = make([]*v1.Pod, 0, len(cl.Pods))
	for _, p := range cl.Pods {
		if p.Spec.NodeName != "" {
			c.Pods = append(c.Pods, p)
		}
	}
	if len(c.Nodes) == 0 {
		return nil
	}
	rep, err := dryrun.Run(ctx, &c, dryrun.Options{Config: o.Config, Registry: o.Registry, Features: o.Features, NoPreemption: true})
	if err != nil {
		return nil
	}
	return rep.Nodes
}
