package defaultpreemption_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/plugins"
	"github.com/kubectl-sched/kubectl-sched/plugins/defaultpreemption"
	"github.com/kubectl-sched/kubectl-sched/plugins/names"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// fakeEvictor records what the plugin asks the driver to do.
type fakeEvictor struct {
	evicted []string // "ns/victim@node by ns/preemptor"
	cleared []string
}

func (f *fakeEvictor) PreemptPod(_ context.Context, preemptor, victim *v1.Pod, node string) error {
	f.evicted = append(f.evicted, schedcore.PodName(victim)+"@"+node+" by "+schedcore.PodName(preemptor))
	return nil
}

func (f *fakeEvictor) ClearNominatedNodeName(_ context.Context, pods []*v1.Pod) error {
	for _, p := range pods {
		f.cleared = append(f.cleared, schedcore.PodName(p))
	}
	return nil
}

type fakeNominator map[string][]*v1.Pod

func (n fakeNominator) NominatedPodsForNode(node string) []*schedcore.PodInfo {
	var out []*schedcore.PodInfo
	for _, p := range n[node] {
		out = append(out, schedcore.NewPodInfo(p))
	}
	return out
}

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// started sets status.startTime to epoch+sec.
func started(p *schedtest.PodWrapper, sec int) *schedtest.PodWrapper {
	t := metav1.NewTime(epoch.Add(time.Duration(sec) * time.Second))
	p.Status.StartTime = &t
	return p
}

func pdb(name string, allowed int32, match map[string]string, disrupted ...string) *policyv1.PodDisruptionBudget {
	p := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	p.Spec.Selector = &metav1.LabelSelector{MatchLabels: match}
	p.Status.DisruptionsAllowed = allowed
	if len(disrupted) > 0 {
		p.Status.DisruptedPods = map[string]metav1.Time{}
		for _, d := range disrupted {
			p.Status.DisruptedPods[d] = metav1.NewTime(epoch)
		}
	}
	return p
}

type env struct {
	fw   *schedruntime.Framework
	snap *schedcore.Snapshot
	ev   *fakeEvictor
}

// newEnv builds the default profile (all default plugins, DefaultPreemption
// with args) over the nodes and bound pods.
func newEnv(t *testing.T, nodes []*v1.Node, pods []*v1.Pod, pdbs []*policyv1.PodDisruptionBudget, args *configv1.DefaultPreemptionArgs, nominated fakeNominator, offset int32) *env {
	t.Helper()
	snap := schedcore.NewSnapshot(pods, nodes)
	ev := &fakeEvictor{}
	hooks := schedcore.PreemptionHooks{PDBs: func() []*policyv1.PodDisruptionBudget { return pdbs }, Evictor: ev}
	if offset != 0 {
		hooks.Offset = func(int32) int32 { return offset }
	}
	opts := []schedcore.HandleOption{schedcore.WithPreemption(hooks)}
	if nominated != nil {
		opts = append(opts, schedcore.WithNominator(nominated))
	}
	h := schedcore.NewHandle(snap, 4, opts...)
	name := v1.DefaultSchedulerName
	prof := &configv1.KubeSchedulerProfile{SchedulerName: &name, Plugins: plugins.DefaultPlugins()}
	if args != nil {
		prof.PluginConfig = []configv1.PluginConfig{{Name: names.DefaultPreemption, Args: runtime.RawExtension{Object: args}}}
	}
	fw, err := schedruntime.NewFramework(context.Background(), plugins.NewInTreeRegistry(), prof, h, schedruntime.FrameworkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{fw: fw, snap: snap, ev: ev}
}

// postFilter runs the filters over every node, then PostFilter on the
// resulting statuses, as the scheduling cycle does.
func (e *env) postFilter(t *testing.T, pod *v1.Pod) (*schedcore.PostFilterResult, *schedcore.Status) {
	t.Helper()
	alg := &schedruntime.Algorithm{Snapshot: e.snap, PercentageOfNodesToScore: 100}
	state := schedcore.NewCycleState()
	_, _, err := alg.SchedulePod(context.Background(), e.fw, state, pod)
	var fe *schedcore.FitError
	if !errors.As(err, &fe) {
		t.Fatalf("SchedulePod: want a FitError, got %v", err)
	}
	return e.fw.RunPostFilterPlugins(context.Background(), state, pod, fe.Diagnosis.NodeToStatus)
}

func node(name, cpu string) *v1.Node {
	return schedtest.MakeNode(name).Capacity("cpu", cpu, "memory", "8Gi").Obj()
}

func TestPostFilter(t *testing.T) {
	never := v1.PreemptNever
	terminating := func() *v1.Pod {
		p := schedtest.MakePod("t").Node("node1").Priority(1).Req("cpu", "1").Obj()
		p.DeletionTimestamp = ptr.To(metav1.NewTime(epoch))
		p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler}}
		return p
	}
	tests := []struct {
		name        string
		nodes       []*v1.Node
		pods        []*v1.Pod
		pdbs        []*policyv1.PodDisruptionBudget
		pod         *v1.Pod
		nominated   fakeNominator
		wantStatus  *schedcore.Status
		wantNode    *string // nil: no result
		wantEvicted []string
		wantCleared []string
	}{
		{
			name:        "a pod with higher priority can be made schedulable",
			nodes:       []*v1.Node{node("node1", "1")},
			pods:        []*v1.Pod{schedtest.MakePod("p1").Node("node1").Req("cpu", "1").Obj()},
			pod:         schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj(),
			wantStatus:  schedcore.NewStatus(schedcore.Success, "preemption: found a potential placement for pod on node node1, preempting 1 victims"),
			wantNode:    ptr.To("node1"),
			wantEvicted: []string{"default/p1@node1 by default/p"},
		},
		{
			name:       "a pod with tied priority is still unschedulable",
			nodes:      []*v1.Node{node("node1", "1")},
			pods:       []*v1.Pod{schedtest.MakePod("p1").Node("node1").Priority(10).Req("cpu", "1").Obj()},
			pod:        schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj(),
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable, "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."),
			wantNode:   ptr.To(""),
		},
		{
			name:       "nodes rejected as UnschedulableAndUnresolvable are not helped",
			nodes:      []*v1.Node{schedtest.MakeNode("node1").Capacity("cpu", "1").Taint("k", "v", v1.TaintEffectNoSchedule).Obj()},
			pods:       []*v1.Pod{schedtest.MakePod("p1").Node("node1").Req("cpu", "1").Obj()},
			pod:        schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj(),
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable, "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."),
			wantNode:   ptr.To(""),
		},
		{
			name:  "the pod can be made schedulable on one node only",
			nodes: []*v1.Node{node("node1", "1"), node("node2", "1")},
			pods: []*v1.Pod{
				schedtest.MakePod("p1").Node("node1").Priority(20).Req("cpu", "1").Obj(),
				schedtest.MakePod("p2").Node("node2").Req("cpu", "1").Obj(),
			},
			pod:         schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj(),
			wantStatus:  schedcore.NewStatus(schedcore.Success, "preemption: found a potential placement for pod on node node2, preempting 1 victims"),
			wantNode:    ptr.To("node2"),
			wantEvicted: []string{"default/p2@node2 by default/p"},
		},
		{
			name:  "the node whose most important victim has the lowest priority is picked",
			nodes: []*v1.Node{node("node1", "1"), node("node2", "1")},
			pods: []*v1.Pod{
				schedtest.MakePod("p1").Node("node1").Priority(5).Req("cpu", "1").Obj(),
				schedtest.MakePod("p2").Node("node2").Priority(3).Req("cpu", "1").Obj(),
			},
			pod:         schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj(),
			wantStatus:  schedcore.NewStatus(schedcore.Success, "preemption: found a potential placement for pod on node node2, preempting 1 victims"),
			wantNode:    ptr.To("node2"),
			wantEvicted: []string{"default/p2@node2 by default/p"},
		},
		{
			name:  "no candidate when removing the lower-priority pods is not enough",
			nodes: []*v1.Node{node("node1", "2"), node("node2", "2")},
			pods: []*v1.Pod{
				schedtest.MakePod("h1").Node("node1").Priority(20).Req("cpu", "1").Obj(),
				schedtest.MakePod("l1").Node("node1").Req("cpu", "1").Obj(),
				schedtest.MakePod("h2").Node("node2").Priority(20).Req("cpu", "1").Obj(),
				schedtest.MakePod("l2").Node("node2").Req("cpu", "1").Obj(),
			},
			pod:        schedtest.MakePod("p").Priority(10).Req("cpu", "2").Obj(),
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable, "preemption: 0/2 nodes are available: 2 Insufficient cpu."),
			wantNode:   ptr.To(""),
		},
		{
			name:  "no candidate with mixed reasons: no lower-priority pod, not enough cpu",
			nodes: []*v1.Node{node("node1", "2"), node("node2", "1"), node("node3", "1")},
			pods: []*v1.Pod{
				schedtest.MakePod("h1").Node("node1").Priority(20).Req("cpu", "1").Obj(),
				schedtest.MakePod("l1").Node("node1").Req("cpu", "1").Obj(),
				schedtest.MakePod("h2").Node("node2").Priority(20).Req("cpu", "1").Obj(),
				schedtest.MakePod("h3").Node("node3").Priority(20).Req("cpu", "1").Obj(),
			},
			pod:        schedtest.MakePod("p").Priority(10).Req("cpu", "2").Obj(),
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable, "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 Preemption is not helpful for scheduling."),
			wantNode:   ptr.To(""),
		},
		{
			name:  "no candidate with mixed reasons: no lower-priority pod on two nodes, not enough cpu on one",
			nodes: []*v1.Node{node("node1", "2"), node("node2", "2"), node("node3", "2")},
			pods: []*v1.Pod{
				schedtest.MakePod("h1").Node("node1").Priority(20).Req("cpu", "1").Obj(),
				schedtest.MakePod("l1").Node("node1").Req("cpu", "1").Obj(),
				schedtest.MakePod("h2").Node("node2").Priority(20).Req("cpu", "2").Obj(),
				schedtest.MakePod("h3").Node("node3").Priority(20).Req("cpu", "2").Obj(),
			},
			pod:        schedtest.MakePod("p").Priority(10).Req("cpu", "2").Obj(),
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable, "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found for incoming pod."),
			wantNode:   ptr.To(""),
		},
		{
			name:  "a pod with preemptionPolicy Never is not eligible",
			nodes: []*v1.Node{node("node1", "1")},
			pods:  []*v1.Pod{schedtest.MakePod("p1").Node("node1").Req("cpu", "1").Obj()},
			pod: func() *v1.Pod {
				p := schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj()
				p.Spec.PreemptionPolicy = &never
				return p
			}(),
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable, "preemption: not eligible due to preemptionPolicy=Never."),
		},
		{
			name:  "a victim still terminating on the nominated node makes the pod wait",
			nodes: []*v1.Node{node("node1", "2")},
			pods:  []*v1.Pod{terminating(), schedtest.MakePod("p1").Node("node1").Req("cpu", "1").Obj()},
			pod: func() *v1.Pod {
				p := schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj()
				p.Status.NominatedNodeName = "node1"
				return p
			}(),
			wantStatus: schedcore.NewStatus(schedcore.Unschedulable, "preemption: not eligible due to a terminating pod on the nominated node."),
		},
		{
			name:  "the lower-priority victim goes and the higher one is reprieved",
			nodes: []*v1.Node{node("node1", "3")},
			pods: []*v1.Pod{
				schedtest.MakePod("a").Node("node1").Priority(2).Req("cpu", "1").Obj(),
				schedtest.MakePod("b").Node("node1").Priority(1).Req("cpu", "1").Obj(),
				schedtest.MakePod("c").Node("node1").Priority(3).Req("cpu", "1").Obj(),
			},
			pod:         schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj(),
			wantStatus:  schedcore.NewStatus(schedcore.Success, "preemption: found a potential placement for pod on node node1, preempting 1 victims"),
			wantNode:    ptr.To("node1"),
			wantEvicted: []string{"default/b@node1 by default/p"},
		},
		{
			name:  "a pod protected by a PDB is reprieved first, so the other equal one goes",
			nodes: []*v1.Node{node("node1", "2")},
			pods: []*v1.Pod{
				started(schedtest.MakePod("a").Node("node1").Priority(1).Req("cpu", "1"), 1).Obj(),
				started(schedtest.MakePod("b").Node("node1").Priority(1).Req("cpu", "1").Label("app", "b"), 2).Obj(),
			},
			pdbs:        []*policyv1.PodDisruptionBudget{pdb("b", 0, map[string]string{"app": "b"})},
			pod:         schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj(),
			wantStatus:  schedcore.NewStatus(schedcore.Success, "preemption: found a potential placement for pod on node node1, preempting 1 victims"),
			wantNode:    ptr.To("node1"),
			wantEvicted: []string{"default/a@node1 by default/p"},
		},
		{
			name:  "without a PDB the later-started of two equal victims goes",
			nodes: []*v1.Node{node("node1", "2")},
			pods: []*v1.Pod{
				started(schedtest.MakePod("a").Node("node1").Priority(1).Req("cpu", "1"), 1).Obj(),
				started(schedtest.MakePod("b").Node("node1").Priority(1).Req("cpu", "1").Label("app", "b"), 2).Obj(),
			},
			pod:         schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj(),
			wantStatus:  schedcore.NewStatus(schedcore.Success, "preemption: found a potential placement for pod on node node1, preempting 1 victims"),
			wantNode:    ptr.To("node1"),
			wantEvicted: []string{"default/b@node1 by default/p"},
		},
		{
			name:  "the node without PDB violations wins over lower victim priorities",
			nodes: []*v1.Node{node("node1", "1"), node("node2", "1")},
			pods: []*v1.Pod{
				schedtest.MakePod("a").Node("node1").Priority(1).Req("cpu", "1").Label("app", "a").Obj(),
				schedtest.MakePod("b").Node("node2").Priority(5).Req("cpu", "1").Obj(),
			},
			pdbs:        []*policyv1.PodDisruptionBudget{pdb("a", 0, map[string]string{"app": "a"})},
			pod:         schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj(),
			wantStatus:  schedcore.NewStatus(schedcore.Success, "preemption: found a potential placement for pod on node node2, preempting 1 victims"),
			wantNode:    ptr.To("node2"),
			wantEvicted: []string{"default/b@node2 by default/p"},
		},
		{
			name:  "lower-priority pods nominated to the chosen node lose their nomination",
			nodes: []*v1.Node{node("node1", "1")},
			pods:  []*v1.Pod{schedtest.MakePod("p1").Node("node1").Req("cpu", "1").Obj()},
			nominated: fakeNominator{"node1": {
				schedtest.MakePod("low").Priority(5).Obj(),
				schedtest.MakePod("high").Priority(50).Obj(),
			}},
			pod:         schedtest.MakePod("p").Priority(10).Req("cpu", "1").Obj(),
			wantStatus:  schedcore.NewStatus(schedcore.Success, "preemption: found a potential placement for pod on node node1, preempting 1 victims"),
			wantNode:    ptr.To("node1"),
			wantEvicted: []string{"default/p1@node1 by default/p"},
			wantCleared: []string{"default/low"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, tc.nodes, tc.pods, tc.pdbs, nil, tc.nominated, 0)
			res, st := e.postFilter(t, tc.pod)
			if diff := cmp.Diff(tc.wantStatus.Code().String()+": "+tc.wantStatus.Message(), st.Code().String()+": "+st.Message()); diff != "" {
				t.Errorf("status (-want +got):\n%s", diff)
			}
			var gotNode *string
			if res != nil && res.NominatingInfo != nil {
				if res.NominatingMode != schedcore.ModeOverride {
					t.Errorf("nominating mode = %v, want ModeOverride", res.NominatingMode)
				}
				gotNode = &res.NominatedNodeName
			}
			if diff := cmp.Diff(tc.wantNode, gotNode); diff != "" {
				t.Errorf("nominated node (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvicted, e.ev.evicted); diff != "" {
				t.Errorf("evictions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCleared, e.ev.cleared); diff != "" {
				t.Errorf("cleared nominations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    runtime.Object
		wantErr string
	}{
		{name: "nil args mean the defaults"},
		{name: "an empty args object means the defaults", args: &configv1.DefaultPreemptionArgs{}},
		{name: "valid values are accepted", args: &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr.To[int32](0), MinCandidateNodesAbsolute: ptr.To[int32](1)}},
		{
			name:    "a percentage above 100 is rejected",
			args:    &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr.To[int32](101)},
			wantErr: "minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]",
		},
		{
			name:    "a negative absolute number is rejected",
			args:    &configv1.DefaultPreemptionArgs{MinCandidateNodesAbsolute: ptr.To[int32](-1)},
			wantErr: "minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)",
		},
		{
			name:    "both zero are rejected, naming both fields",
			args:    &configv1.DefaultPreemptionArgs{MinCandidateNodesPercentage: ptr.To[int32](0), MinCandidateNodesAbsolute: ptr.To[int32](0)},
			wantErr: "[minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute, minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage]",
		},
		{name: "args of another type are rejected", args: &configv1.InterPodAffinityArgs{}, wantErr: "got args of type *v1.InterPodAffinityArgs, want *DefaultPreemptionArgs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := defaultpreemption.New(context.Background(), tc.args, schedcore.NewHandle(nil, 1))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
