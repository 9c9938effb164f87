package podgroup

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

const rack = "topology.example.com/rack"

// gpuNode is an 8-GPU node of a rack holding the pods given.
func gpuNode(name, r string, pods ...*v1.Pod) *schedcore.NodeInfo {
	ni := schedcore.NewNodeInfo(pods...)
	ni.SetNode(st.MakeNode(name).Label(rack, r).Capacity("cpu", "64", "memory", "512Gi", "pods", "110", "nvidia.com/gpu", "8").Obj())
	return ni
}

func workers(n int, gpus string) []*v1.Pod {
	var out []*v1.Pod
	for i := 0; i < n; i++ {
		out = append(out, st.MakePod("w").Req("cpu", "8", "nvidia.com/gpu", gpus).Obj())
	}
	return out
}

func TestDomainShortfall(t *testing.T) {
	busy := st.MakePod("busy").Req("cpu", "8", "nvidia.com/gpu", "4").Obj()
	nodes := []*schedcore.NodeInfo{gpuNode("a1", "a", busy), gpuNode("a2", "a"), gpuNode("b1", "b")}
	tests := []struct {
		name  string
		nodes []*schedcore.NodeInfo
		pods  []*v1.Pod
		want  []report.ResourceShortfall
	}{
		{name: "a domain with room for the sum is short of nothing", nodes: nodes[:2], pods: workers(3, "4")},
		{name: "the running pods' requests are taken off", nodes: nodes[:2], pods: workers(4, "4"),
			want: []report.ResourceShortfall{{Resource: "nvidia.com/gpu", Requested: 16, Free: 12, Short: 4}}},
		{name: "a resource no node has is short of all of it", nodes: nodes[2:], pods: []*v1.Pod{st.MakePod("f").Req("example.com/fpga", "1").Obj()},
			want: []report.ResourceShortfall{{Resource: "example.com/fpga", Requested: 1, Free: 0, Short: 1}}},
		{name: "several resources, in name order", nodes: nodes[2:], pods: workers(9, "1"),
			want: []report.ResourceShortfall{{Resource: "cpu", Requested: 72000, Free: 64000, Short: 8000}, {Resource: "nvidia.com/gpu", Requested: 9, Free: 8, Short: 1}}},
		{name: "no pods, no shortfall", nodes: nodes},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := DomainShortfall(tc.nodes, tc.pods, schedcore.DefaultFeatures)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestGroupShortfallsPerPlacement(t *testing.T) {
	busy := st.MakePod("busy").Req("nvidia.com/gpu", "6").Obj()
	nodes := []*schedcore.NodeInfo{gpuNode("a1", "a", busy), gpuNode("a2", "a"), gpuNode("b1", "b")}
	placements := []report.PodGroupPlacement{{Name: "a", Nodes: 2}, {Name: "b", Nodes: 1}, {Name: "c", Nodes: 0, Feasible: true}}
	all := Shortfalls(nodes, rack, placements, workers(3, "4"), schedcore.DefaultFeatures)
	if all != nil {
		t.Errorf("with placements, the all-nodes shortfall is %v, want none", all)
	}
	want := [][]report.ResourceShortfall{
		{{Resource: "nvidia.com/gpu", Requested: 12, Free: 10, Short: 2}},
		{{Resource: "nvidia.com/gpu", Requested: 12, Free: 8, Short: 4}},
		nil, // feasible: not looked at
	}
	for i, p := range placements {
		if diff := cmp.Diff(want[i], p.Shortfall); diff != "" {
			t.Errorf("placement %s (-want +got):\n%s", p.Name, diff)
		}
	}
	if got := Shortfalls(nodes, "", nil, workers(7, "4"), schedcore.DefaultFeatures); !cmp.Equal(got, []report.ResourceShortfall{{Resource: "nvidia.com/gpu", Requested: 28, Free: 18, Short: 10}}) {
		t.Errorf("no placements: %v", got)
	}
	if note := NoDomainNote(nodes, "example.com/none"); note == "" {
		t.Errorf("a key no node has: no note")
	}
	if note := NoDomainNote(nodes, rack); note != "" {
		t.Errorf("a key nodes have: note %q", note)
	}
}
