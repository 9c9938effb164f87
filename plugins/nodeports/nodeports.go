package nodeports

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// statusConflict is Filter's rejection, shared by every call.
var statusConflict = schedcore.NewSharedStatus(schedcore.Unschedulable, ErrReason)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.NodePorts

	preFilterStateKey schedcore.StateKey = "PreFilter" + Name

	// ErrReason is the Filter reason when a wanted host port is in use.
	ErrReason = "node(s) didn't have free ports for the requested pod ports"
)

// NodePorts checks that the node has the pod's host ports free.
type NodePorts struct{}

var (
	_ schedcore.PreFilterPlugin   = (*NodePorts)(nil)
	_ schedcore.FilterPlugin      = (*NodePorts)(nil)
	_ schedcore.EnqueueExtensions = (*NodePorts)(nil)
	_ schedcore.NodeLocalPlugin   = (*NodePorts)(nil)
	_ schedcore.FilterExplainer   = (*NodePorts)(nil)
	// The framework remembers Filter's verdicts (its rejection is a shared
	// status) per node, keyed by the wanted ports, while the node is
	// unchanged.
	_ schedcore.NodeLocalFilter = (*NodePorts)(nil)
)

// NodeLocal is true: the verdict reads the host ports used on the node
// itself.
func (pl *NodePorts) NodeLocal(*v1.Pod) bool { return true }

// New returns the plugin; it takes no args.
func New(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
	return &NodePorts{}, nil
}

// Name returns the plugin's name.
func (pl *NodePorts) Name() string { return Name }

// preFilterState is the pod's wanted host ports.
type preFilterState []v1.ContainerPort

// Clone returns the state itself: other pods do not change it.
func (s preFilterState) Clone() schedcore.StateData { return s }

// PreFilter collects the wanted host ports; Skip when there are none.
func (pl *NodePorts) PreFilter(_ context.Context, cycleState *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	s := schedcore.HostPorts(pod)
	if len(s) == 0 {
		return nil, schedcore.Skipped()
	}
	cycleState.Write(preFilterStateKey, preFilterState(s))
	return nil, nil
}

// EventsToRegister: a deleted assigned pod may free a port; a new node has
// all ports free.
func (pl *NodePorts) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.AssignedPod, ActionType: schedcore.Delete}, QueueingHintFn: pl.isSchedulableAfterAssignedPodDeleted},
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add}},
	}, nil
}

// isSchedulableAfterAssignedPodDeleted queues the pod when the deleted pod
// was assigned (or nominated) and held one of the ports the pod wants.
func (pl *NodePorts) isSchedulableAfterAssignedPodDeleted(logger logr.Logger, pod *v1.Pod, oldObj, _ any) (schedcore.QueueingHint, error) {
	deletedPod, _, err := helper.As[*v1.Pod](oldObj, nil)
	if err != nil {
		return schedcore.Queue, err
	}
	if deletedPod.Spec.NodeName == "" && deletedPod.Status.NominatedNodeName == "" {
		logger.V(4).Info("the deleted pod is unscheduled and it doesn't make the target pod schedulable", "pod", schedcore.PodName(pod), "deletedPod", schedcore.PodName(deletedPod))
		return schedcore.QueueSkip, nil
	}
	ports := schedcore.HostPorts(deletedPod)
	if len(ports) == 0 {
		return schedcore.QueueSkip, nil
	}
	portsInUse := make(schedcore.HostPortInfo, len(ports))
	for _, p := range ports {
		portsInUse.Add(p.HostIP, string(p.Protocol), p.HostPort)
	}
	if fitsPorts(schedcore.HostPorts(pod), portsInUse) {
		logger.V(4).Info("the deleted pod and the target pod don't have any common port(s), returning QueueSkip as deleting this Pod won't make the Pod schedulable", "pod", schedcore.PodName(pod), "deletedPod", schedcore.PodName(deletedPod))
		return schedcore.QueueSkip, nil
	}
	logger.V(4).Info("the deleted pod and the target pod have any common port(s), returning Queue as deleting this Pod may make the Pod schedulable", "pod", schedcore.PodName(pod), "deletedPod", schedcore.PodName(deletedPod))
	return schedcore.Queue, nil
}

// Filter rejects the node if a wanted port is in use there.
func (pl *NodePorts) Filter(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	wantPorts, err := schedcore.ReadAs[preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if !fitsPorts(wantPorts, nodeInfo.UsedPorts) {
		return statusConflict
	}
	return nil
}

// FilterKey is the wanted host ports PreFilter collected (address,
// protocol and port, all that Filter compares): with the ports used on the
// node, all Filter reads.
func (pl *NodePorts) FilterKey(cycleState *schedcore.CycleState, _ *v1.Pod, k *schedcore.MemoKey) bool {
	wantPorts, err := schedcore.ReadAs[preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return false
	}
	k.Int(int64(len(wantPorts)))
	for i := range wantPorts {
		k.String(wantPorts[i].HostIP).String(string(wantPorts[i].Protocol)).Int(int64(wantPorts[i].HostPort))
	}
	return true
}

// ExplainFilter names each wanted host port in use on the node and the
// pods holding it. The shortfall is the share of the wanted ports taken.
func (pl *NodePorts) ExplainFilter(_ context.Context, cycleState *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	wantPorts, err := schedcore.ReadAs[preFilterState](cycleState, preFilterStateKey)
	if err != nil {
		return nil
	}
	var out []string
	for _, cp := range wantPorts {
		proto := string(cp.Protocol)
		if proto == "" {
			proto = string(v1.ProtocolTCP)
		}
		if !nodeInfo.UsedPorts.CheckConflict(cp.HostIP, proto, cp.HostPort) {
			continue
		}
		var owners []string
		for _, pi := range nodeInfo.Pods {
			used := schedcore.HostPortInfo{}
			for _, p := range schedcore.HostPorts(pi.Pod) {
				used.Add(p.HostIP, string(p.Protocol), p.HostPort)
			}
			if used.CheckConflict(cp.HostIP, proto, cp.HostPort) {
				owners = append(owners, schedcore.PodName(pi.Pod))
			}
		}
		port := fmt.Sprintf("host port %d/%s", cp.HostPort, proto)
		if cp.HostIP != "" && cp.HostIP != schedcore.DefaultBindAllHostIP {
			port = fmt.Sprintf("host port %s:%d/%s", cp.HostIP, cp.HostPort, proto)
		}
		if len(owners) == 0 {
			out = append(out, port+" in use")
		} else {
			out = append(out, fmt.Sprintf("%s in use by %s", port, strings.Join(owners, ", ")))
		}
	}
	if len(out) == 0 {
		return nil
	}
	return schedcore.NewFilterExplanation(schedcore.ShortfallOf(int64(len(out)), int64(len(wantPorts))), out...)
}

// Fits reports whether none of the pod's host ports is in use on the node.
func Fits(pod *v1.Pod, nodeInfo *schedcore.NodeInfo) bool {
	return fitsPorts(schedcore.HostPorts(pod), nodeInfo.UsedPorts)
}

func fitsPorts(wantPorts []v1.ContainerPort, portsInUse schedcore.HostPortInfo) bool {
	for i := range wantPorts {
		cp := &wantPorts[i]
		if portsInUse.CheckConflict(cp.HostIP, string(cp.Protocol), cp.HostPort) {
			return false
		}
	}
	return true
}

// PodBlind: PreFilter reads the pod's host ports and never rejects.
func (pl *NodePorts) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter
}

var _ schedcore.PodBlindPlugin = (*NodePorts)(nil)
