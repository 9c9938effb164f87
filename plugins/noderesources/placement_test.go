package noderesources

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

type placementGroup struct{ pods []*v1.Pod }

func (g placementGroup) UnscheduledPods() []*v1.Pod            { return g.pods }
func (g placementGroup) Key() schedcore.EntityKey              { return schedcore.PodGroupKey("default", "pg") }
func (g placementGroup) PodGroup() *schedulingv1beta1.PodGroup { return nil }

// TestScorePlacement transcribes kube v1.37.2's fit_test.go
// TestScorePlacement_Resources case for case.
func TestScorePlacement(t *testing.T) {
	cm := func(cpu, mem string) []string { return []string{"cpu", cpu, "memory", mem} }
	cmg := func(cpu, mem, gpu string) []string { return []string{"cpu", cpu, "memory", mem, "nvidia.com/gpu", gpu} }
	node := func(name string, kv []string) *v1.Node { return schedtest.MakeNode(name).Capacity(kv...).Obj() }
	pod := func(uid string, kv []string) *v1.Pod { return schedtest.MakePod(uid).UID(uid).Req(kv...).Obj() }
	cpuMem := []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}}
	cpuMemGPU := []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: "nvidia.com/gpu", Weight: 1}}
	tests := []struct {
		name           string
		nodes          []*v1.Node
		placementNodes []string
		groupPods      []*v1.Pod
		assignments    map[string]string // pod UID -> node
		existing       []*v1.Pod
		resources      []configv1.ResourceSpec
		want           int64
	}{
		{
			name:           "Computes score based on total requests",
			nodes:          []*v1.Node{node("node1", cm("5000m", "5000")), node("node2", cm("5000m", "5000"))},
			placementNodes: []string{"node1", "node2"},
			groupPods:      []*v1.Pod{pod("foo", cm("1000m", "0")), pod("bar", cm("2000m", "2000"))},
			assignments:    map[string]string{"foo": "node1", "bar": "node2"},
			resources:      cpuMem,
			// cpu 3000m/10000m = 0.3, memory 2000/10000 = 0.2: 100*(0.3+0.2)/2
			want: 25,
		},
		{
			name:           "Computes score using weights",
			nodes:          []*v1.Node{node("node1", cm("5000m", "5000")), node("node2", cm("5000m", "5000"))},
			placementNodes: []string{"node1", "node2"},
			groupPods:      []*v1.Pod{pod("foo", cm("1000m", "0")), pod("bar", cm("2000m", "2000"))},
			assignments:    map[string]string{"foo": "node1", "bar": "node2"},
			resources:      []configv1.ResourceSpec{{Name: "cpu", Weight: 4}, {Name: "memory", Weight: 1}},
			// 100*(4*0.3+0.2)/5
			want: 28,
		},
		{
			name:           "Handles multiple pods per node",
			nodes:          []*v1.Node{node("node1", cm("5000m", "5000")), node("node2", cm("5000m", "5000"))},
			placementNodes: []string{"node1", "node2"},
			groupPods:      []*v1.Pod{pod("foo", cm("1000m", "0")), pod("bar", cm("2000m", "2000"))},
			assignments:    map[string]string{"foo": "node1", "bar": "node1"},
			resources:      []configv1.ResourceSpec{{Name: "cpu", Weight: 4}, {Name: "memory", Weight: 1}},
			want:           28,
		},
		{
			name:           "Does not include nodes from outside of placement",
			nodes:          []*v1.Node{node("node1", cm("5000m", "5000")), node("node2", cm("5000m", "5000")), node("node3", cm("5000m", "5000"))},
			placementNodes: []string{"node1", "node2"},
			groupPods:      []*v1.Pod{pod("foo", cm("1000m", "0")), pod("bar", cm("2000m", "2000"))},
			assignments:    map[string]string{"foo": "node1", "bar": "node2"},
			resources:      cpuMem,
			want:           25,
		},
		{
			name:           "Includes pre-existing pods from outside of pod group",
			nodes:          []*v1.Node{node("node1", cm("5000m", "5000")), node("node2", cm("5000m", "5000"))},
			placementNodes: []string{"node1", "node2"},
			groupPods:      []*v1.Pod{pod("foo", cm("1000m", "0")), pod("bar", cm("2000m", "2000"))},
			assignments:    map[string]string{"foo": "node1", "bar": "node2"},
			existing:       []*v1.Pod{schedtest.MakePod("baz").UID("baz").Node("node1").Req(cm("1000m", "0")...).Obj()},
			resources:      cpuMem,
			// cpu 4000m/10000m = 0.4, memory 0.2
			want: 30,
		},
		{
			name:           "Includes scalar resources if any pod in pod group has nonzero requests",
			nodes:          []*v1.Node{node("node1", cmg("5000m", "5000", "5")), node("node2", cmg("5000m", "5000", "5"))},
			placementNodes: []string{"node1", "node2"},
			groupPods:      []*v1.Pod{pod("foo", cmg("1000m", "0", "0")), pod("bar", cmg("1000m", "2000", "1"))},
			assignments:    map[string]string{"foo": "node1", "bar": "node2"},
			existing:       []*v1.Pod{schedtest.MakePod("baz").UID("baz").Node("node1").Req(cmg("1000m", "0", "0")...).Obj()},
			resources:      cpuMemGPU,
			// cpu 0.3, memory 0.2, gpu 1/10: 100*(0.3+0.2+0.1)/3
			want: 20,
		},
		{
			name:           "Does not include scalar resources if all pods in pod group have zero requests",
			nodes:          []*v1.Node{node("node1", cmg("5000m", "5000", "5")), node("node2", cmg("5000m", "5000", "5"))},
			placementNodes: []string{"node1", "node2"},
			groupPods:      []*v1.Pod{pod("foo", cmg("1000m", "0", "0")), pod("bar", cmg("1000m", "2000", "0"))},
			assignments:    map[string]string{"foo": "node1", "bar": "node2"},
			existing:       []*v1.Pod{schedtest.MakePod("baz").UID("baz").Node("node1").Req(cmg("1000m", "0", "1")...).Obj()},
			resources:      cpuMemGPU,
			// gpu is not requested by the members: 100*(0.3+0.2)/2
			want: 25,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := schedcore.NewSnapshot(tc.existing, tc.nodes)
			h := schedcore.NewHandle(snap, 1, schedcore.WithFeatures(schedcore.Features{GenericWorkload: true, TopologyAwareWorkloadScheduling: true}))
			p, err := NewFit(context.Background(), &configv1.NodeResourcesFitArgs{ScoringStrategy: &configv1.ScoringStrategy{Type: configv1.LeastAllocated, Resources: tc.resources}}, h)
			if err != nil {
				t.Fatal(err)
			}
			a := &schedcore.PodGroupAssignments{Placement: &schedcore.Placement{}}
			for _, n := range tc.placementNodes {
				ni, err := snap.Get(n)
				if err != nil {
					t.Fatal(err)
				}
				a.Nodes = append(a.Nodes, ni)
			}
			for _, p := range tc.groupPods {
				if n, ok := tc.assignments[string(p.UID)]; ok {
					a.ProposedAssignments = append(a.ProposedAssignments, schedcore.ProposedAssignment{PodInfo: schedcore.NewPodInfo(p), NodeName: n})
				}
			}
			got, st := p.(*Fit).ScorePlacement(context.Background(), schedcore.NewCycleState(), placementGroup{tc.groupPods}, a)
			if !st.IsSuccess() {
				t.Fatalf("ScorePlacement: %v", st)
			}
			if got != tc.want {
				t.Errorf("score = %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("without TopologyAwareWorkloadScheduling there is no placement scorer", func(t *testing.T) {
		p, err := NewFit(context.Background(), nil, schedcore.NewHandle(nil, 1))
		if err != nil {
			t.Fatal(err)
		}
		_, st := p.(*Fit).ScorePlacement(context.Background(), nil, placementGroup{}, &schedcore.PodGroupAssignments{})
		if st.Code() != schedcore.Error || st.Message() != ErrReasonNoPlacementScorer {
			t.Errorf("status = %v, want Error %q", st, ErrReasonNoPlacementScorer)
		}
	})
}
