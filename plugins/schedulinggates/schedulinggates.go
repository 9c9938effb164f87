package schedulinggates

import (
	"context"
	"fmt"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.SchedulingGates
	// ErrReasonFormat is the PreEnqueue reason, formatted with the gate names.
	ErrReasonFormat = "waiting for scheduling gates: %v"
)

// SchedulingGates holds pods that carry spec.schedulingGates.
type SchedulingGates struct{}

var (
	_ schedcore.PreEnqueuePlugin  = (*SchedulingGates)(nil)
	_ schedcore.EnqueueExtensions = (*SchedulingGates)(nil)
)

// New returns the plugin; it takes no args.
func New(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
	return &SchedulingGates{}, nil
}

// Name returns the plugin's name.
func (pl *SchedulingGates) Name() string { return Name }

// PreEnqueue gates the pod while it has scheduling gates.
func (pl *SchedulingGates) PreEnqueue(_ context.Context, p *v1.Pod) *schedcore.Status {
	if len(p.Spec.SchedulingGates) == 0 {
		return nil
	}
	gates := make([]string, 0, len(p.Spec.SchedulingGates))
	for _, g := range p.Spec.SchedulingGates {
		gates = append(gates, g.Name)
	}
	return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, fmt.Sprintf(ErrReasonFormat, gates))
}

// EventsToRegister: only the removal of the pod's gates can ungate it.
func (pl *SchedulingGates) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodSchedulingGatesEliminated}, QueueingHintFn: pl.isSchedulableAfterUpdateTargetPodSchedulingGatesEliminated},
	}, nil
}

func (pl *SchedulingGates) isSchedulableAfterUpdateTargetPodSchedulingGatesEliminated(logr.Logger, *v1.Pod, any, any) (schedcore.QueueingHint, error) {
	return schedcore.Queue, nil
}
