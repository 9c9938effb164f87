package defaultpreemption

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// Name is the plugin's name in the registry and in configurations.
const Name = names.DefaultPreemption

// Messages of kube-scheduler v1.37's preemption, word for word.
const (
	// MsgPrefix starts every message the plugin returns.
	MsgPrefix = "preemption: "
	// ErrReasonNoVictims is a node's status when no pod on it has a lower
	// priority than the preemptor.
	ErrReasonNoVictims = "No preemption victims found for incoming pod"
	// ErrReasonNotHelpful is the status of the nodes preemption did not
	// evaluate (their filter status was UnschedulableAndUnresolvable).
	ErrReasonNotHelpful = "Preemption is not helpful for scheduling"
	// MsgPolicyNever is returned for a pod with preemptionPolicy: Never.
	MsgPolicyNever = "not eligible due to preemptionPolicy=Never."
	// MsgTerminatingOnNominated is returned while a victim of an earlier
	// preemption is still terminating on the pod's nominated node.
	MsgTerminatingOnNominated = "not eligible due to a terminating pod on the nominated node."
	// MsgNoCandidateNode is returned when no candidate could be picked.
	MsgNoCandidateNode = "no candidate node for preemption"
	// msgFound is the success message: node, number of victims.
	msgFound = "found a potential placement for pod on node %v, preempting %d victims"
)

// DefaultPreemption is kube-scheduler's PostFilter: when no node fits a
// pod, it looks for a node where evicting lower-priority pods makes room,
// evicts them through the handle's Evictor and nominates the node.
type DefaultPreemption struct {
	h    *schedcore.Handle
	args args
}

var (
	_ schedcore.PostFilterPlugin    = (*DefaultPreemption)(nil)
	_ schedcore.PostFilterExplainer = (*DefaultPreemption)(nil)
)

// New returns the plugin; args is nil or *configv1.DefaultPreemptionArgs.
func New(_ context.Context, obj runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	a, err := parseArgs(obj)
	if err != nil {
		return nil, err
	}
	return &DefaultPreemption{h: h, args: a}, nil
}

// Name returns the plugin's name.
func (pl *DefaultPreemption) Name() string { return Name }

// PostFilter evaluates preemption for pod and, when a candidate node is
// found, evicts its victims, clears the nominations of lower-priority pods
// nominated there, and nominates the node (ModeOverride). Every message is
// prefixed with "preemption: ", as kube does. Evictions are synchronous:
// kube's SchedulerAsyncPreemption only changes when they happen, and its
// PreEnqueue gate ("waiting for the preemption for this pod to be
// finished") never has anything to wait for here.
func (pl *DefaultPreemption) PostFilter(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, m *schedcore.NodeToStatus) (*schedcore.PostFilterResult, *schedcore.Status) {
	if f := pl.h.Preemption().Attempted; f != nil {
		defer f()
	}
	res, st := pl.preempt(ctx, state, pod, m)
	if msg := st.Message(); msg != "" {
		return res, schedcore.NewStatus(st.Code(), MsgPrefix+msg)
	}
	return res, st
}

func (pl *DefaultPreemption) preempt(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, m *schedcore.NodeToStatus) (*schedcore.PostFilterResult, *schedcore.Status) {
	c, res, st := pl.Evaluate(ctx, state, pod, m)
	if !st.IsSuccess() {
		return res, st
	}
	if st := pl.actuate(ctx, c, pod); !st.IsSuccess() {
		return nil, st
	}
	return nominate(c.Node), schedcore.NewStatus(schedcore.Success, FoundMessage(c))
}

// FoundMessage is kube's success message for a candidate, without the
// "preemption: " prefix.
func FoundMessage(c *Candidate) string { return fmt.Sprintf(msgFound, c.Node, len(c.Victims)) }

// ExplainPostFilter is what PostFilter would do, evicting nothing: the
// node it would nominate and its victims, or kube's message saying why
// preemption cannot help. Nil when the evaluation fails internally.
func (pl *DefaultPreemption) ExplainPostFilter(ctx context.Context, state *schedcore.CycleState, pod *v1.Pod, m *schedcore.NodeToStatus) *schedcore.PostFilterExplanation {
	c, _, st := pl.Evaluate(ctx, state, pod, m)
	switch {
	case st.IsSuccess():
		return &schedcore.PostFilterExplanation{Node: c.Node, Victims: c.Victims, PDBViolations: c.NumPDBViolations, Message: MsgPrefix + FoundMessage(c)}
	case st.Code() == schedcore.Error:
		return nil
	}
	return &schedcore.PostFilterExplanation{Message: MsgPrefix + st.Message()}
}

func nominate(node string) *schedcore.PostFilterResult {
	return &schedcore.PostFilterResult{NominatingInfo: &schedcore.NominatingInfo{NominatedNodeName: node, NominatingMode: schedcore.ModeOverride}}
}

// actuate is kube's prepareCandidate: evict every victim not already being
// deleted (a victim waiting on Permit is rejected in memory instead), then
// clear the nominations of lower-priority pods nominated to the node.
func (pl *DefaultPreemption) actuate(ctx context.Context, c *Candidate, preemptor *v1.Pod) *schedcore.Status {
	ev := pl.h.Preemption().Evictor
	if f := pl.h.Preemption().Victims; f != nil {
		f(len(c.Victims))
	}
	fw := pl.h.Framework()
	for _, victim := range c.Victims {
		if victim.DeletionTimestamp != nil {
			continue
		}
		if fw != nil {
			if wp := fw.GetWaitingPod(victim.UID); wp != nil {
				wp.Reject(Name, "preempted")
				pl.event(victim, preemptor, c.Node, " (in kube-scheduler memory).")
				continue
			}
		}
		if ev == nil {
			continue
		}
		if err := ev.PreemptPod(ctx, preemptor, victim, c.Node); err != nil {
			return schedcore.AsStatus(err)
		}
		pl.event(victim, preemptor, c.Node, "")
	}
	if ev != nil {
		if lower := pl.lowerPriorityNominatedPods(preemptor, c.Node); len(lower) > 0 {
			// Not critical, as in kube: the error is dropped.
			_ = ev.ClearNominatedNodeName(ctx, lower)
		}
	}
	return nil
}

func (pl *DefaultPreemption) event(victim, preemptor *v1.Pod, node, suffix string) {
	if pl.h.Events() == nil {
		return
	}
	pl.h.Events().Eventf(victim, preemptor, v1.EventTypeNormal, "Preempted", "Preempting", "Preempted by pod %v on node %v%s", preemptor.UID, node, suffix)
}

// lowerPriorityNominatedPods are the pods nominated to node with a lower
// priority than the preemptor: they may no longer fit there.
func (pl *DefaultPreemption) lowerPriorityNominatedPods(preemptor *v1.Pod, node string) []*v1.Pod {
	prio := schedcore.PodPriority(preemptor)
	var out []*v1.Pod
	for _, pi := range pl.h.NominatedPodsForNode(node) {
		if schedcore.PodPriority(pi.Pod) < prio {
			out = append(out, pi.Pod)
		}
	}
	return out
}

// PodEligibleToPreemptOthers is kube's eligibility check: a pod with
// preemptionPolicy Never cannot preempt, nor can a pod whose nominated node
// still has a lower-priority pod terminating because of preemption (unless
// the filters found that node UnschedulableAndUnresolvable).
func (pl *DefaultPreemption) PodEligibleToPreemptOthers(pod *v1.Pod, nominatedNodeStatus *schedcore.Status) (bool, string) {
	if pod.Spec.PreemptionPolicy != nil && *pod.Spec.PreemptionPolicy == v1.PreemptNever {
		return false, MsgPolicyNever
	}
	nnn := pod.Status.NominatedNodeName
	if nnn == "" {
		return true, ""
	}
	if nominatedNodeStatus.Code() == schedcore.UnschedulableAndUnresolvable {
		return true, ""
	}
	ni, err := pl.h.Snapshot().Get(nnn)
	if err != nil {
		return true, ""
	}
	prio := schedcore.PodPriority(pod)
	l := pl.groupLister() // GenericWorkload: a member's priority is its group's
	for _, p := range ni.Pods {
		if victimPriority(p.Pod, l) < prio && PodTerminatingByPreemption(p.Pod) {
			return false, MsgTerminatingOnNominated
		}
	}
	return true, ""
}

// PodTerminatingByPreemption reports whether the pod is being deleted
// after the scheduler set its DisruptionTarget condition for preemption.
func PodTerminatingByPreemption(p *v1.Pod) bool {
	if p.DeletionTimestamp == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == v1.DisruptionTarget {
			return c.Status == v1.ConditionTrue && c.Reason == v1.PodReasonPreemptionByScheduler
		}
	}
	return false
}

// calculateNumCandidates is how many candidates the dry run looks for:
// minCandidateNodesPercentage of the nodes, at least
// minCandidateNodesAbsolute, at most all of them.
func (pl *DefaultPreemption) calculateNumCandidates(numNodes int32) int32 {
	n := numNodes * pl.args.minCandidateNodesPercentage / 100
	if n < pl.args.minCandidateNodesAbsolute {
		n = pl.args.minCandidateNodesAbsolute
	}
	if n > numNodes {
		n = numNodes
	}
	return n
}

// GetOffsetAndNumCandidates returns where the scan over the potential nodes
// starts and how many candidates it looks for. kube starts at a random
// offset; here the driver's PreemptionHooks.Offset decides (0 if unset).
func (pl *DefaultPreemption) GetOffsetAndNumCandidates(numNodes int32) (int32, int32) {
	var off int32
	if f := pl.h.Preemption().Offset; f != nil && numNodes > 0 {
		off = f(numNodes)
	}
	return off, pl.calculateNumCandidates(numNodes)
}

// PodBlind: with no Unschedulable node there is no candidate: PostFilter
// reads the pod's preemption policy and, for a nominated pod, its
// node's status, which is UnschedulableAndUnresolvable then, and answers
// that preemption cannot help.
func (pl *DefaultPreemption) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPostFilter
}

var _ schedcore.PodBlindPlugin = (*DefaultPreemption)(nil)
