package kube

import (
	"context"
	"fmt"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// listWorkloadAPI lists kube's Workload API (scheduling.k8s.io/v1beta1
// Workloads and PodGroups) when the cluster serves it, typed. A cluster
// without it (the GenericWorkload gate off, the version not enabled, or
// a server before 1.36) gives nothing and says nothing: its pods carry
// no group a scheduler could read. A discovery failure is one warning.
func listWorkloadAPI(ctx context.Context, c *Clients, ns string, cl *snapshot.Cluster) error {
	if c.Discovery == nil {
		return nil
	}
	gv := schedulingv1beta1.SchemeGroupVersion.String()
	rl, err := c.Discovery.ServerResourcesForGroupVersion(gv)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		cl.Warnings = append(cl.Warnings, fmt.Sprintf("warning: API discovery of %s failed (%v): no Workloads or PodGroups in the snapshot", gv, err))
		return nil
	}
	optional := func(what string, err error) error {
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
			cl.Warnings = append(cl.Warnings, fmt.Sprintf("warning: cannot list %s (%v): the snapshot has none", what, err))
			return nil
		}
		return fmt.Errorf("listing %s: %w", what, err)
	}
	api := c.Kube.SchedulingV1beta1()
	if hasResource(rl, "workloads") {
		ws, err := listAll(ctx, api.Workloads(ns).List, func(l *schedulingv1beta1.WorkloadList) []schedulingv1beta1.Workload { return l.Items })
		if err != nil {
			if err := optional("workloads.scheduling.k8s.io", err); err != nil {
				return err
			}
		}
		cl.Workloads.Workloads = ws
	}
	if hasResource(rl, "podgroups") {
		pgs, err := listAll(ctx, api.PodGroups(ns).List, func(l *schedulingv1beta1.PodGroupList) []schedulingv1beta1.PodGroup { return l.Items })
		if err != nil {
			if err := optional("podgroups.scheduling.k8s.io", err); err != nil {
				return err
			}
		}
		cl.Workloads.PodGroups = pgs
	}
	return nil
}
