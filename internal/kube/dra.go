package kube

import (
	"context"
	"fmt"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// listDRA lists the resource.k8s.io/v1 objects the DynamicResources plugin
// reads: DeviceClasses, ResourceSlices, DeviceTaintRules (cluster-wide),
// ResourceClaims and ResourceClaimTemplates (in ns, or all). A kind the
// user may not list or the cluster does not serve becomes a warning.
func listDRA(ctx context.Context, c *Clients, ns string, cl *snapshot.Cluster) error {
	r := c.Kube.ResourceV1()
	d := &cl.DRA
	steps := []struct {
		what string
		run  func() error
	}{
		{"deviceclasses", func() (e error) {
			d.DeviceClasses, e = listAll(ctx, r.DeviceClasses().List, func(l *resourceapi.DeviceClassList) []resourceapi.DeviceClass { return l.Items })
			return
		}},
		{"resourceslices", func() (e error) {
			d.ResourceSlices, e = listAll(ctx, r.ResourceSlices().List, func(l *resourceapi.ResourceSliceList) []resourceapi.ResourceSlice { return l.Items })
			return
		}},
		{"devicetaintrules", func() (e error) {
			d.DeviceTaintRules, e = listAll(ctx, r.DeviceTaintRules().List, func(l *resourceapi.DeviceTaintRuleList) []resourceapi.DeviceTaintRule { return l.Items })
			return
		}},
		{"resourceclaims", func() (e error) {
			d.ResourceClaims, e = listAll(ctx, r.ResourceClaims(ns).List, func(l *resourceapi.ResourceClaimList) []resourceapi.ResourceClaim { return l.Items })
			return
		}},
		{"resourceclaimtemplates", func() (e error) {
			d.ResourceClaimTemplates, e = listAll(ctx, r.ResourceClaimTemplates(ns).List, func(l *resourceapi.ResourceClaimTemplateList) []resourceapi.ResourceClaimTemplate { return l.Items })
			return
		}},
	}
	for _, s := range steps {
		err := s.run()
		if err == nil {
			continue
		}
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
			cl.Warnings = append(cl.Warnings, fmt.Sprintf("warning: cannot list %s (%v): the snapshot has none", s.what, err))
			continue
		}
		return fmt.Errorf("listing %s: %w", s.what, err)
	}
	return nil
}
