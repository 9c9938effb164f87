// Package poolpreference is an example out-of-tree plugin for kubectl-sched
// (docs/plugins.md walks through it). PoolPreference reads a node label
// (default "pool") and
//
//   - Filter: rejects nodes whose pool is in args.avoid, with the reason
//     ErrReasonAvoidedPool (UnschedulableAndUnresolvable: evicting pods
//     cannot change a node's pool), and explains the rejection to
//     `explain` (ExplainFilter: which pool, and that the args avoid it);
//   - Score: prefers the pools in args.prefer, the first most: with n
//     preferred pools the i-th (from 0) scores 100*(n-i)/n, other nodes 0.
//
// Args (PoolPreferenceArgs): labelKey (default "pool"), prefer, avoid.
// A pool may not be both preferred and avoided.
package poolpreference

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

const (
	// Name is the plugin's name in the registry and in configurations.
	Name = "PoolPreference"
	// DefaultLabelKey is the node label read when args.labelKey is empty.
	DefaultLabelKey = "pool"
	// ErrReasonAvoidedPool is the Filter reason; explain and the FitError
	// message quote it ("3 node(s) are in an avoided pool").
	ErrReasonAvoidedPool = "node(s) are in an avoided pool"
)

// PoolPreferenceArgs are the plugin's args in a KubeSchedulerConfiguration's
// pluginConfig. A plugin's args are a runtime.Object: TypeMeta plus
// DeepCopyObject, written by hand here instead of generated.
type PoolPreferenceArgs struct {
	metav1.TypeMeta `json:",inline"`

	// LabelKey is the node label that names the pool.
	LabelKey string `json:"labelKey,omitempty"`
	// Prefer lists pools in order of preference.
	Prefer []string `json:"prefer,omitempty"`
	// Avoid lists pools no pod goes to.
	Avoid []string `json:"avoid,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (a *PoolPreferenceArgs) DeepCopyObject() runtime.Object {
	c := *a
	c.Prefer = slices.Clone(a.Prefer)
	c.Avoid = slices.Clone(a.Avoid)
	return &c
}

// NewArgs returns the empty args the configuration is decoded into.
func NewArgs() runtime.Object { return &PoolPreferenceArgs{} }

// PoolPreference is the plugin. Its state is computed once, in New: nothing
// depends on the pod, so there is no PreFilter/PreScore state to keep.
type PoolPreference struct {
	labelKey string
	avoid    map[string]bool
	score    map[string]int64
}

var (
	_ schedcore.FilterPlugin      = (*PoolPreference)(nil)
	_ schedcore.ScorePlugin       = (*PoolPreference)(nil)
	_ schedcore.EnqueueExtensions = (*PoolPreference)(nil)
	_ schedcore.FilterExplainer   = (*PoolPreference)(nil)
)

// New builds the plugin from its args (nil means defaults), validating them
// with field paths relative to the args, as the in-tree plugins do.
func New(_ context.Context, obj runtime.Object, _ *schedcore.Handle) (schedcore.Plugin, error) {
	args := &PoolPreferenceArgs{}
	if obj != nil {
		a, ok := obj.(*PoolPreferenceArgs)
		if !ok {
			return nil, fmt.Errorf("want args of type PoolPreferenceArgs, got %T", obj)
		}
		args = a
	}
	pl := &PoolPreference{labelKey: args.LabelKey, avoid: map[string]bool{}, score: map[string]int64{}}
	if pl.labelKey == "" {
		pl.labelKey = DefaultLabelKey
	}
	for i, p := range args.Avoid {
		if slices.Contains(args.Prefer, p) {
			return nil, fmt.Errorf("avoid[%d]: Invalid value: %q: the pool is also in prefer", i, p)
		}
		pl.avoid[p] = true
	}
	n := int64(len(args.Prefer))
	for i, p := range args.Prefer {
		if _, dup := pl.score[p]; dup {
			return nil, fmt.Errorf("prefer[%d]: Duplicate value: %q", i, p)
		}
		pl.score[p] = schedcore.MaxNodeScore * (n - int64(i)) / n
	}
	return pl, nil
}

// Name returns the plugin's name.
func (pl *PoolPreference) Name() string { return Name }

// Filter rejects nodes of an avoided pool. The reason is a constant: no
// allocation on the hot path, even when failing.
func (pl *PoolPreference) Filter(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) *schedcore.Status {
	if pl.avoid[nodeInfo.Node().Labels[pl.labelKey]] {
		return schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonAvoidedPool)
	}
	return nil
}

// ExplainFilter says, for a node Filter rejected, which pool it is in:
// what `explain` shows as the gap ("PoolPreference: node is in pool spot,
// which the args avoid"). Nothing on the node can change that, so the
// shortfall is 1.
func (pl *PoolPreference) ExplainFilter(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo, _ *schedcore.Status) *schedcore.FilterExplanation {
	pool := nodeInfo.Node().Labels[pl.labelKey]
	return schedcore.NewFilterExplanation(1, fmt.Sprintf("node is in pool %s, which the args avoid (label %s)", pool, pl.labelKey))
}

// Score is the node's pool's preference, already in [0, 100]: the plugin
// needs no NormalizeScore.
func (pl *PoolPreference) Score(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, nodeInfo *schedcore.NodeInfo) (int64, *schedcore.Status) {
	return pl.score[nodeInfo.Node().Labels[pl.labelKey]], nil
}

// EventsToRegister: a pod this plugin rejected may fit once a node of
// another pool appears or a node's labels change.
func (pl *PoolPreference) EventsToRegister(context.Context) ([]schedcore.ClusterEventWithHint, error) {
	return []schedcore.ClusterEventWithHint{
		{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeLabel}, QueueingHintFn: pl.isSchedulableAfterNodeChange},
	}, nil
}

// isSchedulableAfterNodeChange queues the pod when the new or changed node
// is not in an avoided pool.
func (pl *PoolPreference) isSchedulableAfterNodeChange(_ logr.Logger, _ *v1.Pod, oldObj, newObj any) (schedcore.QueueingHint, error) {
	_, node, err := helper.As[*v1.Node](oldObj, newObj)
	if err != nil {
		return schedcore.Queue, err
	}
	if pl.avoid[node.Labels[pl.labelKey]] {
		return schedcore.QueueSkip, nil
	}
	return schedcore.Queue, nil
}
