package noderesources

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func scores(kv ...any) schedcore.NodeScoreList {
	var out schedcore.NodeScoreList
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, schedcore.NodeScore{Name: kv[i].(string), Score: int64(kv[i+1].(int))})
	}
	return out
}

func fitArgsFor(t configv1.ScoringStrategyType, resources []configv1.ResourceSpec, shape ...configv1.UtilizationShapePoint) *configv1.NodeResourcesFitArgs {
	s := &configv1.ScoringStrategy{Type: t, Resources: resources}
	if t == configv1.RequestedToCapacityRatio {
		s.RequestedToCapacityRatio = &configv1.RequestedToCapacityRatioParam{Shape: shape}
	}
	return &configv1.NodeResourcesFitArgs{ScoringStrategy: s}
}

func withSidecarReq(p *v1.Pod, req v1.ResourceList) *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "sidecar", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: req}})
	return p
}

func TestFitScore(t *testing.T) {
	twoNodes := func() []*v1.Node {
		return []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000")}
	}
	existing := func() []*v1.Pod {
		return []*v1.Pod{podReq("node1", rl("cpu", "2000", "memory", "4000")), podReq("node2", rl("cpu", "1000", "memory", "2000"))}
	}
	down := []configv1.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
	up := []configv1.UtilizationShapePoint{{Utilization: 0, Score: 0}, {Utilization: 100, Score: 10}}
	tests := []struct {
		name     string
		pod      *v1.Pod
		nodes    []*v1.Node
		existing []*v1.Pod
		args     *configv1.NodeResourcesFitArgs
		want     schedcore.NodeScoreList
	}{
		{
			name: "RequestedToCapacityRatio with a decreasing shape favours the emptier node",
			pod:  podReq("", rl("cpu", "3000", "memory", "5000")), nodes: twoNodes(), existing: existing(),
			args: fitArgsFor(configv1.RequestedToCapacityRatio, defaultResources, down...),
			want: scores("node1", 10, "node2", 32),
		},
		{
			name: "RequestedToCapacityRatio with an increasing shape favours the fuller node",
			pod:  podReq("", rl("cpu", "3000", "memory", "5000")), nodes: twoNodes(), existing: existing(),
			args: fitArgsFor(configv1.RequestedToCapacityRatio, defaultResources, up...),
			want: scores("node1", 95, "node2", 68),
		},
		{
			name: "MostAllocated",
			pod:  podReq("", rl("cpu", "1000", "memory", "2000")), nodes: twoNodes(), existing: existing(),
			args: fitArgsFor(configv1.MostAllocated, defaultResources),
			want: scores("node1", 67, "node2", 36),
		},
		{
			name: "LeastAllocated",
			pod:  podReq("", rl("cpu", "1000", "memory", "2000")), nodes: twoNodes(), existing: existing(),
			args: fitArgsFor(configv1.LeastAllocated, defaultResources),
			want: scores("node1", 32, "node2", 63),
		},
		{
			name: "nil args are LeastAllocated over cpu and memory",
			pod:  podReq("", rl("cpu", "1000", "memory", "2000")), nodes: twoNodes(), existing: existing(),
			want: scores("node1", 32, "node2", 63),
		},
		{
			name:     "MostAllocated counts sidecar containers of existing pods",
			pod:      podReq("", rl("cpu", "1000", "memory", "2000")),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "4000", "memory", "10000")},
			existing: []*v1.Pod{withSidecarReq(podReq("node1", rl("cpu", "1000", "memory", "2000")), rl("cpu", "1000", "memory", "2000")), podReq("node2", rl("cpu", "1000", "memory", "2000"))},
			args:     fitArgsFor(configv1.MostAllocated, defaultResources),
			want:     scores("node1", 67, "node2", 45),
		},
		{
			name:     "LeastAllocated counts sidecar containers of existing pods",
			pod:      podReq("", rl("cpu", "1000", "memory", "2000")),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "4000", "memory", "10000")},
			existing: []*v1.Pod{withSidecarReq(podReq("node1", rl("cpu", "1000", "memory", "2000")), rl("cpu", "1000", "memory", "2000")), podReq("node2", rl("cpu", "1000", "memory", "2000"))},
			args:     fitArgsFor(configv1.LeastAllocated, defaultResources),
			want:     scores("node1", 32, "node2", 55),
		},
	}
	for _, tc := range tests {
		for _, preScore := range []bool{true, false} {
			name := tc.name
			if !preScore {
				name += " if PreScore is not called"
			}
			t.Run(name, func(t *testing.T) {
				var args *configv1.NodeResourcesFitArgs
				if tc.args != nil {
					args = tc.args.DeepCopy()
				}
				got, st := scoreNodes(t, newFit(t, args), tc.pod, tc.existing, tc.nodes, preScore)
				if st != nil {
					t.Fatalf("PreScore: %v", st)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("scores (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// twoContainers is kube's st.MakePod().Req(1000/2000).Req(2000/3000):
// cpu 3000 cores and memory 5000 bytes in two containers.
func twoContainers(node string) *v1.Pod {
	return podReq(node, rl("cpu", "1000", "memory", "2000"), rl("cpu", "2000", "memory", "3000"))
}

func TestLeastAllocatedScoringStrategy(t *testing.T) {
	tests := []struct {
		name      string
		pod       *v1.Pod
		nodes     []*v1.Node
		existing  []*v1.Pod
		resources []configv1.ResourceSpec
		want      schedcore.NodeScoreList
	}{
		{
			name:  "nothing scheduled, nothing requested",
			pod:   podReq(""),
			nodes: []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "4000", "memory", "10000")},
			want:  scores("node1", 100, "node2", 100),
		},
		{
			// (4000-3000)*100/4000 = 25, (10000-5000)*100/10000 = 50 → 37; 50 and 50 → 50.
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   twoContainers(""),
			nodes: []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000")},
			want:  scores("node1", 37, "node2", 50),
		},
		{
			name:     "no resources requested, pods scheduled",
			pod:      podReq(""),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "4000", "memory", "10000")},
			existing: []*v1.Pod{podReq("node1"), podReq("node1"), podReq("node2"), podReq("node2")},
			want:     scores("node1", 100, "node2", 100),
		},
		{
			// cpu (10000-6000)*100/10000 = 40; memory 100 on node1, 75 on node2.
			name:  "no resources requested, pods scheduled with resources",
			pod:   podReq(""),
			nodes: []*v1.Node{nodeWith("node1", "cpu", "10000", "memory", "20000"), nodeWith("node2", "cpu", "10000", "memory", "20000")},
			existing: []*v1.Pod{
				podReq("node1", rl("cpu", "3000", "memory", "0")), podReq("node1", rl("cpu", "3000", "memory", "0")),
				podReq("node2", rl("cpu", "3000", "memory", "0")), podReq("node2", rl("cpu", "3000", "memory", "5000")),
			},
			want: scores("node1", 70, "node2", 57),
		},
		{
			name:     "resources requested, pods scheduled with resources",
			pod:      twoContainers(""),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "10000", "memory", "20000"), nodeWith("node2", "cpu", "10000", "memory", "20000")},
			existing: []*v1.Pod{podReq("node1", rl("cpu", "3000", "memory", "0")), podReq("node2", rl("cpu", "3000", "memory", "5000"))},
			want:     scores("node1", 57, "node2", 45),
		},
		{
			name:     "resources requested, pods scheduled with resources, differently sized nodes",
			pod:      twoContainers(""),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "10000", "memory", "20000"), nodeWith("node2", "cpu", "10000", "memory", "50000")},
			existing: []*v1.Pod{podReq("node1", rl("cpu", "3000", "memory", "0")), podReq("node2", rl("cpu", "3000", "memory", "5000"))},
			want:     scores("node1", 57, "node2", 60),
		},
		{
			// cpu over capacity scores 0.
			name:     "requested resources exceed node capacity",
			pod:      podReq("", rl("cpu", "3000", "memory", "0")),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "4000", "memory", "10000")},
			existing: []*v1.Pod{podReq("node1", rl("cpu", "3000", "memory", "0")), podReq("node2", rl("cpu", "3000", "memory", "5000"))},
			want:     scores("node1", 50, "node2", 25),
		},
		{
			name:     "zero node resources, pods scheduled with resources",
			pod:      podReq(""),
			nodes:    []*v1.Node{nodeWith("node1"), nodeWith("node2")},
			existing: []*v1.Pod{podReq("node1", rl("cpu", "3000", "memory", "0")), podReq("node2", rl("cpu", "3000", "memory", "5000"))},
			want:     scores("node1", 0, "node2", 0),
		},
		{
			// (25*1 + 50*2)/3 = 41; (50 + 100)/3 = 50.
			name:      "nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
			pod:       twoContainers("node1"),
			nodes:     []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000")},
			resources: []configv1.ResourceSpec{{Name: "memory", Weight: 2}, {Name: "cpu", Weight: 1}},
			want:      scores("node1", 41, "node2", 50),
		},
		{
			// A weight of 0 in v1 args defaults to 1 (kube's internal-config
			// test expects a validation error instead).
			name:      "a zero weight defaults to one",
			pod:       twoContainers("node1"),
			nodes:     []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000")},
			resources: []configv1.ResourceSpec{{Name: "memory", Weight: 1}, {Name: "cpu", Weight: 0}},
			want:      scores("node1", 37, "node2", 50),
		},
		{
			name:      "bypass extended resource if the pod does not request",
			pod:       twoContainers("node1"),
			nodes:     []*v1.Node{nodeWith("node1", "cpu", "6000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000", extendedRes, "4")},
			resources: extendedResourceSet,
			want:      scores("node1", 50, "node2", 50),
		},
		{
			// abc.com/xyz: (4-2)*100/4 = 50 and (10-2)*100/10 = 80.
			name:      "honor extended resource if the pod requests",
			pod:       podReq("node1", rl("cpu", "3000", "memory", "5000", extendedRes, "2")),
			nodes:     []*v1.Node{nodeWith("node1", "cpu", "6000", "memory", "10000", extendedRes, "4"), nodeWith("node2", "cpu", "6000", "memory", "10000", extendedRes, "10")},
			resources: extendedResourceSet,
			want:      scores("node1", 50, "node2", 60),
		},
		{
			name:      "if the node doesn't have a resource",
			pod:       podReq("node1", rl("cpu", "3000", "memory", "4000")),
			nodes:     []*v1.Node{nodeWith("node1", "cpu", "6000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000", extendedRes, "4")},
			resources: []configv1.ResourceSpec{{Name: extendedRes, Weight: 2}, {Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}},
			want:      scores("node1", 55, "node2", 55),
		},
		{
			// 100m and 200Mi per request-less container: node1 holds 300m of
			// 1000m cpu → 70, 600Mi of 2000Mi memory → 70.
			name:     "containers without requests count the non-zero defaults",
			pod:      podReq("", v1.ResourceList{}),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "1", "memory", "2000Mi"), nodeWith("node2", "cpu", "1", "memory", "2000Mi")},
			existing: []*v1.Pod{podReq("node1", v1.ResourceList{}, v1.ResourceList{})},
			want:     scores("node1", 70, "node2", 90),
		},
		{
			name:      "ephemeral storage is scored from the node's requests",
			pod:       podReq("", rl("ephemeral-storage", "25")),
			nodes:     []*v1.Node{nodeWith("node1", "ephemeral-storage", "100"), nodeWith("node2", "ephemeral-storage", "100")},
			existing:  []*v1.Pod{podReq("node1", rl("ephemeral-storage", "50"))},
			resources: []configv1.ResourceSpec{{Name: "ephemeral-storage", Weight: 1}},
			want:      scores("node1", 25, "node2", 75),
		},
		{
			name:      "pods is not a scorable resource",
			pod:       podReq("", rl("cpu", "1")),
			nodes:     []*v1.Node{nodeWith("node1", "cpu", "4"), nodeWith("node2", "cpu", "2")},
			resources: []configv1.ResourceSpec{{Name: "pods", Weight: 1}, {Name: "cpu", Weight: 1}},
			want:      scores("node1", 75, "node2", 50),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st := scoreNodes(t, newFit(t, fitArgsFor(configv1.LeastAllocated, tc.resources)), tc.pod, tc.existing, tc.nodes, true)
			if st != nil {
				t.Fatalf("PreScore: %v", st)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMostAllocatedScoringStrategy(t *testing.T) {
	tests := []struct {
		name      string
		pod       *v1.Pod
		nodes     []*v1.Node
		existing  []*v1.Pod
		resources []configv1.ResourceSpec
		want      schedcore.NodeScoreList
	}{
		{
			name:  "nothing scheduled, nothing requested",
			pod:   podReq(""),
			nodes: []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "4000", "memory", "10000")},
			want:  scores("node1", 0, "node2", 0),
		},
		{
			// 3000*100/4000 = 75, 5000*100/10000 = 50 → 62; 50, 50 → 50.
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   twoContainers(""),
			nodes: []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000")},
			want:  scores("node1", 62, "node2", 50),
		},
		{
			name:  "no resources requested, pods scheduled with resources",
			pod:   podReq(""),
			nodes: []*v1.Node{nodeWith("node1", "cpu", "10000", "memory", "20000"), nodeWith("node2", "cpu", "10000", "memory", "20000")},
			existing: []*v1.Pod{
				podReq("node1", rl("cpu", "3000", "memory", "0")), podReq("node1", rl("cpu", "3000", "memory", "0")),
				podReq("node2", rl("cpu", "3000", "memory", "0")), podReq("node2", rl("cpu", "3000", "memory", "5000")),
			},
			want: scores("node1", 30, "node2", 42),
		},
		{
			name:     "resources requested, pods scheduled with resources",
			pod:      twoContainers(""),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "10000", "memory", "20000"), nodeWith("node2", "cpu", "10000", "memory", "20000")},
			existing: []*v1.Pod{podReq("node1", rl("cpu", "3000", "memory", "0")), podReq("node2", rl("cpu", "3000", "memory", "5000"))},
			want:     scores("node1", 42, "node2", 55),
		},
		{
			name:  "resources requested equal node capacity",
			pod:   podReq("", rl("cpu", "2000", "memory", "4000"), rl("cpu", "3000", "memory", "5000")),
			nodes: []*v1.Node{nodeWith("node1", "cpu", "5000", "memory", "10000"), nodeWith("node2", "cpu", "10000", "memory", "9000")},
			want:  scores("node1", 95, "node2", 75),
		},
		{
			name:      "nothing scheduled, resources requested with different weights, differently sized nodes",
			pod:       twoContainers(""),
			nodes:     []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000")},
			resources: []configv1.ResourceSpec{{Name: "memory", Weight: 2}, {Name: "cpu", Weight: 1}},
			want:      scores("node1", 58, "node2", 50),
		},
		{
			// cpu: 300m of 250m is capped at 100%; memory 600Mi/1000Mi = 60%
			// → 80. node2: 100m/250m = 40%, 200Mi/1000Mi = 20% → 30.
			name:     "no resources requested, pods scheduled, nonzero request for resource",
			pod:      podReq("", v1.ResourceList{}),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "250m", "memory", "1000Mi"), nodeWith("node2", "cpu", "250m", "memory", "1000Mi")},
			existing: []*v1.Pod{podReq("node1", v1.ResourceList{}), podReq("node1", v1.ResourceList{})},
			want:     scores("node1", 80, "node2", 30),
		},
		{
			name:      "bypass extended resource if the pod does not request",
			pod:       twoContainers(""),
			nodes:     []*v1.Node{nodeWith("node1", "cpu", "6000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000", extendedRes, "4")},
			resources: extendedResourceSet,
			want:      scores("node1", 50, "node2", 50),
		},
		{
			name:      "honor extended resource if the pod request",
			pod:       podReq("node1", rl("cpu", "3000", "memory", "5000", extendedRes, "2")),
			nodes:     []*v1.Node{nodeWith("node1", "cpu", "6000", "memory", "10000", extendedRes, "4"), nodeWith("node2", "cpu", "6000", "memory", "10000", extendedRes, "10")},
			resources: extendedResourceSet,
			want:      scores("node1", 50, "node2", 40),
		},
		{
			name:      "if the node doesn't have a resource",
			pod:       podReq("node1", rl("cpu", "3000", "memory", "4000")),
			nodes:     []*v1.Node{nodeWith("node1", "cpu", "6000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000", extendedRes, "4")},
			resources: []configv1.ResourceSpec{{Name: extendedRes, Weight: 2}, {Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}},
			want:      scores("node1", 45, "node2", 45),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st := scoreNodes(t, newFit(t, fitArgsFor(configv1.MostAllocated, tc.resources)), tc.pod, tc.existing, tc.nodes, true)
			if st != nil {
				t.Fatalf("PreScore: %v", st)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequestedToCapacityRatioScoringStrategy(t *testing.T) {
	shape := []configv1.UtilizationShapePoint{{Utilization: 0, Score: 10}, {Utilization: 100, Score: 0}}
	tests := []struct {
		name     string
		pod      *v1.Pod
		nodes    []*v1.Node
		existing []*v1.Pod
		want     schedcore.NodeScoreList
	}{
		{
			name:     "nothing scheduled, nothing requested (default - least requested nodes have priority)",
			pod:      podReq(""),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "4000", "memory", "10000")},
			existing: []*v1.Pod{podReq("node1"), podReq("node1")},
			want:     scores("node1", 100, "node2", 100),
		},
		{
			name:     "nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have priority)",
			pod:      twoContainers(""),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000")},
			existing: []*v1.Pod{podReq("node1"), podReq("node1")},
			want:     scores("node1", 38, "node2", 50),
		},
		{
			name:     "no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
			pod:      podReq(""),
			nodes:    []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000"), nodeWith("node2", "cpu", "6000", "memory", "10000")},
			existing: []*v1.Pod{podReq("node1", rl("cpu", "3000", "memory", "5000")), podReq("node2", rl("cpu", "3000", "memory", "5000"))},
			want:     scores("node1", 38, "node2", 50),
		},
		{
			// Over capacity scores f(100) = 0, and a zero is left out of the
			// average: only memory (50% → 50) counts.
			name:  "a resource over capacity scores the shape at full utilization",
			pod:   podReq("", rl("cpu", "5000", "memory", "5000")),
			nodes: []*v1.Node{nodeWith("node1", "cpu", "4000", "memory", "10000")},
			want:  scores("node1", 50),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st := scoreNodes(t, newFit(t, fitArgsFor(configv1.RequestedToCapacityRatio, defaultResources, shape...)), tc.pod, tc.existing, tc.nodes, true)
			if st != nil {
				t.Fatalf("PreScore: %v", st)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBrokenLinearFunction(t *testing.T) {
	type assertion struct{ p, want int64 }
	tests := []struct {
		name       string
		points     []shapePoint
		assertions []assertion
	}{
		{
			name:   "two points, flat outside them",
			points: []shapePoint{{10, 1}, {90, 9}},
			assertions: []assertion{
				{-10, 1}, {0, 1}, {9, 1}, {10, 1}, {15, 1}, {19, 1}, {20, 2}, {89, 8}, {90, 9}, {99, 9}, {100, 9}, {110, 9},
			},
		},
		{
			name:   "up then down",
			points: []shapePoint{{0, 2}, {40, 10}, {100, 0}},
			assertions: []assertion{
				{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0},
			},
		},
		{
			name:       "constant",
			points:     []shapePoint{{0, 2}, {40, 2}, {100, 2}},
			assertions: []assertion{{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, a := range tc.assertions {
				if got := brokenLinear(tc.points, a.p); got != a.want {
					t.Errorf("f(%d) = %d, want %d", a.p, got, a.want)
				}
			}
		})
	}
}

func TestResourceBinPackingSingleExtended(t *testing.T) {
	foo4 := map[string]int64{"intel.com/foo": 4}
	foo8 := map[string]int64{"intel.com/foo": 8}
	nodes := func() []*v1.Node {
		return []*v1.Node{makeNode("node1", 4000, 10000*1024*1024, foo8), makeNode("node2", 4000, 10000*1024*1024, foo4)}
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing []*v1.Pod
		want     schedcore.NodeScoreList
	}{
		{name: "nothing scheduled, nothing requested", pod: podReq(""), want: scores("node1", 0, "node2", 0)},
		{
			// 2/8 → f(25) = 2.5 → 2; 2/4 → f(50) = 5.
			name: "resources requested, pods scheduled with less resources", pod: podReq("", rl("intel.com/foo", "2")),
			existing: []*v1.Pod{podReq("")}, want: scores("node1", 2, "node2", 5),
		},
		{
			name: "resources requested, pods scheduled with resources, on node with existing pod running", pod: podReq("", rl("intel.com/foo", "2")),
			existing: []*v1.Pod{podReq("node2", rl("intel.com/foo", "2"))}, want: scores("node1", 2, "node2", 10),
		},
		{
			name: "resources requested, pods scheduled with more resources", pod: podReq("", rl("intel.com/foo", "4")),
			existing: []*v1.Pod{podReq("")}, want: scores("node1", 5, "node2", 10),
		},
	}
	args := fitArgsFor(configv1.RequestedToCapacityRatio, []configv1.ResourceSpec{{Name: "intel.com/foo", Weight: 1}},
		configv1.UtilizationShapePoint{Utilization: 0, Score: 0}, configv1.UtilizationShapePoint{Utilization: 100, Score: 1})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st := scoreNodes(t, newFit(t, args.DeepCopy()), tc.pod, tc.existing, nodes(), true)
			if st != nil {
				t.Fatalf("PreScore: %v", st)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResourceBinPackingMultipleExtended(t *testing.T) {
	res1 := map[string]int64{"intel.com/foo": 4, "intel.com/bar": 8}
	res2 := map[string]int64{"intel.com/foo": 8, "intel.com/bar": 4}
	nodes := func() []*v1.Node {
		return []*v1.Node{makeNode("node1", 4000, 10000*1024*1024, res2), makeNode("node2", 4000, 10000*1024*1024, res1)}
	}
	pod1 := func(node string) *v1.Pod { return podReq(node, rl("intel.com/foo", "2", "intel.com/bar", "2")) }
	pod2 := func(node string) *v1.Pod { return podReq(node, rl("intel.com/foo", "4", "intel.com/bar", "2")) }
	tests := []struct {
		name     string
		pod      *v1.Pod
		existing []*v1.Pod
		want     schedcore.NodeScoreList
	}{
		{name: "nothing scheduled, nothing requested", pod: podReq(""), want: scores("node1", 0, "node2", 0)},
		{
			// node1: foo f(25)=2 (w3), bar f(50)=5 (w5) → 31/8 = 3.875 → 4;
			// node2: foo 5, bar 2 → 25/8 = 3.125 → 3.
			name: "resources requested, pods scheduled with less resources", pod: pod1(""),
			existing: []*v1.Pod{podReq("")}, want: scores("node1", 4, "node2", 3),
		},
		{
			name: "resources requested, pods scheduled with resources, on node with existing pod running", pod: pod1(""),
			existing: []*v1.Pod{pod2("node2")}, want: scores("node1", 4, "node2", 7),
		},
		{
			name: "resources requested, pods scheduled with more resources", pod: pod2(""),
			existing: []*v1.Pod{podReq("")}, want: scores("node1", 5, "node2", 5),
		},
	}
	args := fitArgsFor(configv1.RequestedToCapacityRatio, []configv1.ResourceSpec{{Name: "intel.com/foo", Weight: 3}, {Name: "intel.com/bar", Weight: 5}},
		configv1.UtilizationShapePoint{Utilization: 0, Score: 0}, configv1.UtilizationShapePoint{Utilization: 100, Score: 1})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, st := scoreNodes(t, newFit(t, args.DeepCopy()), tc.pod, tc.existing, nodes(), true)
			if st != nil {
				t.Fatalf("PreScore: %v", st)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFitScoringRequests(t *testing.T) {
	const oneMi = 1048576
	q := resource.MustParse
	tests := []struct {
		name string
		spec v1.PodSpec
		want []int64 // cpu, memory
	}{
		{
			name: "overhead only",
			spec: v1.PodSpec{Overhead: v1.ResourceList{v1.ResourceCPU: q("1"), v1.ResourceMemory: q("1Mi")}},
			want: []int64{1000, oneMi},
		},
		{
			name: "1x requestless container",
			spec: v1.PodSpec{Containers: []v1.Container{{}}},
			want: []int64{schedcore.DefaultMilliCPURequest, schedcore.DefaultMemoryRequest},
		},
		{
			name: "2x requestless container",
			spec: v1.PodSpec{Containers: []v1.Container{{}, {}}},
			want: []int64{2 * schedcore.DefaultMilliCPURequest, 2 * schedcore.DefaultMemoryRequest},
		},
		{
			name: "request container + requestless container",
			spec: v1.PodSpec{Containers: []v1.Container{{Resources: v1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Mi")}}, {}}},
			want: []int64{1000 + schedcore.DefaultMilliCPURequest, oneMi + schedcore.DefaultMemoryRequest},
		},
		{
			name: "container + requestless container + overhead",
			spec: v1.PodSpec{
				Overhead:   rl("cpu", "1", "memory", "1Mi"),
				Containers: []v1.Container{{Resources: v1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Mi")}}, {}},
			},
			want: []int64{2000 + schedcore.DefaultMilliCPURequest, 2*oneMi + schedcore.DefaultMemoryRequest},
		},
		{
			name: "init container + container + requestless container + overhead",
			spec: v1.PodSpec{
				Overhead:       rl("cpu", "1", "memory", "1Mi"),
				InitContainers: []v1.Container{{Resources: v1.ResourceRequirements{Requests: rl("cpu", "3")}}},
				Containers:     []v1.Container{{Resources: v1.ResourceRequirements{Requests: rl("cpu", "1", "memory", "1Mi")}}, {}},
			},
			want: []int64{4000, 2*oneMi + schedcore.DefaultMemoryRequest},
		},
		{
			name: "requestless init container + small init container + small container",
			spec: v1.PodSpec{
				InitContainers: []v1.Container{{}, {Resources: v1.ResourceRequirements{Requests: rl("cpu", "1m", "memory", "1")}}},
				Containers:     []v1.Container{{Resources: v1.ResourceRequirements{Requests: rl("cpu", "3m", "memory", "3")}}},
			},
			want: []int64{schedcore.DefaultMilliCPURequest, schedcore.DefaultMemoryRequest},
		},
		{
			name: "requestless init container + small init container + small container + requestless container",
			spec: v1.PodSpec{
				InitContainers: []v1.Container{{}, {Resources: v1.ResourceRequirements{Requests: rl("cpu", "1m", "memory", "1")}}},
				Containers:     []v1.Container{{Resources: v1.ResourceRequirements{Requests: rl("cpu", "3m", "memory", "3")}}, {}},
			},
			want: []int64{3 + schedcore.DefaultMilliCPURequest, 3 + schedcore.DefaultMemoryRequest},
		},
		{
			// kube v1.37 builds the Fit scorer without the plugin's feature
			// flags: pod-level requests are not seen by scoring, so the
			// request-less container counts the defaults.
			name: "pod-level requests are ignored by Fit's scoring",
			spec: v1.PodSpec{Resources: &v1.ResourceRequirements{Requests: rl("cpu", "2", "memory", "1Gi")}, Containers: []v1.Container{{}}},
			want: []int64{schedcore.DefaultMilliCPURequest, schedcore.DefaultMemoryRequest},
		},
	}
	pl := newFit(t, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := pl.scorer.podRequests(&v1.Pod{Spec: tc.spec})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scoring requests (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScoreWithoutResourcesIsAnError(t *testing.T) {
	s := newScorer(leastAllocated, nil, false, resourcehelper.PodResourcesOptions{})
	_, st := s.nodeScore(schedcore.NewNodeInfo(), nil, nil)
	want := schedcore.NewStatus(schedcore.Error, ErrReasonResourcesNotFound)
	if diff := cmp.Diff(want, st); diff != "" {
		t.Errorf("status (-want +got):\n%s", diff)
	}
}

func TestScoreDoesNotAllocate(t *testing.T) {
	for _, st := range []configv1.ScoringStrategyType{configv1.LeastAllocated, configv1.MostAllocated, configv1.RequestedToCapacityRatio} {
		t.Run(string(st), func(t *testing.T) {
			pl := newFit(t, fitArgsFor(st, extendedResourceSet, configv1.UtilizationShapePoint{Utilization: 0, Score: 0}, configv1.UtilizationShapePoint{Utilization: 100, Score: 10}))
			pod := podReq("", rl("cpu", "1", "memory", "1Gi", extendedRes, "1"))
			snap := schedcore.NewSnapshot(nil, []*v1.Node{nodeWith("n", "cpu", "4", "memory", "8Gi", extendedRes, "4")})
			ni, _ := snap.Get("n")
			state := schedcore.NewCycleState()
			pl.PreScore(context.Background(), state, pod, snap.List())
			allocs := testing.AllocsPerRun(100, func() { _, _ = pl.Score(context.Background(), state, pod, ni) })
			if allocs != 0 {
				t.Errorf("Score allocated %v times per run, want 0", allocs)
			}
		})
	}
}
