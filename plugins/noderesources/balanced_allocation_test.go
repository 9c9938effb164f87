package noderesources

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func cpuOnly(c string) v1.ResourceList         { return rl("cpu", c) }
func cpuAndMemory(c, m string) v1.ResourceList { return rl("cpu", c, "memory", m) }
func cpuMemGPU(c, m, g string) v1.ResourceList { return rl("cpu", c, "memory", m, "nvidia.com/gpu", g) }
func gpu(n int64) map[string]int64             { return map[string]int64{"nvidia.com/gpu": n} }

func TestBalancedAllocationPreScoreSkipsBestEffortPods(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		args *configv1.NodeResourcesBalancedAllocationArgs
		want *schedcore.Status
	}{
		{name: "a pod without requests is skipped", pod: podReq("", v1.ResourceList{}), want: schedcore.NewStatus(schedcore.Skip)},
		{name: "a pod without containers is skipped", pod: podReq(""), want: schedcore.NewStatus(schedcore.Skip)},
		{name: "a pod requesting only an unscored resource is skipped", pod: podReq("", rl("ephemeral-storage", "1Gi")), want: schedcore.NewStatus(schedcore.Skip)},
		{name: "a pod requesting cpu is scored", pod: podReq("", cpuOnly("100m"))},
		{name: "a pod with pod-level requests is scored", pod: withPodRequests(podReq("", v1.ResourceList{}), rl("memory", "1Gi"))},
		{name: "overhead counts as a request", pod: withOverhead(podReq(""), rl("cpu", "10m"))},
		{
			name: "a pod requesting a configured scalar resource is scored",
			pod:  podReq("", rl("nvidia.com/gpu", "1")),
			args: &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu"}, {Name: "memory"}, {Name: "nvidia.com/gpu"}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var args *configv1.NodeResourcesBalancedAllocationArgs
			if tc.args != nil {
				args = tc.args
			}
			pl := newBalanced(t, args)
			got := pl.PreScore(context.Background(), schedcore.NewCycleState(), tc.pod, nil)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PreScore (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBalancedAllocationScore(t *testing.T) {
	withGPU := &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}, {Name: "memory", Weight: 1}, {Name: "nvidia.com/gpu", Weight: 1}}}
	tests := []struct {
		name     string
		pod      *v1.Pod
		nodes    []*v1.Node
		existing []*v1.Pod
		args     *configv1.NodeResourcesBalancedAllocationArgs
		want     schedcore.NodeScoreList
	}{
		{
			// node1: cpu 0 → 75%, memory 0 → 50%: 100 → 87, score 68.
			// node2: 50% and 50%: 100 → 100, score 75.
			name:  "nothing scheduled, resources requested, differently sized nodes",
			pod:   podReq("", cpuAndMemory("1000m", "2000"), cpuAndMemory("2000m", "3000")),
			nodes: []*v1.Node{makeNode("node1", 4000, 10000, nil), makeNode("node2", 6000, 10000, nil)},
			want:  scores("node1", 68, "node2", 75),
		},
		{
			// node1: cpu 30% → 60%, memory 0% → 25%: 85 → 82, score 73.
			// node2: cpu 30% → 60%, memory 25% → 50%: 97 → 95, score 74.
			name:  "resources requested, pods scheduled with resources",
			pod:   podReq("", cpuAndMemory("1000m", "2000"), cpuAndMemory("2000m", "3000")),
			nodes: []*v1.Node{makeNode("node1", 10000, 20000, nil), makeNode("node2", 10000, 20000, nil)},
			existing: []*v1.Pod{
				podReq("node1", cpuOnly("1000m"), cpuOnly("2000m")),
				podReq("node2", cpuAndMemory("1000m", "2000"), cpuAndMemory("2000m", "3000")),
			},
			want: scores("node1", 73, "node2", 74),
		},
		{
			name:  "resources requested, pods scheduled with resources, differently sized nodes",
			pod:   podReq("", cpuAndMemory("1000m", "2000"), cpuAndMemory("2000m", "3000")),
			nodes: []*v1.Node{makeNode("node1", 10000, 20000, nil), makeNode("node2", 10000, 50000, nil)},
			existing: []*v1.Pod{
				podReq("node1", cpuOnly("1000m"), cpuOnly("2000m")),
				podReq("node2", cpuAndMemory("1000m", "2000"), cpuAndMemory("2000m", "3000")),
			},
			want: scores("node1", 73, "node2", 70),
		},
		{
			// node1: cpu 100% → 100%, memory 0% → 100%: 50 → 100, score 100.
			// node2: cpu 0%, memory 0% → 100%: 100 → 50, score 50.
			name:     "resources requested, pods scheduled with resources, nodes to reach min/max score",
			pod:      podReq("", rl("memory", "2000"), rl("memory", "3000")),
			nodes:    []*v1.Node{makeNode("node1", 3000, 5000, nil), makeNode("node2", 3000, 5000, nil)},
			existing: []*v1.Pod{podReq("node1", cpuOnly("1000m"), cpuOnly("2000m"))},
			want:     scores("node1", 100, "node2", 50),
		},
		{
			name:  "requested resources at node capacity",
			pod:   podReq("", cpuOnly("1000m"), cpuOnly("2000m")),
			nodes: []*v1.Node{makeNode("node1", 6000, 10000, nil), makeNode("node2", 6000, 10000, nil)},
			existing: []*v1.Pod{
				podReq("node1", cpuOnly("1000m"), cpuOnly("2000m")),
				podReq("node2", cpuAndMemory("1000m", "2000"), cpuAndMemory("2000m", "3000")),
			},
			want: scores("node1", 62, "node2", 62),
		},
		{
			// Three resources: the population standard deviation.
			name:  "scalar resource is included in the score computation if pod requests the scalar resource",
			pod:   podReq("", cpuMemGPU("0", "0", "1")),
			nodes: []*v1.Node{makeNode("node1", 3500, 40000, gpu(8)), makeNode("node2", 3500, 40000, gpu(8))},
			existing: []*v1.Pod{
				podReq("node1", cpuAndMemory("1000m", "2000"), cpuMemGPU("2000m", "3000", "3")),
				podReq("node2", cpuAndMemory("1000m", "2000"), cpuAndMemory("2000m", "3000")),
			},
			args: withGPU,
			want: scores("node1", 75, "node2", 76),
		},
		{
			name:  "scalar resource is not included in the score computation if pod doesn't request the scalar resource",
			pod:   podReq("", cpuAndMemory("1000m", "2000"), cpuAndMemory("2000m", "3000")),
			nodes: []*v1.Node{makeNode("node1", 3500, 40000, gpu(8)), makeNode("node2", 3500, 40000, nil)},
			args:  withGPU,
			want:  scores("node1", 56, "node2", 56),
		},
		{
			// Requested, not NonZeroRequested: request-less pods weigh nothing.
			name:     "pods without requests do not count",
			pod:      podReq("", cpuAndMemory("1000m", "2000")),
			nodes:    []*v1.Node{makeNode("node1", 4000, 8000, nil), makeNode("node2", 4000, 8000, nil)},
			existing: []*v1.Pod{podReq("node1", v1.ResourceList{}, v1.ResourceList{})},
			want:     scores("node1", 75, "node2", 75),
		},
		{
			// Pod-level requests count here (cpu 2 of 4 = 50%, memory 4000 of
			// 8000 = 50%): balanced before and after, 75.
			name:  "pod-level requests are honoured",
			pod:   withPodRequests(podReq("", v1.ResourceList{}), cpuAndMemory("2", "4000")),
			nodes: []*v1.Node{makeNode("node1", 4000, 8000, nil)},
			want:  scores("node1", 75),
		},
		{
			// One resource: std is 0 before and after, 75.
			name:  "a single resource always scores 75",
			pod:   podReq("", cpuOnly("1")),
			nodes: []*v1.Node{makeNode("node1", 4000, 8000, nil)},
			args:  &configv1.NodeResourcesBalancedAllocationArgs{Resources: []configv1.ResourceSpec{{Name: "cpu", Weight: 1}}},
			want:  scores("node1", 75),
		},
	}
	for _, tc := range tests {
		for _, preScore := range []bool{true, false} {
			name := tc.name
			if !preScore {
				name += " if PreScore not called"
			}
			t.Run(name, func(t *testing.T) {
				var args *configv1.NodeResourcesBalancedAllocationArgs
				if tc.args != nil {
					args = tc.args.DeepCopy()
				}
				got, st := scoreNodes(t, newBalanced(t, args), tc.pod, tc.existing, tc.nodes, preScore)
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

func TestBalancedAllocationScoreOfBestEffortPodWithoutPreScore(t *testing.T) {
	got, st := scoreNodes(t, newBalanced(t, nil), podReq("", v1.ResourceList{}), nil, []*v1.Node{makeNode("node1", 4000, 8000, nil)}, false)
	if st != nil {
		t.Fatal(st)
	}
	if diff := cmp.Diff(scores("node1", 0), got); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
}

func TestBalancedResourceScore(t *testing.T) {
	tests := []struct {
		name                   string
		requested, allocatable []int64
		want                   int64
	}{
		{name: "two equal fractions", requested: []int64{1, 2}, allocatable: []int64{2, 4}, want: 100},
		{name: "two fractions: 1 - |f0-f1|/2", requested: []int64{3, 0}, allocatable: []int64{4, 1}, want: 62},
		{name: "fractions are capped at one", requested: []int64{8, 0}, allocatable: []int64{4, 1}, want: 50},
		{name: "resources without allocatable are skipped", requested: []int64{3, 5}, allocatable: []int64{0, 10}, want: 100},
		{name: "three fractions: population standard deviation", requested: []int64{0, 1, 2}, allocatable: []int64{2, 2, 2}, want: 59},
		{name: "nothing to compare", requested: []int64{0, 0}, allocatable: []int64{0, 0}, want: 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := balancedResourceScore(tc.requested, tc.allocatable); got != tc.want {
				t.Errorf("balancedResourceScore = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestBalancedAllocationScoreDoesNotAllocate(t *testing.T) {
	pl := newBalanced(t, nil)
	pod := podReq("", cpuAndMemory("1", "1Gi"))
	snap := schedcore.NewSnapshot(nil, []*v1.Node{nodeWith("n", "cpu", "4", "memory", "8Gi")})
	ni, _ := snap.Get("n")
	state := schedcore.NewCycleState()
	pl.PreScore(context.Background(), state, pod, snap.List())
	if allocs := testing.AllocsPerRun(100, func() { _, _ = pl.Score(context.Background(), state, pod, ni) }); allocs != 0 {
		t.Errorf("Score allocated %v times per run, want 0", allocs)
	}
}
