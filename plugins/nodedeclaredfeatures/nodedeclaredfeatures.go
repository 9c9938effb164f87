package nodedeclaredfeatures

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	versionutil "k8s.io/apimachinery/pkg/util/version"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = names.NodeDeclaredFeatures
	// ErrReason is the Filter reason when the node lacks a needed feature.
	ErrReason = "node(s) didn't match Pod's required features"

	preFilterStateKey schedcore.StateKey = "PreFilter" + Name
)

// version is the kube-scheduler version the features are inferred for.
var version = versionutil.MustParse("1.37.2")

// NodeDeclaredFeatures checks that a node declares every feature the pod
// needs.
type NodeDeclaredFeatures struct {
	enabled   bool
	framework *ndf.Framework
}

var (
	_ schedcore.PreFilterPlugin   = (*NodeDeclaredFeatures)(nil)
	_ schedcore.FilterPlugin      = (*NodeDeclaredFeatures)(nil)
	_ schedcore.EnqueueExtensions = (*NodeDeclaredFeatures)(nil)
	_ schedcore.FilterExplainer   = (*NodeDeclaredFeatures)(nil)
)

// New returns the plugin; it takes no args. With the NodeDeclaredFeatures
// gate off it does nothing.
func New(_ context.Context, _ runtime.Object, h *schedcore.Handle) (schedcore.Plugin, error) {
	f := schedcore.DefaultFeatures
	if h != nil {
		f = h.Features()
	}
	return &NodeDeclaredFeatures{enabled: f.NodeDeclaredFeatures, framework: ndf.DefaultFramework}, nil
}

// Name returns the plugin's name.
func (pl *NodeDeclaredFeatures) Name() string { return Name }

type preFilterState struct{ reqs ndf.FeatureSet }

func (s *preFilterState) Clone() schedcore.StateData { return s }

// Needs returns the features the pod needs, as kube infers them for
// scheduling.
func (pl *NodeDeclaredFeatures) Needs(pod *v1.Pod) (ndf.FeatureSet, error) {
	return pl.framework.InferForPodScheduling(&ndf.PodInfo{Spec: &pod.Spec}, version)
}

// PreFilter skips pods that need no feature.
func (pl *NodeDeclaredFeatures) PreFilter(_ context.Context, state *schedcore.CycleState, pod *v1.Pod, _ []*schedcore.NodeInfo) (*schedcore.PreFilterResult, *schedcore.Status) {
	if !pl.enabled {
		return nil, schedcore.Skipped()
	}
	reqs, err := pl.Needs(pod)
	if err != nil {
		return nil, schedcore.AsStatus(err)
	}
	if reqs.IsEmpty() {
		return nil, schedcore.Skipped()
	}
	state.Write(preFilterStateKey, &preFilterState{reqs: reqs})
	return nil, nil
}

// Filter rejects nodes that do not declare every needed feature.
func (pl *NodeDeclaredFeatures) Filter(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	if !pl.enabled {
		return nil
	}
	s, err := schedcore.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil {
		return schedcore.AsStatus(fmt.Errorf("error reading %q from cycle-state: %w", preFilterStateKey, err))
	}
	ok, err := s.reqs.IsSubset(pl.framework.TryMap(nodeInfo.Node().Status.DeclaredFeatures))
	if err != nil {
		return schedcore.AsStatus(err)
	}
	if !ok {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReason)
	}
	return nil
}

// ExplainFilter names the features the pod needs that the node does not
// declare (node.status.declaredFeatures), from the needs PreFilter
// inferred.
func (pl *NodeDeclaredFeatures) ExplainFilter(_ context.Context, state *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	s, err := schedcore.ReadAs[*preFilterState](state, preFilterStateKey)
	if err != nil || nodeInfo.Node() == nil {
		return nil
	}
	res, err := pl.framework.MatchNode(s.reqs, nodeInfo.Node())
	if err != nil || res.IsMatch {
		return nil
	}
	needed, err := pl.framework.Unmap(s.reqs)
	if err != nil || len(needed) == 0 {
		return nil
	}
	missing := res.UnsatisfiedRequirements
	declared := "declares none"
	if d := nodeInfo.Node().Status.DeclaredFeatures; len(d) > 0 {
		declared = "declares " + strings.Join(d, ", ")
	}
	text := fmt.Sprintf("the pod needs node feature(s) %s; %s does not declare %s (it %s)",
		strings.Join(needed, ", "), nodeInfo.Name(), strings.Join(missing, ", "), declared)
	return schedcore.NewFilterExplanation(schedcore.ShortfallOf(int64(len(missing)), int64(len(needed))), text)
}

// EventsToRegister lists the node and pod changes that may help.
func (pl *NodeDeclaredFeatures) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	if !pl.enabled {
		return nil, nil
	}
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeDeclaredFeature}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: schedcore.ClusterEvent{Resource: schedcore.TargetPod, ActionType: schedcore.Update}, QueueingHintFn: pl.isSchedulableAfterTargetPodUpdate},
	}, nil
}

func (pl *NodeDeclaredFeatures) isSchedulableAfterNodeChange(_ logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	oldNode, _ := oldObj.(*v1.Node)
	newNode, ok := newObj.(*v1.Node)
	if !ok {
		return schedcore.Queue, fmt.Errorf("unexpected object %T", newObj)
	}
	if oldNode != nil && slices.Equal(oldNode.Status.DeclaredFeatures, newNode.Status.DeclaredFeatures) {
		return schedcore.QueueSkip, nil
	}
	return schedcore.Queue, nil
}

func (pl *NodeDeclaredFeatures) isSchedulableAfterTargetPodUpdate(_ logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	oldPod, ok1 := oldObj.(*v1.Pod)
	newPod, ok2 := newObj.(*v1.Pod)
	if !ok1 || !ok2 {
		return schedcore.Queue, fmt.Errorf("unexpected objects %T, %T", oldObj, newObj)
	}
	oldReqs, err := pl.Needs(oldPod)
	if err != nil {
		return schedcore.Queue, err
	}
	newReqs, err := pl.Needs(newPod)
	if err != nil {
		return schedcore.Queue, err
	}
	if newReqs.Equal(oldReqs) {
		return schedcore.QueueSkip, nil
	}
	return schedcore.Queue, nil
}

var _ schedcore.NodeLocalPlugin = (*NodeDeclaredFeatures)(nil)

// NodeLocal is true: the verdict reads only the node's declared features.
func (pl *NodeDeclaredFeatures) NodeLocal(*v1.Pod) bool { return true }

// PodBlind: PreFilter reads the pod alone.
func (pl *NodeDeclaredFeatures) PodBlind(*v1.Pod) schedcore.PodBlindness {
	return schedcore.BlindPreFilter
}

var _ schedcore.PodBlindPlugin = (*NodeDeclaredFeatures)(nil)
