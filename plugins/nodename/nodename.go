package nodename

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.NodeName
	// ErrReason is the Filter reason when spec.nodeName names another node.
	ErrReason = "node(s) didn't match the requested node name"
)

// NodeName checks that a pod's spec.nodeName, if set, is the node.
type NodeName struct{}

var (
	_ schedcore.PreFilterPlugin   = (*NodeName)(nil)
	_ schedcore.FilterPlugin      = (*NodeName)(nil)
	_ schedcore.EnqueueExtensions = (*NodeName)(nil)
	_ schedcore.NodeLocalPlugin   = (*NodeName)(nil)
	_ schedcore.FilterExplainer   = (*NodeName)(nil)
	_ schedcore.PassingFilter     = (*NodeName)(nil)
)

// NodeLocal is true: the verdict compares the node's own name.
func (pl *NodeName) NodeLocal(*v1.Pod) bool { return true }

// New returns the plugin; it takes no args.
func New(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
	return &NodeName{}, nil
}

// Name returns the plugin's name.
func (pl *NodeName) Name() string { return Name }

// EventsToRegister: only a new node (the one named) can help; no hint is
// needed, as the pod is retried with backoff anyway.
func (pl *NodeName) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add}},
	}, nil
}

// PreFilter restricts the evaluation to the named node, if any.
func (pl *NodeName) PreFilter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	if pod.Spec.NodeName != "" {
		return &schedcore.PreFilterResult{NodeNames: sets.New(pod.Spec.NodeName)}, nil
	}
	return nil, nil
}

// Filter rejects every node but the named one.
func (pl *NodeName) Filter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	if !Fits(pod, nodeInfo) {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// PassesEveryNode: Filter passes every node for a pod without
// spec.nodeName (Fits), so its cycle's filter loop leaves it out (on
// 5000 nodes it was millions of calls that could not fail).
func (pl *NodeName) PassesEveryNode(pod *v1.Pod) bool { return len(pod.Spec.NodeName) == 0 }

// ExplainFilter names the node the pod asks for.
func (pl *NodeName) ExplainFilter(_ context.Context, _ *schedcore.CycleState, pod *v1.Pod, _ *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	return schedcore.NewFilterExplanation(1, fmt.Sprintf("the pod asks for node %q (spec.nodeName)", pod.Spec.NodeName))
}

// FilterShortfall is ExplainFilter's shortfall, always 1: the pod names another node.
func (pl *NodeName) FilterShortfall(context.Context, *schedcore.CycleState, *v1.Pod, *schedcore.NodeInfo, *schedcore.Status) float64 {
	return 1
}

// Fits reports whether the pod names no node or names this one.
func Fits(pod *v1.Pod, nodeInfo *schedcore.NodeInfo) bool {
	return len(pod.Spec.NodeName) == 0 || pod.Spec.NodeName == nodeInfo.Name()
}

// PodBlind: PreFilter and Filter read the pod's spec.nodeName and the
// node's name; Filter rejects UnschedulableAndUnresolvable.
func (pl *NodeName) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter | schedcore.BlindFilter
}

var _ schedcore.PodBlindPlugin = (*NodeName)(nil)
