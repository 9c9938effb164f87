package schedcore

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Framework is what plugins may ask of their profile's framework through
// Handle.Framework: the plugins by name, the PreFilter extensions and the
// filters, as preemption re-runs them on a node with victims removed, and
// the pods waiting at Permit. The runtime (schedcore/runtime) implements
// it, as kube's framework/runtime implements framework.Framework.
type Framework interface {
	// Plugin returns the profile's plugin of that name.
	Plugin(name string) (Plugin, bool)
	// RunPreFilterExtensionAddPod runs the PreFilter plugins' AddPod.
	RunPreFilterExtensionAddPod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToAdd *PodInfo, nodeInfo *NodeInfo) *Status
	// RunPreFilterExtensionRemovePod runs the PreFilter plugins' RemovePod.
	RunPreFilterExtensionRemovePod(ctx context.Context, state *CycleState, podToSchedule *v1.Pod, podInfoToRemove *PodInfo, nodeInfo *NodeInfo) *Status
	// RunFilterPluginsWithNominatedPods runs the filters on a node, with
	// the pods nominated to it added when they outrank pod, as kube does.
	RunFilterPluginsWithNominatedPods(ctx context.Context, state *CycleState, pod *v1.Pod, info *NodeInfo) *Status
	// RunReservePluginsReserve runs Reserve (pod-group preemption reserves
	// each preemptor it puts back while it reprieves victims).
	RunReservePluginsReserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string) *Status
	// RunReservePluginsUnreserve runs Unreserve, undoing Reserve.
	RunReservePluginsUnreserve(ctx context.Context, state *CycleState, pod *v1.Pod, nodeName string)
	// GetWaitingPod returns a pod waiting at Permit, nil if it is not.
	GetWaitingPod(uid types.UID) WaitingPod
	// IterateOverWaitingPods calls fn for each pod waiting at Permit, in
	// UID order.
	IterateOverWaitingPods(fn func(WaitingPod))
	// RejectWaitingPod rejects a waiting pod; it reports whether it was
	// waiting.
	RejectWaitingPod(uid types.UID) bool
}

// WaitingPod is a pod held at Permit: it is assumed on its node (its
// resources are counted) until every plugin that asked it to wait allows
// it, one rejects it, or a plugin's timeout passes. Plugins reach waiting
// pods through the Handle (GetWaitingPod, IterateOverWaitingPods).
type WaitingPod interface {
	// Pod returns the waiting pod.
	Pod() *v1.Pod
	// GetPod returns the waiting pod (kube's name for Pod).
	GetPod() *v1.Pod
	// Timeout is the longest of the plugins' Permit timeouts: how long the
	// pod may wait at most.
	Timeout() time.Duration
	// PendingPlugins lists plugins that have not allowed the pod yet.
	PendingPlugins() []string
	// Allow marks plugin as allowing the pod; the last one lets it bind.
	Allow(plugin string)
	// Reject rejects the pod on behalf of plugin.
	Reject(plugin, msg string)
	// Decided reports whether the pod was allowed or rejected.
	Decided() bool
	// Rejected reports whether the pod was rejected.
	Rejected() bool
}
