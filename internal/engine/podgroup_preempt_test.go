package engine

import (
	"context"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// The P* rows of docs/design/workloads.md §6: kube v1.37's
// TestPodGroupPreemption (test/integration/scheduler/preemption/podgroup/
// podgrouppreemption_test.go, GenericWorkload and
// TopologyAwareWorkloadScheduling on) as offline runs: the initial pods
// bound where kube's scheduler put them (the rows' nodes, or the single
// node), the preemptors pending in creation order, a run to quiescence.
// Nodes have memory 4Gi and 32 pods.
//
// Not transcribed: the PodGroupPreemptionPolicy rows (an alpha gate the
// engine does not carry), pod-level resources and topology-spread rows.

type preGroup struct {
	name     string
	prio     int32
	minCount int32 // 0: basic policy
	all      bool  // disruptionMode all
}

type prePod struct {
	name, node, cpu, group string
	prio                   int32
	mod                    func(*schedtest.PodWrapper) *schedtest.PodWrapper
}

func (p prePod) obj(i int) *v1.Pod {
	w := schedtest.MakePod(p.name).Namespace("default").UID("uid-"+p.name).Node(p.node).Req("cpu", p.cpu).Priority(p.prio)
	if p.mod != nil {
		w = p.mod(w)
	}
	pod := w.Obj()
	pod.CreationTimestamp = metav1.NewTime(Epoch.Add(time.Duration(i) * time.Second))
	if p.group != "" {
		g := p.group
		pod.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &g}
	}
	return pod
}

func (g preGroup) obj() *schedulingv1beta1.PodGroup {
	pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: g.name, UID: k8stypes.UID("uid-" + g.name), ResourceVersion: "1"}}
	p := g.prio
	pg.Spec.Priority = &p
	if g.minCount > 0 {
		pg.Spec.SchedulingPolicy.Gang = &schedulingv1beta1.GangSchedulingPolicy{MinCount: g.minCount}
	} else {
		pg.Spec.SchedulingPolicy.Basic = &schedulingv1beta1.BasicSchedulingPolicy{}
	}
	if g.all {
		pg.Spec.DisruptionMode = &schedulingv1beta1.DisruptionMode{All: &schedulingv1beta1.AllDisruptionMode{}}
	}
	return pg
}

func preNodes(cpu string, names ...string) []*v1.Node {
	out := make([]*v1.Node, len(names))
	for i, n := range names {
		out[i] = schedtest.MakeNode(n).Label(v1.LabelHostname, n).Capacity("cpu", cpu, "memory", "4Gi", "pods", "32").Obj()
	}
	return out
}

func TestPodGroupPreemptionRows(t *testing.T) {
	low := func(name, node, cpu string, prio int32) prePod {
		return prePod{name: name, node: node, cpu: cpu, prio: prio}
	}
	high := func(name, group string, prio int32) prePod {
		return prePod{name: name, cpu: "1", group: group, prio: prio}
	}
	highs := func(group string, prio int32, names ...string) []prePod {
		out := make([]prePod, len(names))
		for i, n := range names {
			out[i] = high(n, group, prio)
		}
		return out
	}
	inGroup := func(p prePod, g string) prePod { p.group = g; return p }
	labeled := func(p prePod, k, v string) prePod {
		p.mod = func(w *schedtest.PodWrapper) *schedtest.PodWrapper { return w.Label(k, v) }
		return p
	}
	tests := []struct {
		id, name    string
		nodes       []*v1.Node
		groups      []preGroup
		initial     []prePod
		preemptors  []prePod
		pdb         *policyv1.PodDisruptionBudget
		scheduled   []string
		preempted   []string
		pending     []string
		nominated   []string
		wantMessage string
		// presetScores adds kube's test plugin mockScorePlugin (a score per
		// node name) to the profile.
		presetScores map[string]int64
	}{
		{id: "P1", name: "Full PodGroup Preemption",
			nodes: preNodes("3", "node1"), groups: []preGroup{{name: "pg1", prio: 100, minCount: 3}},
			initial:    []prePod{low("low-1", "node1", "1", 10), low("low-2", "node1", "1", 10), low("low-3", "node1", "1", 10)},
			preemptors: highs("pg1", 100, "high-1", "high-2", "high-3"),
			scheduled:  []string{"high-1", "high-2", "high-3"}, preempted: []string{"low-1", "low-2", "low-3"}, nominated: []string{"high-1", "high-2", "high-3"}},
		{id: "P1b", name: "Full PodGroup Preemption for basic policy",
			nodes: preNodes("3", "node1"), groups: []preGroup{{name: "pg1", prio: 100}},
			initial:    []prePod{low("low-1", "node1", "1", 10), low("low-2", "node1", "1", 10), low("low-3", "node1", "1", 10)},
			preemptors: highs("pg1", 100, "high-1", "high-2", "high-3"),
			scheduled:  []string{"high-1", "high-2", "high-3"}, preempted: []string{"low-1", "low-2", "low-3"}, nominated: []string{"high-1", "high-2", "high-3"}},
		{id: "P2", name: "Partial Preemption",
			nodes: preNodes("2", "node1", "node2"), groups: []preGroup{{name: "pg1", prio: 100, minCount: 3}},
			initial:    []prePod{low("low-1", "node1", "2", 10), low("low-2", "node2", "1", 10)},
			preemptors: highs("pg1", 100, "high-1", "high-2", "high-3"), presetScores: map[string]int64{"node1": 100, "node2": 0},
			scheduled: []string{"high-1", "high-2", "high-3", "low-2"}, preempted: []string{"low-1"}, nominated: []string{"high-1", "high-2", "high-3"}},
		{id: "P2b", name: "Partial Preemption with basic policy",
			nodes: preNodes("2", "node1", "node2"), groups: []preGroup{{name: "pg1", prio: 100}},
			initial:    []prePod{low("low-1", "node1", "1", 10), low("very-low-1", "node2", "1", 5)},
			preemptors: highs("pg1", 100, "high-1", "high-2", "high-3"), presetScores: map[string]int64{"node1": 100, "node2": 0},
			scheduled: []string{"high-1", "high-2", "high-3", "very-low-1"}, preempted: []string{"low-1"}},
		{id: "P3", name: "PDB Violation Handling (Reprieve)",
			nodes: preNodes("3", "node1"), groups: []preGroup{{name: "pg1", prio: 100, minCount: 2}},
			initial: []prePod{labeled(low("low-1", "node1", "1", 10), "app", "foo"), labeled(low("low-2", "node1", "1", 10), "app", "foo"), low("low-3", "node1", "1", 10)},
			pdb: &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "foo-pdb"},
				Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &intstr.IntOrString{IntVal: 2}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "foo"}}}},
			preemptors: []prePod{{name: "high-1", cpu: "0.5", group: "pg1", prio: 100}, {name: "high-2", cpu: "0.5", group: "pg1", prio: 100}},
			scheduled:  []string{"high-1", "high-2", "low-1", "low-2"}, preempted: []string{"low-3"}, nominated: []string{"high-1", "high-2"}},
		{id: "P4", name: "Multi-node Preemption",
			nodes: preNodes("2", "node1", "node2"), groups: []preGroup{{name: "pg1", prio: 100, minCount: 4}},
			initial:    []prePod{low("low-1", "node1", "1", 10), low("low-2", "node1", "1", 10), low("low-3", "node2", "1", 10), low("low-4", "node2", "1", 10)},
			preemptors: highs("pg1", 100, "high-1", "high-2", "high-3", "high-4"),
			scheduled:  []string{"high-1", "high-2", "high-3", "high-4"}, preempted: []string{"low-1", "low-2", "low-3", "low-4"}, nominated: []string{"high-1", "high-2", "high-3", "high-4"}},
		{id: "P5", name: "Insufficient Resources (No Preemption)",
			nodes: preNodes("3", "node1"), groups: []preGroup{{name: "pg1", prio: 100, minCount: 3}},
			initial:    []prePod{low("mid-1", "node1", "1", 500), low("low-1", "node1", "1", 10), low("low-2", "node1", "1", 10)},
			preemptors: highs("pg1", 100, "high-1", "high-2", "high-3"),
			scheduled:  []string{"mid-1", "low-1", "low-2"}, pending: []string{"high-1", "high-2", "high-3"},
			// The group algorithm on the node without low-1 and low-2 places
			// two members: its status (TAS on: one placement of every node)
			// is the preemption's.
			wantMessage: "pod group is unschedulable, 0/1 placements are available, first placement status: minCount (3) cannot be satisfied: 0 scheduled, 2 remaining, " +
				"deallocation and deletion of ResourceClaims completed, pod group preemption: pod group is unschedulable, 0/1 placements are available, first placement status: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"},
		{id: "P6", name: "Priority-based Victim Selection",
			nodes: preNodes("3", "node1"), groups: []preGroup{{name: "pg1", prio: 100, minCount: 2}},
			initial:    []prePod{low("mid-1", "node1", "1", 50), low("low-1", "node1", "1", 10), low("low-2", "node1", "1", 10)},
			preemptors: highs("pg1", 100, "high-1", "high-2"),
			scheduled:  []string{"high-1", "high-2", "mid-1"}, preempted: []string{"low-1", "low-2"}, nominated: []string{"high-1", "high-2"}},
		{id: "P7", name: "Preempt the whole PodGroup even if preempting a single Pod would suffice",
			nodes: preNodes("3", "node1"), groups: []preGroup{{name: "pg1", prio: 100, minCount: 1}, {name: "pg2", prio: 10, minCount: 3, all: true}},
			initial:    []prePod{inGroup(low("low-1", "node1", "1", 10), "pg2"), inGroup(low("low-2", "node1", "1", 10), "pg2"), inGroup(low("low-3", "node1", "1", 10), "pg2")},
			preemptors: highs("pg1", 100, "high-1"),
			scheduled:  []string{"high-1"}, preempted: []string{"low-1", "low-2", "low-3"}, nominated: []string{"high-1"}},
		{id: "P7b", name: "Preempt the whole basic PodGroup with a PodGroup disruption mode",
			nodes: preNodes("3", "node1"), groups: []preGroup{{name: "pg1", prio: 100, minCount: 1}, {name: "pg2", prio: 10, all: true}},
			initial:    []prePod{inGroup(low("low-1", "node1", "1", 10), "pg2"), inGroup(low("low-2", "node1", "1", 10), "pg2"), inGroup(low("low-3", "node1", "1", 10), "pg2")},
			preemptors: highs("pg1", 100, "high-1"),
			scheduled:  []string{"high-1"}, preempted: []string{"low-1", "low-2", "low-3"}, nominated: []string{"high-1"}},
		{id: "P8", name: "Gang scheduling: as many pods as possible without preempting higher priority pods, but more than minCount",
			nodes: preNodes("1", "node1", "node2", "node3", "node4"), groups: []preGroup{{name: "preemptor-pg", prio: 100, minCount: 1}},
			initial:    []prePod{low("p1", "node1", "1", 10), low("p2", "node2", "1", 10), low("p3", "node3", "1", 200), low("p4", "node4", "1", 200)},
			preemptors: highs("preemptor-pg", 100, "p-a", "p-b", "p-c"),
			scheduled:  []string{"p-a", "p-b", "p3", "p4"}, preempted: []string{"p1", "p2"}, pending: []string{"p-c"}, nominated: []string{"p-a", "p-b"}},
		{id: "P8b", name: "Basic scheduling: as many pods as possible without preempting higher priority pods",
			nodes: preNodes("1", "node1", "node2", "node3", "node4"), groups: []preGroup{{name: "preemptor-pg", prio: 100}},
			initial:    []prePod{low("p1", "node1", "1", 10), low("p2", "node2", "1", 10), low("p3", "node3", "1", 200), low("p4", "node4", "1", 200)},
			preemptors: highs("preemptor-pg", 100, "p-a", "p-b", "p-c"),
			scheduled:  []string{"p-a", "p-b", "p3", "p4"}, preempted: []string{"p1", "p2"}, pending: []string{"p-c"}, nominated: []string{"p-a", "p-b"}},
		{id: "P9", name: "Gang scheduling: do not reprieve victim pod group of lower priority",
			nodes: preNodes("1", "node1", "node2", "node3"), groups: []preGroup{{name: "victim-pg", prio: 50, minCount: 1, all: true}, {name: "preemptor-pg", prio: 100, minCount: 3}},
			initial:    []prePod{inGroup(low("v1", "node1", "1", 50), "victim-pg"), inGroup(low("v2", "node2", "1", 50), "victim-pg"), low("v3", "node3", "1", 10)},
			preemptors: highs("preemptor-pg", 100, "p-a", "p-b", "p-c"),
			scheduled:  []string{"p-a", "p-b", "p-c"}, preempted: []string{"v1", "v2", "v3"}, nominated: []string{"p-a", "p-b", "p-c"}},
		{id: "P9b", name: "Basic scheduling: do not reprieve victim pod group of lower priority",
			nodes: preNodes("1", "node1", "node2", "node3"), groups: []preGroup{{name: "victim-pg", prio: 50, minCount: 1, all: true}, {name: "preemptor-pg", prio: 100}},
			initial:    []prePod{inGroup(low("v1", "node1", "1", 50), "victim-pg"), inGroup(low("v2", "node2", "1", 50), "victim-pg"), low("v3", "node3", "1", 10)},
			preemptors: highs("preemptor-pg", 100, "p-a", "p-b", "p-c"),
			scheduled:  []string{"p-a", "p-b", "p-c"}, preempted: []string{"v1", "v2", "v3"}},
		{id: "P10", name: "Gang scheduling: preempt a pod group victim but do not schedule the full pod group",
			nodes: preNodes("1", "node1", "node2", "node3", "node4"),
			groups: []preGroup{{name: "victim-pg", prio: 50, minCount: 2, all: true}, {name: "victim-pg2", prio: 200, minCount: 2, all: true},
				{name: "preemptor-pg", prio: 100, minCount: 1, all: true}},
			initial: []prePod{inGroup(low("v1", "node1", "1", 50), "victim-pg"), inGroup(low("v2", "node2", "1", 50), "victim-pg"),
				inGroup(low("v3", "node3", "1", 200), "victim-pg2"), inGroup(low("v4", "node4", "1", 200), "victim-pg2")},
			preemptors: highs("preemptor-pg", 100, "p-a", "p-b", "p-c"),
			scheduled:  []string{"p-a", "p-b", "v3", "v4"}, preempted: []string{"v1", "v2"}, pending: []string{"p-c"}, nominated: []string{"p-a"}},
		{id: "P10b", name: "Basic scheduling: preempt a pod group victim but do not schedule the full pod group",
			nodes: preNodes("1", "node1", "node2", "node3", "node4"),
			groups: []preGroup{{name: "victim-pg", prio: 50, minCount: 2, all: true}, {name: "victim-pg2", prio: 200, minCount: 2, all: true},
				{name: "preemptor-pg", prio: 100, all: true}},
			initial: []prePod{inGroup(low("v1", "node1", "1", 50), "victim-pg"), inGroup(low("v2", "node2", "1", 50), "victim-pg"),
				inGroup(low("v3", "node3", "1", 200), "victim-pg2"), inGroup(low("v4", "node4", "1", 200), "victim-pg2")},
			preemptors: highs("preemptor-pg", 100, "p-a", "p-b", "p-c"),
			scheduled:  []string{"p-a", "p-b", "v3", "v4"}, preempted: []string{"v1", "v2"}, pending: []string{"p-c"}, nominated: []string{"p-a"}},
		{id: "P12", name: "PreemptNever in all pods, PodGroupPreemptionPolicy off: no preemption",
			nodes: preNodes("3", "node1"), groups: []preGroup{{name: "pg1", prio: 100, minCount: 3}},
			initial: []prePod{low("low-1", "node1", "1", 10), low("low-2", "node1", "1", 10), low("low-3", "node1", "1", 10)},
			preemptors: func() []prePod {
				ps := highs("pg1", 100, "high-1", "high-2", "high-3")
				for i := range ps {
					ps[i].mod = func(w *schedtest.PodWrapper) *schedtest.PodWrapper {
						never := v1.PreemptNever
						w.Spec.PreemptionPolicy = &never
						return w
					}
				}
				return ps
			}(),
			scheduled: []string{"low-1", "low-2", "low-3"}, pending: []string{"high-1", "high-2", "high-3"},
			wantMessage: "pod group is unschedulable, 0/1 placements are available, first placement status: minCount (3) cannot be satisfied: 0 scheduled, 2 remaining, " +
				"deallocation and deletion of ResourceClaims completed, pod group preemption: not eligible due to preemptionPolicy=Never."},
		{id: "P-res", name: "Gang scheduling: preemption with node resources",
			nodes: preNodes("2", "node1", "node2"), groups: []preGroup{{name: "preemptor-pg", prio: 100, minCount: 2}},
			initial:    []prePod{labeled(low("initial-pod", "node1", "2", 10), "app", "initial")},
			preemptors: []prePod{{name: "preemptor-1", cpu: "2", group: "preemptor-pg", prio: 100}, {name: "preemptor-2", cpu: "2", group: "preemptor-pg", prio: 100}},
			scheduled:  []string{"preemptor-1", "preemptor-2"}, preempted: []string{"initial-pod"}, nominated: []string{"preemptor-1", "preemptor-2"}},
		{id: "P-reprieve", name: "Gang scheduling: preemption with node resources, reprieval of higher priority pods first",
			nodes: preNodes("2", "node1", "node2"), groups: []preGroup{{name: "preemptor-pg", prio: 100, minCount: 2}},
			initial: []prePod{labeled(low("initial-pod-1", "node1", "1", 5), "app", "initial"), labeled(low("initial-pod-2", "node1", "1", 10), "app", "initial")},
			preemptors: []prePod{
				{name: "preemptor-1", cpu: "1", group: "preemptor-pg", prio: 100, mod: func(w *schedtest.PodWrapper) *schedtest.PodWrapper { return w.NodeSelector(v1.LabelHostname, "node1") }},
				{name: "preemptor-2", cpu: "1", group: "preemptor-pg", prio: 100, mod: func(w *schedtest.PodWrapper) *schedtest.PodWrapper { return w.NodeSelector(v1.LabelHostname, "node2") }}},
			scheduled: []string{"preemptor-1", "preemptor-2", "initial-pod-2"}, preempted: []string{"initial-pod-1"}, nominated: []string{"preemptor-1", "preemptor-2"}},
		{id: "P13", name: "Gang scheduling: anti-affinity prevents the reprieve",
			nodes: preNodes("2", "node1", "node2"), groups: []preGroup{{name: "preemptor-pg", prio: 100, minCount: 2}},
			initial: []prePod{labeled(low("initial-pod", "node1", "0.25", 10), "app", "initial")},
			preemptors: func() []prePod {
				anti := func(w *schedtest.PodWrapper) *schedtest.PodWrapper {
					return w.PodAntiAffinity(v1.LabelHostname, map[string]string{"app": "initial"})
				}
				return []prePod{{name: "preemptor-1", cpu: "1.5", group: "preemptor-pg", prio: 100, mod: anti}, {name: "preemptor-2", cpu: "1.5", group: "preemptor-pg", prio: 100, mod: anti}}
			}(),
			scheduled: []string{"preemptor-1", "preemptor-2"}, preempted: []string{"initial-pod"}, nominated: []string{"preemptor-1", "preemptor-2"}},
		{id: "P-port", name: "Gang scheduling: a host port prevents the reprieve",
			nodes: preNodes("2", "node1", "node2"), groups: []preGroup{{name: "preemptor-pg", prio: 100, minCount: 2}},
			initial: []prePod{{name: "initial-pod", node: "node1", cpu: "0.25", prio: 10, mod: func(w *schedtest.PodWrapper) *schedtest.PodWrapper { return w.HostPort(8080, v1.ProtocolTCP, "") }}},
			preemptors: func() []prePod {
				port := func(w *schedtest.PodWrapper) *schedtest.PodWrapper { return w.HostPort(8080, v1.ProtocolTCP, "") }
				return []prePod{{name: "preemptor-1", cpu: "1.5", group: "preemptor-pg", prio: 100, mod: port}, {name: "preemptor-2", cpu: "1.5", group: "preemptor-pg", prio: 100, mod: port}}
			}(),
			scheduled: []string{"preemptor-1", "preemptor-2"}, preempted: []string{"initial-pod"}, nominated: []string{"preemptor-1", "preemptor-2"}},
	}
	for _, tt := range tests {
		t.Run(tt.id+" "+tt.name, func(t *testing.T) {
			cl := &snapshot.Cluster{Nodes: tt.nodes}
			for _, g := range tt.groups {
				cl.Workloads.PodGroups = append(cl.Workloads.PodGroups, g.obj())
			}
			for i, p := range append(append([]prePod(nil), tt.initial...), tt.preemptors...) {
				cl.Pods = append(cl.Pods, p.obj(i))
			}
			if tt.pdb != nil {
				cl.PDBs = append(cl.PDBs, tt.pdb)
			}
			f := schedcore.DefaultFeatures
			f.GenericWorkload, f.TopologyAwareWorkloadScheduling = true, true
			cfg, err := LoadConfigWithFeatures("", f)
			if err != nil {
				t.Fatal(err)
			}
			all := int32(100)
			cfg.PercentageOfNodesToScore = &all
			var registry schedcore.Registry
			if tt.presetScores != nil {
				registry, err = Registry(schedcore.Registry{"mockScorePlugin": {Factory: func(context.Context, runtime.Object, *schedcore.Handle) (schedcore.Plugin, error) {
					return presetScore(tt.presetScores), nil
				}}})
				if err != nil {
					t.Fatal(err)
				}
				mp := &cfg.Profiles[0].Plugins.MultiPoint
				mp.Enabled = append(mp.Enabled, configv1.Plugin{Name: "mockScorePlugin"})
			}
			nominated := map[string]bool{}
			msgs := map[string]string{}
			evictedBy := map[string]string{}
			obs := Observer{
				Placed:       func(*v1.Pod, string, int, schedruntime.ScheduleResult) {},
				Failed:       func(pod *v1.Pod, fl Failure) { msgs[pod.Name] = fl.Status.Message() },
				Nominated:    func(pod *v1.Pod, node string) { nominated[pod.Name] = nominated[pod.Name] || node != "" },
				GroupEvicted: func(victim *v1.Pod, pg *schedulingv1beta1.PodGroup) { evictedBy[victim.Name] = pg.Name },
			}
			c, pending, err := NewOffline(context.Background(), cl, Options{Features: f, Config: cfg, Registry: registry}, obs)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Submit(pending...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := c.Run(ctx); err != nil {
				t.Fatal(err)
			}
			var scheduled, preempted, stillPending, gotNominated []string
			for _, p := range append(append([]prePod(nil), tt.initial...), tt.preemptors...) {
				cur, ok := c.Pod("default", p.name)
				switch {
				case !ok:
					preempted = append(preempted, p.name)
				case cur.Spec.NodeName != "":
					scheduled = append(scheduled, p.name)
				default:
					stillPending = append(stillPending, p.name)
				}
			}
			for _, p := range tt.nominated {
				if nominated[p] {
					gotNominated = append(gotNominated, p)
				}
			}
			less := cmpopts.SortSlices(func(a, b string) bool { return a < b })
			for _, chk := range []struct {
				what      string
				want, got []string
			}{{"scheduled", tt.scheduled, scheduled}, {"preempted", tt.preempted, preempted}, {"pending", tt.pending, stillPending}, {"nominated (of those kube checks)", tt.nominated, gotNominated}} {
				if diff := cmp.Diff(chk.want, chk.got, less, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("%s (-want +got):\n%s\nmessages: %v", chk.what, diff, msgs)
				}
			}
			for v, by := range evictedBy {
				if !slices.Contains(tt.preempted, v) || by != tt.preemptors[0].group {
					t.Errorf("%s evicted by pod group %s", v, by)
				}
			}
			if tt.wantMessage != "" {
				pg := c.PodGroups()
				sort.Slice(pg, func(i, j int) bool { return pg[i].Name < pg[j].Name })
				var got string
				for _, g := range pg {
					if g.Name == tt.preemptors[0].group {
						for _, cnd := range g.Status.Conditions {
							got = cnd.Message
						}
					}
				}
				if got != tt.wantMessage {
					t.Errorf("condition message\n got: %q\nwant: %q", got, tt.wantMessage)
				}
			}
		})
	}
}

// TestGroupAwarePodPreemption: a pod (no group) preempting with
// GenericWorkload on sees a disruptionMode all group as one victim with
// all its pods, on any node (kube's Evaluator.GetVictimsOnNode with
// getCrossNodesVictims); with the gate off each pod is its own victim.
// Nodes cpu 2: v1 (pg2) and single on node1, v2 (pg2) on node2; the
// preemptor needs a whole node.
func TestGroupAwarePodPreemption(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gate      bool
		preempted []string
	}{
		// node1 would cost v1, v2 (one unit) and single; node2 the unit
		// alone: fewer victims, so node2, and v1 goes with it.
		{"GenericWorkload on: the group goes whole", true, []string{"v1", "v2"}},
		{"GenericWorkload off: pod by pod", false, []string{"v2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := &snapshot.Cluster{Nodes: preNodes("2", "node1", "node2")}
			cl.Workloads.PodGroups = []*schedulingv1beta1.PodGroup{preGroup{name: "pg2", prio: 10, minCount: 2, all: true}.obj()}
			pods := []prePod{{name: "v1", node: "node1", cpu: "1", group: "pg2", prio: 10}, {name: "v2", node: "node2", cpu: "1", group: "pg2", prio: 10},
				{name: "single", node: "node1", cpu: "1", prio: 10}, {name: "preemptor", cpu: "2", prio: 100}}
			for i, p := range pods {
				cl.Pods = append(cl.Pods, p.obj(i))
			}
			f := schedcore.DefaultFeatures
			f.GenericWorkload = tc.gate
			cfg, err := LoadConfigWithFeatures("", f)
			if err != nil {
				t.Fatal(err)
			}
			var preempted []string
			obs := Observer{Evicted: func(victim *v1.Pod, _ string, _ *v1.Pod) { preempted = append(preempted, victim.Name) }}
			c, pending, err := NewOffline(context.Background(), cl, Options{Features: f, Config: cfg}, obs)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.Submit(pending...)
			if err := c.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			sort.Strings(preempted)
			if diff := cmp.Diff(tc.preempted, preempted); diff != "" {
				t.Errorf("preempted (-want +got):\n%s", diff)
			}
			if p, ok := c.Pod("default", "preemptor"); !ok || p.Spec.NodeName != "node2" {
				t.Errorf("preemptor on %q, want node2", p.Spec.NodeName)
			}
		})
	}
}

// presetScore is kube's mockScorePlugin of that test: a fixed score per
// node name.
type presetScore map[string]int64

func (presetScore) Name() string { return "mockScorePlugin" }

func (p presetScore) Score(_ context.Context, _ *schedcore.CycleState, _ *v1.Pod, ni *schedcore.NodeInfo) (int64, *schedcore.Status) {
	return p[ni.Name()], nil
}
