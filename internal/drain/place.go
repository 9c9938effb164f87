package drain

import (
	"context"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// This file is the only one that drives the engine: through the dry-run
// driver, over the cluster's bound pods (its pending pods left out), with
// the drain applied as changes to the loaded cluster: the nodes cordoned or
// deleted, the evicted pods deleted, their replacements added in kube's
// queue order. The report's "before" is the cluster before the drain.

// place drains the nodes in the engine and schedules the replacements.
func place(ctx context.Context, cl *snapshot.Cluster, nodes []string, gone, replacements []*v1.Pod, o Options) (*report.DryRun, error) {
	bound := *cl
	bound.Pods = make([]*v1.Pod, 0, len(cl.Pods))
	for _, p := range cl.Pods {
		if p.Spec.NodeName != "" {
			bound.Pods = append(bound.Pods, p)
		}
	}
	bound.Warnings = nil
	changes := func(c *engine.Offline) ([]*v1.Pod, error) {
		for _, name := range nodes {
			if o.Delete {
				// The pod garbage collector deletes the pods left on it.
				left, err := c.RemoveNode(name)
				if err != nil {
					return nil, err
				}
				for _, p := range left {
					c.Delete(p.Namespace, p.Name)
				}
				continue
			}
			ni, err := c.Current().Get(name)
			if err != nil {
				return nil, err
			}
			cordoned := ni.Node().DeepCopy()
			cordoned.Spec.Unschedulable = true
			if err := c.UpdateNode(cordoned); err != nil {
				return nil, err
			}
		}
		for _, p := range gone {
			c.Delete(p.Namespace, p.Name)
		}
		if o.Delete {
			// The image spread of the nodes left, counted without the
			// deleted ones: the cluster as a scheduler would find it (a
			// running one's copies of unchanged nodes may still count
			// them, depending on when it last copied each).
			c.Cache.RefreshImageSummaries()
		}
		queued := append([]*v1.Pod(nil), replacements...)
		engine.SortQueueOrder(queued)
		for _, r := range queued {
			if err := c.Add(r); err != nil {
				return nil, err
			}
		}
		return queued, nil
	}
	return dryrun.Run(ctx, &bound, dryrun.Options{Config: o.Config, Registry: o.Registry, Features: o.Features, NoPreemption: o.NoPreemption, Changes: changes})
}
