package dynamicresources

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestExplainCacheFollowsTheSlices explains nodes one cycle after another
// while the slices change, on a plugin that keeps its explanations' index
// and CEL verdicts (explainCache): every explanation must be the one of
// its own cycle's slices, each node seeing its own slices and those for
// all nodes or selecting it, never another node's, and a selector's
// verdict must follow the device's content.
func TestExplainCacheFollowsTheSlices(t *testing.T) {
	ctx := context.Background()
	h100 := `device.attributes["gpu.example.com"].model == "H100"`
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{
		Selectors: []resourceapi.DeviceSelector{celSelector(h100)}}}
	dra := schedcore.NewDRAManager()
	dra.AddClass(class)
	dra.AddSlice(slice("n1", device("gpu-0", "A100", "40Gi")))
	dra.AddSlice(slice("n2", device("gpu-0", "H100", "80Gi"), device("gpu-1", "A100", "40Gi")))
	zone := gpuSlice("zone-a")
	zone.Spec.NodeName = nil
	zone.Spec.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
		{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}}}}
	zone.Spec.Devices = []resourceapi.Device{device("fpga-0", "A100", "40Gi")}
	dra.AddSlice(zone)
	dra.AddClaim(claim("c1", exactly("gpu", 2)))
	p, err := New(ctx, nil, schedcore.NewHandle(nil, 1, schedcore.WithDRA(dra)))
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*DynamicResources)
	pod := podWith("c1")
	pod.Name, pod.UID = "p", "uid-p"
	// explain runs a cycle and returns the gaps' details on node name.
	explain := func(name string, zoneA bool) []string {
		t.Helper()
		state := schedcore.NewCycleState()
		if _, st := pl.PreFilter(ctx, state, pod, nil); !st.IsSuccess() {
			t.Fatalf("PreFilter: %v", st)
		}
		ni := nodeInfo(name)
		if zoneA {
			n := ni.Node().DeepCopy()
			n.Labels = map[string]string{v1.LabelTopologyZone: "a"}
			ni = schedcore.NewNodeInfo()
			ni.SetNode(n)
		}
		st := pl.Filter(ctx, state, pod, ni)
		if !st.IsRejected() {
			t.Fatalf("Filter on %s = %v, want a rejection", name, st)
		}
		ex := pl.ExplainFilter(ctx, state, pod, ni, st)
		if ex == nil {
			t.Fatalf("no explanation on %s", name)
		}
		var out []string
		for _, g := range ex.Gaps {
			out = append(out, g.Details...)
		}
		return out
	}
	steps := []struct {
		name   string
		change func()
		node   string
		zoneA  bool
		want   []string
	}{
		{name: "a node sees its own slice only", node: "n1", want: []string{
			"gpu.example.com/n1/gpu-0: class gpu selector #0 is false: " + h100}},
		{name: "the same device content elsewhere gets the same verdict, another content its own", node: "n2", want: []string{
			"gpu.example.com/n2/gpu-0: free", "gpu.example.com/n2/gpu-1: class gpu selector #0 is false: " + h100}},
		{name: "a node of the zone also sees the zone's slice", node: "n1", zoneA: true, want: []string{
			"gpu.example.com/n1/gpu-0: class gpu selector #0 is false: " + h100, "gpu.example.com/zone-a/fpga-0: class gpu selector #0 is false: " + h100}},
		{name: "a new slice of the node is seen in the next cycle", node: "n1",
			change: func() {
				s := slice("n1", device("gpu-0", "H100", "80Gi"))
				s.Name = "n1-new"
				s.Spec.Pool.Generation = 2
				dra.AddSlice(s)
			},
			want: []string{"gpu.example.com/n1/gpu-0: free"}},
		{name: "a slice for all nodes is seen by every node", node: "n2",
			change: func() {
				s := gpuSlice("shared")
				s.Spec.NodeName, s.Spec.AllNodes = nil, ptr.To(true)
				s.Spec.Devices = []resourceapi.Device{device("gpu-9", "B200", "80Gi")}
				dra.AddSlice(s)
			},
			want: []string{"gpu.example.com/n2/gpu-0: free", "gpu.example.com/n2/gpu-1: class gpu selector #0 is false: " + h100,
				"gpu.example.com/shared/gpu-9: class gpu selector #0 is false: " + h100}},
	}
	for _, s := range steps {
		if s.change != nil {
			s.change()
		}
		if d := cmp.Diff(s.want, explain(s.node, s.zoneA)); d != "" {
			t.Errorf("%s: details (-want +got):\n%s", s.name, d)
		}
	}
}
