package topologyaware

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// The table transcribes kube v1.37.2's topology_placement_test.go
// (TestGeneratePlacements; the CompositePodGroup cases are left out with
// the gate). kube compares placements as a map; here their order (by
// domain name) is checked too, and the errors' texts.

type pgInfo struct{ pg *schedulingv1beta1.PodGroup }

func (i pgInfo) UnscheduledPods() []*v1.Pod { return nil }
func (i pgInfo) Key() schedcore.EntityKey {
	return schedcore.PodGroupKey(i.pg.Namespace, i.pg.Name)
}
func (i pgInfo) PodGroup() *schedulingv1beta1.PodGroup { return i.pg }

type placement struct {
	Name  string
	Nodes []string
}

func node(name string, kv ...string) *v1.Node {
	return schedtest.MakeNode(name).OnlyLabels(kv...).Obj()
}

func TestGeneratePlacements(t *testing.T) {
	const initial = "test-placement"
	withKey := func(key string) *schedulingv1beta1.PodGroup {
		return schedtest.MakePodGroup("pg").TopologyKey(key).Obj()
	}
	tests := []struct {
		name          string
		podGroup      *schedulingv1beta1.PodGroup
		scheduledOn   []string // nodes of the group's bound members
		placement     []*v1.Node
		other         []*v1.Node
		want          []placement
		wantErr       string
		wantErrPrefix string
	}{
		{
			name:      "without constraint returns placement matching all nodes",
			podGroup:  schedtest.MakePodGroup("pg").Obj(),
			placement: []*v1.Node{node("node1"), node("node2", "foo", "bar")},
			other:     []*v1.Node{node("node3")},
			want:      []placement{{initial, []string{"node1", "node2"}}},
		},
		{
			name:     "with topology key constraint, returns placement for each topology domain",
			podGroup: withKey("topology1"),
			placement: []*v1.Node{
				node("node0", "topology2", "d1"), node("node1", "topology2", "d4"), node("node2", "topology1", "d1"),
				node("node3", "topology1", "d2"), node("node4", "topology1", "d1"), node("node5", "topology1", "d3"),
			},
			want: []placement{{"d1", []string{"node2", "node4"}}, {"d2", []string{"node3"}}, {"d3", []string{"node5"}}},
		},
		{
			name:     "placements are ordered by domain name, not by the nodes' order",
			podGroup: withKey("rack"),
			placement: []*v1.Node{
				node("a", "rack", "r3"), node("b", "rack", "r1"), node("c", "rack", "r2"), node("d", "rack", "r1"),
			},
			want: []placement{{"r1", []string{"b", "d"}}, {"r2", []string{"c"}}, {"r3", []string{"a"}}},
		},
		{
			name:     "without matching topology label, returns empty",
			podGroup: withKey("topology3"),
			placement: []*v1.Node{
				node("node0", "topology2", "d1"), node("node1", "topology2", "d4"), node("node2", "topology1", "d1"),
				node("node3", "topology1", "d2"), node("node4", "topology1", "d1"), node("node5", "topology1", "d3"),
			},
			want: []placement{},
		},
		{
			name:        "with pods already scheduled in a single domain, returns that domain",
			podGroup:    withKey("topology"),
			scheduledOn: []string{"node2", "node3"},
			placement:   []*v1.Node{node("node0", "topology", "d2"), node("node1", "topology", "d1")},
			other:       []*v1.Node{node("node2", "topology", "d1"), node("node3", "topology", "d1")},
			want:        []placement{{"d1", []string{"node1"}}},
		},
		{
			name:        "with pods already scheduled in a single domain not present in current placement, returns empty",
			podGroup:    withKey("topology"),
			scheduledOn: []string{"node2", "node3"},
			placement:   []*v1.Node{node("node0", "topology", "d2")},
			other:       []*v1.Node{node("node2", "topology", "d1"), node("node3", "topology", "d1")},
			want:        []placement{},
		},
		{
			name:          "with pods already scheduled in conflicting domains, returns error",
			podGroup:      withKey("topology"),
			scheduledOn:   []string{"node2", "node3"},
			placement:     []*v1.Node{node("node0", "topology", "d2"), node("node1", "topology", "d1")},
			other:         []*v1.Node{node("node2", "topology", "d0"), node("node3", "topology", "d1")},
			wantErrPrefix: "cannot determine domain for already scheduled pods: more than 1 domain found for pod group: d",
		},
		{
			name:        "with already scheduled pod on node outside of snapshot, returns error",
			podGroup:    withKey("topology"),
			scheduledOn: []string{"node2", "node4"},
			placement:   []*v1.Node{node("node0", "topology", "d2"), node("node1", "topology", "d1")},
			other:       []*v1.Node{node("node2", "topology", "d1"), node("node3", "topology", "d1")},
			wantErr:     `cannot determine domain for already scheduled pods: getting node for pod default/pod1: nodeinfo not found for node name "node4"`,
		},
		{
			name:        "with already scheduled pod on node without topology label, returns error",
			podGroup:    withKey("topology"),
			scheduledOn: []string{"node2"},
			placement:   []*v1.Node{node("node1", "topology", "d2")},
			other:       []*v1.Node{node("node2", "foo", "bar")},
			wantErr:     "cannot determine domain for already scheduled pods: no topology domain found for pod default/pod0",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cache := schedcore.NewCache(schedcore.Features{GenericWorkload: true, TopologyAwareWorkloadScheduling: true})
			for _, n := range append(append([]*v1.Node{}, tc.placement...), tc.other...) {
				cache.AddNode(n)
			}
			cache.AddPodGroup(tc.podGroup)
			for i, n := range tc.scheduledOn {
				name := fmt.Sprintf("pod%d", i)
				if err := cache.AddPod(schedtest.MakePod(name).UID(name).Node(n).PodGroupName(tc.podGroup.Name).Obj()); err != nil {
					t.Fatal(err)
				}
			}
			snap := schedcore.NewEmptySnapshot()
			cache.UpdateSnapshot(snap)
			p, err := New(context.Background(), nil, schedcore.NewHandle(snap, 1))
			if err != nil {
				t.Fatal(err)
			}
			parent := &schedcore.Placement{Name: initial}
			for _, n := range tc.placement {
				ni := schedcore.NewNodeInfo()
				ni.SetNode(n)
				parent.Nodes = append(parent.Nodes, ni)
			}
			res, st := p.(*TopologyPlacement).GeneratePlacements(context.Background(), schedcore.NewCycleState(), pgInfo{tc.podGroup}, parent)
			if tc.wantErr != "" || tc.wantErrPrefix != "" {
				if st.Code() != schedcore.Error {
					t.Fatalf("status = %v, want an Error", st)
				}
				if tc.wantErr != "" && st.Message() != tc.wantErr {
					t.Errorf("message = %q, want %q", st.Message(), tc.wantErr)
				}
				if tc.wantErrPrefix != "" && (len(st.Message()) < len(tc.wantErrPrefix) || st.Message()[:len(tc.wantErrPrefix)] != tc.wantErrPrefix) {
					t.Errorf("message = %q, want prefix %q", st.Message(), tc.wantErrPrefix)
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("GeneratePlacements: %v", st)
			}
			got := []placement{}
			for _, pl := range res.Placements {
				var nodes []string
				for _, n := range pl.Nodes {
					nodes = append(nodes, n.Node().Name)
				}
				got = append(got, placement{pl.Name, nodes})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("placements (-want +got):\n%s", diff)
			}
		})
	}
}
