// Package volumes holds the default profile's four volume plugins —
// VolumeRestrictions, NodeVolumeLimits, VolumeBinding and VolumeZone — as
// placeholders until volume scheduling lands (issue #6): for a pod without
// PersistentVolumeClaim or generic ephemeral volumes they skip, exactly as
// kube-scheduler's do; a pod that has such volumes is rejected in PreFilter
// by VolumeBinding with a clear "not supported yet" status instead of
// getting a wrong answer.
package volumes

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// ErrReasonNotSupported is VolumeBinding's PreFilter reason for pods with claims.
const ErrReasonNotSupported = "pod has PersistentVolumeClaim volumes, which kubectl-sched does not schedule yet"

type plugin struct{ name string }

func (p *plugin) Name() string { return p.name }

// PreFilter skips pods without claims; VolumeBinding rejects pods with them.
func (p *plugin) PreFilter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	claims := claimNames(pod)
	if len(claims) == 0 || p.name != names.VolumeBinding {
		return nil, schedcore.NewStatus(schedcore.Skip)
	}
	return nil, schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf("%s (%s)", ErrReasonNotSupported, strings.Join(claims, ", ")))
}

// Filter is never reached: PreFilter always skips or rejects.
func (p *plugin) Filter(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo) *schedcore.Status {
	return nil
}

// EventsToRegister: a claim appearing or changing may make the pod
// schedulable once volumes are supported; until then nothing helps but a
// pod update.
func (p *plugin) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{{Event: schedcore.ClusterEvent{Resource: schedcore.PersistentVolumeClaim, ActionType: schedcore.Add | schedcore.Update}}}, nil
}

func claimNames(pod *v1.Pod) []string {
	var out []string
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			out = append(out, v.PersistentVolumeClaim.ClaimName)
		case v.Ephemeral != nil:
			out = append(out, pod.Name+"-"+v.Name)
		}
	}
	return out
}

var (
	_ schedcore.PreFilterPlugin   = (*plugin)(nil)
	_ schedcore.FilterPlugin      = (*plugin)(nil)
	_ schedcore.EnqueueExtensions = (*plugin)(nil)
)

// NewVolumeRestrictions builds the VolumeRestrictions placeholder.
func NewVolumeRestrictions(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
	return &plugin{name: names.VolumeRestrictions}, nil
}

// NewNodeVolumeLimits builds the NodeVolumeLimits placeholder.
func NewNodeVolumeLimits(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
	return &plugin{name: names.NodeVolumeLimits}, nil
}

// NewVolumeZone builds the VolumeZone placeholder.
func NewVolumeZone(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
	return &plugin{name: names.VolumeZone}, nil
}

// NewVolumeBindingArgs returns empty VolumeBinding args.
func NewVolumeBindingArgs() runtime.Object { return &configv1.VolumeBindingArgs{} }

// NewVolumeBinding builds the VolumeBinding placeholder; its args are
// accepted (bindTimeoutSeconds must be non-negative) for config
// compatibility.
func NewVolumeBinding(_ context.Context, args runtime.Object, _ *schedcore.Handle) (schedcore.Plugin, error) {
	if args != nil {
		a, ok := args.(*configv1.VolumeBindingArgs)
		if !ok {
			return nil, fmt.Errorf("want args to be of type VolumeBindingArgs, got %T", args)
		}
		if a.BindTimeoutSeconds != nil && *a.BindTimeoutSeconds < 0 {
			return nil, fmt.Errorf("bindTimeoutSeconds: Invalid value: %d: invalid BindTimeoutSeconds, should not be a negative value", *a.BindTimeoutSeconds)
		}
	}
	return &plugin{name: names.VolumeBinding}, nil
}
