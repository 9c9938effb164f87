package queuesort

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.PrioritySort

// PrioritySort orders pods by priority, then by queue timestamp.
type PrioritySort struct{}

var _ schedcore.QueueSortPlugin = (*PrioritySort)(nil)

// New returns the plugin; it takes no args.
func New(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
	return &PrioritySort{}, nil
}

// Name returns the plugin's name.
func (pl *PrioritySort) Name() string { return Name }

// Less reports whether a goes before b: higher priority first, then the
// earlier timestamp. Equal priority and timestamp are not less either way.
func (pl *PrioritySort) Less(a, b *schedcore.QueuedPodInfo) bool {
	p1, p2 := a.Priority(), b.Priority()
	return p1 > p2 || (p1 == p2 && a.Timestamp.Before(b.Timestamp))
}
