package gang

import (
	"testing"

	"github.com/kubectl-sched/kubectl-sched/internal/gen/v1list"
)

// TestGenerateBench checks the bench shape's promises: deterministic by
// seed, GPUs never over committed, a few thousand pending pods at 5000
// nodes in groups of every policy, and pinned gangs larger than a rack.
func TestGenerateBench(t *testing.T) {
	small, err := GenerateBench(BenchParams{Nodes: 500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	again, _ := GenerateBench(BenchParams{Nodes: 500, Seed: 1})
	ya, err := v1list.Marshal("json", small.Objects()...)
	if err != nil {
		t.Fatal(err)
	}
	yb, _ := v1list.Marshal("json", again.Objects()...)
	if string(ya) != string(yb) {
		t.Error("two generations differ")
	}
	other, _ := GenerateBench(BenchParams{Nodes: 500, Seed: 2})
	yc, _ := v1list.Marshal("json", other.Objects()...)
	if string(ya) == string(yc) {
		t.Error("another seed gives the same cluster")
	}
	c, err := GenerateBench(BenchParams{Nodes: 5000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]int64{}
	for _, pod := range c.Running {
		q := pod.Spec.Containers[0].Resources.Requests[GPU]
		used[pod.Spec.NodeName] += q.Value()
	}
	for n, u := range used {
		if u > gpusPerNode {
			t.Errorf("node %s: %d GPUs used", n, u)
		}
	}
	if n := len(c.Pending); n < 2000 || n > 6000 {
		t.Errorf("%d pending pods, want a few thousand", n)
	}
	var gangs, half, basic, pinned int
	size := map[string]int32{}
	for _, pod := range c.Pending {
		size[*pod.Spec.SchedulingGroup.PodGroupName]++
	}
	for _, pg := range c.PodGroups {
		switch gang := pg.Spec.SchedulingPolicy.Gang; {
		case gang == nil:
			basic++
		case gang.MinCount < size[pg.Name]:
			half++
		default:
			gangs++
		}
	}
	for _, pod := range c.Pending {
		if _, ok := pod.Spec.NodeSelector[RackLabel]; ok && pod.Name[len(pod.Name)-2:] == "-0" {
			pinned++
			if s := size[*pod.Spec.SchedulingGroup.PodGroupName]; s <= NodesPerRack {
				t.Errorf("%s: pinned gang of %d members fits a rack", pod.Name, s)
			}
		}
	}
	if gangs == 0 || half == 0 || basic == 0 || pinned == 0 {
		t.Errorf("groups: %d gangs, %d with minCount below size, %d basic, %d pinned; want some of each", gangs, half, basic, pinned)
	}
	t.Logf("%d nodes, %d running, %d pending in %d groups (%d gangs, %d minCount<size, %d basic, %d pinned)", len(c.Nodes), len(c.Running), len(c.Pending), len(c.PodGroups), gangs, half, basic, pinned)
}
