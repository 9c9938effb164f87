package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// The -explain mode records, for each pending pod of the snapshot, one
// scheduling cycle against the snapshot as loaded (nothing placed before
// it, afterPlacements 0); -explain-run records each pod's cycle in the
// placement run instead, against the state the earlier placements left
// (afterPlacements = their number, the assumed volumes included); both in
// the format of the shared conformance explain
// fixtures: the PreFilter outcome, per node every filter plugin that
// rejects it (each run on its own) with the one the framework stops at
// marked first, the feasible nodes' weighted scores and totals, and the
// FitError message of kube's own schedulePod path.

type explainStatus struct {
	Code   string `json:"code"`
	Plugin string `json:"plugin,omitempty"`
	Reason string `json:"reason,omitempty"`
}

type explainFailure struct {
	Plugin string `json:"plugin"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
	First  bool   `json:"first,omitempty"`
}

type explainNode struct {
	Node     string           `json:"node"`
	Feasible bool             `json:"feasible"`
	Failures []explainFailure `json:"failures,omitempty"`
	Scores   map[string]int64 `json:"scores,omitempty"`
	Total    *int64           `json:"total,omitempty"`
}

type explainCase struct {
	Pod                  string           `json:"pod"`
	Profile              string           `json:"profile"`
	PreEnqueue           *explainStatus   `json:"preEnqueue,omitempty"`
	PreFilter            explainStatus    `json:"preFilter"`
	SkippedFilterPlugins []string         `json:"skippedFilterPlugins"`
	SkippedScorePlugins  *[]string        `json:"skippedScorePlugins,omitempty"`
	FilterPlugins        []string         `json:"filterPlugins"`
	ScorePluginWeights   map[string]int32 `json:"scorePluginWeights"`
	NumNodes             int              `json:"numNodes"`
	NumFeasible          int              `json:"numFeasible"`
	Nodes                []explainNode    `json:"nodes"`
	BestTotal            *int64           `json:"bestTotal,omitempty"`
	Selected             string           `json:"selected,omitempty"`
	TiedBest             *[]string        `json:"tiedBest,omitempty"`
	Message              string           `json:"message,omitempty"`
	AfterPlacements      int              `json:"afterPlacements"`
}

type explainResult struct {
	Cases []explainCase `json:"cases"`
}

// explainAll explains every pending pod of a profile of ours (only the
// ones the framework finds unschedulable with unschedulableOnly) against
// the loaded snapshot.
func (b *bench) explainAll(ctx context.Context, pods []*v1.Pod, unschedulableOnly bool) (*explainResult, error) {
	logger := klog.FromContext(ctx)
	if err := b.sched.Cache.UpdateSnapshot(logger, b.snapshot); err != nil {
		return nil, err
	}
	res := &explainResult{Cases: []explainCase{}}
	for _, pod := range pods {
		f, ok := b.sched.Profiles[pod.Spec.SchedulerName]
		if !ok {
			continue
		}
		c, err := b.explain(ctx, f, pod)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		if unschedulableOnly && c.NumFeasible > 0 {
			continue
		}
		res.Cases = append(res.Cases, *c)
	}
	return res, nil
}

func reasons(s *fwk.Status) string { return strings.Join(s.Reasons(), "; ") }

// explain runs one cycle of pod with full diagnosis. The message and the
// selected node come from kube's path (this tool's schedulePod, a fresh
// cycle state); the per-plugin verdicts from a second cycle whose
// PreFilter state is reused for each filter plugin run alone (every other
// filter plugin in the cycle state's skip set).
func (b *bench) explain(ctx context.Context, f framework.Framework, pod *v1.Pod) (*explainCase, error) {
	key := pod.Namespace + "/" + pod.Name
	// kube's own choice: the nominated node first, when the pod has one.
	saved := b.nextStart
	b.nextStart = 0
	node, fitErr, err := b.schedulePod(ctx, f, framework.NewCycleState(), pod)
	b.nextStart = saved
	if err != nil {
		return nil, err
	}
	// The diagnosis evaluates every node: the pod's own nominated node is
	// not tried first (other pods' nominations still count, through the
	// queue's nominator, in RunFilterPluginsWithNominatedPods).
	nominated := pod.Status.NominatedNodeName
	if nominated != "" {
		pod = pod.DeepCopy()
		pod.Status.NominatedNodeName = ""
	}

	plugins := f.ListPlugins()
	c := &explainCase{Pod: key, Profile: f.ProfileName(), FilterPlugins: []string{}, ScorePluginWeights: map[string]int32{},
		Nodes: []explainNode{}}
	for _, p := range plugins.Filter.Enabled {
		c.FilterPlugins = append(c.FilterPlugins, p.Name)
	}
	for _, p := range plugins.Score.Enabled {
		c.ScorePluginWeights[p.Name] = p.Weight
	}
	if fitErr != nil {
		c.Message = fitErr.Error()
	}

	allNodes, err := b.snapshot.ListNodesInPlacement()
	if err != nil {
		return nil, err
	}
	c.NumNodes = len(allNodes)
	if st := runPreEnqueuePlugins(ctx, f, pod); !st.IsSuccess() {
		// Held out of the queue: no cycle. As the shared fixtures record
		// it: preEnqueue, preFilter "NotRun", every node with the status.
		c.PreEnqueue = &explainStatus{Code: st.Code().String(), Plugin: st.Plugin(), Reason: st.Message()}
		c.PreFilter = explainStatus{Code: "NotRun"}
		c.Message = st.Message()
		for _, ni := range allNodes {
			c.Nodes = append(c.Nodes, explainNode{Node: ni.Node().Name, Failures: []explainFailure{
				{Plugin: st.Plugin(), Code: st.Code().String(), Reason: reasons(st), First: true}}})
		}
		sort.Slice(c.Nodes, func(i, j int) bool { return c.Nodes[i].Node < c.Nodes[j].Node })
		return c, nil
	}
	state := framework.NewCycleState()
	preRes, s, unschedulable := f.RunPreFilterPlugins(ctx, state, pod)
	c.PreFilter = explainStatus{Code: s.Code().String()}
	c.SkippedFilterPlugins = sets.List(state.GetSkipFilterPlugins())
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return nil, s.AsError()
		}
		c.PreFilter.Plugin, c.PreFilter.Reason = s.Plugin(), s.Message()
		for _, ni := range allNodes {
			c.Nodes = append(c.Nodes, explainNode{Node: ni.Node().Name, Failures: []explainFailure{
				{Plugin: s.Plugin(), Code: s.Code().String(), Reason: reasons(s), First: true}}})
		}
		sort.Slice(c.Nodes, func(i, j int) bool { return c.Nodes[i].Node < c.Nodes[j].Node })
		return c, b.check(c, node)
	}
	skip := state.GetSkipFilterPlugins()
	var feasible []fwk.NodeInfo
	for _, ni := range allNodes {
		name := ni.Node().Name
		if !preRes.AllNodes() && !preRes.NodeNames.Has(name) {
			msg := fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedulable))
			c.Nodes = append(c.Nodes, explainNode{Node: name, Failures: []explainFailure{
				{Code: fwk.UnschedulableAndUnresolvable.String(), Reason: msg, First: true}}})
			continue
		}
		first := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		if first.Code() == fwk.Error {
			return nil, first.AsError()
		}
		if first.IsSuccess() {
			feasible = append(feasible, ni)
			continue
		}
		n := explainNode{Node: name}
		for _, pl := range c.FilterPlugins {
			if skip.Has(pl) {
				continue
			}
			alone := state.Clone()
			others := sets.New(c.FilterPlugins...).Union(skip)
			others.Delete(pl)
			alone.SetSkipFilterPlugins(others)
			st := f.RunFilterPluginsWithNominatedPods(ctx, alone, pod, ni)
			if st.IsSuccess() {
				continue
			}
			if st.Code() == fwk.Error {
				return nil, st.AsError()
			}
			n.Failures = append(n.Failures, explainFailure{Plugin: st.Plugin(), Code: st.Code().String(), Reason: reasons(st), First: st.Plugin() == first.Plugin()})
		}
		c.Nodes = append(c.Nodes, n)
	}
	c.NumFeasible = len(feasible)
	// As in the shared fixtures, a pod that fits nowhere has no
	// skippedScorePlugins, bestTotal, tiedBest or selected.
	if len(feasible) > 0 {
		if st := f.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
			return nil, st.AsError()
		}
		skipped := sets.List(state.GetSkipScorePlugins())
		c.SkippedScorePlugins = &skipped
		scores, st := f.RunScorePlugins(ctx, state, pod, feasible)
		if !st.IsSuccess() {
			return nil, st.AsError()
		}
		byName := map[string]fwk.NodePluginScores{}
		var best int64
		var tied []string
		for _, sc := range scores {
			byName[sc.Name] = sc
			if sc.TotalScore > best || len(tied) == 0 {
				best, tied = sc.TotalScore, nil
			}
			if sc.TotalScore == best {
				tied = append(tied, sc.Name)
			}
		}
		sort.Strings(tied)
		c.BestTotal, c.TiedBest, c.Selected = &best, &tied, tied[0]
		if nominated != "" && node == nominated {
			c.Selected = node // taken before any scoring
		}
		for _, ni := range feasible {
			sc := byName[ni.Node().Name]
			total := sc.TotalScore
			n := explainNode{Node: sc.Name, Feasible: true, Scores: map[string]int64{}, Total: &total}
			for _, p := range sc.Scores {
				n.Scores[p.Name] = p.Score
			}
			c.Nodes = append(c.Nodes, n)
		}
	}
	sort.Slice(c.Nodes, func(i, j int) bool { return c.Nodes[i].Node < c.Nodes[j].Node })
	return c, b.check(c, node)
}

// check makes sure the diagnosis agrees with kube's own path.
func (b *bench) check(c *explainCase, node string) error {
	if c.Selected != node && c.NumFeasible > 1 {
		return fmt.Errorf("explain selects %q, schedulePod %q", c.Selected, node)
	}
	if (c.NumFeasible == 0) != (c.Message != "") {
		return fmt.Errorf("%d feasible nodes but message %q", c.NumFeasible, c.Message)
	}
	return nil
}
