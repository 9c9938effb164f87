package defaultbinder

import (
	"context"
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.DefaultBinder

// ErrNoBinder is returned (as an Error status) when the driver set no Binder.
var ErrNoBinder = errors.New("no binder configured: this driver cannot bind pods")

// DefaultBinder binds pods with the handle's Binder.
type DefaultBinder struct {
	handle *schedcore.Handle
}

var _ schedcore.BindPlugin = (*DefaultBinder)(nil)

// New returns the plugin; it takes no args. The Binder is read from the
// handle at bind time, so a driver may set it after building the profile.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	return &DefaultBinder{handle: h}, nil
}

// Name returns the plugin's name.
func (b *DefaultBinder) Name() string { return Name }

// Bind binds the pod to the node.
func (b *DefaultBinder) Bind(ctx context.Context, _ *schedcore.CycleState, p *v1.Pod, nodeName string) *schedcore.Status {
	if b.handle == nil || b.handle.Binder() == nil {
		return schedcore.AsStatus(ErrNoBinder)
	}
	// The pod's name is made (and the arguments boxed) only when the line
	// is written: once a placement, for nothing, when it is not.
	if l := b.handle.Logger().V(3); l.Enabled() {
		l.Info("Attempting to bind pod to node", "pod", schedcore.PodName(p), "node", nodeName)
	}
	if err := b.handle.Binder().Bind(ctx, p, nodeName); err != nil {
		return schedcore.AsStatus(err)
	}
	return nil
}
