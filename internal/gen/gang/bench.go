package gang

import (
	"fmt"
	"math/rand/v2"
	"sort"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchParams size a bench cluster (GenerateBench).
type BenchParams struct {
	// Nodes is the node count, 16 to 20000.
	Nodes int
	// Seed drives every random choice.
	Seed uint64
}

// Bench group policies, by position in the queue: every tenth group has a
// minCount of half its size, every twelfth is a basic group, the others
// are gangs of minCount = size.
const (
	benchHalfEvery  = 10
	benchBasicEvery = 12
	// benchPinnedEvery: every fiftieth group asks for one rack by a
	// nodeSelector with more whole-node members than a rack has nodes, so
	// it cannot fit whole (no member may bind).
	benchPinnedEvery = 50
)

// GenerateBench makes the gang workload of hack/bench (make bench, the
// "Gang" rows): a large cluster of the mixed shape without preemption,
// many groups. A third of the nodes are full, a third half full, the rest
// free (running MidPriority fillers); the pending groups, all MidPriority
// and in creation order, ask for 2, 4, 8 or 16 members of 1, 2, 4 or 8
// GPUs until about 60% of the free GPUs are asked for: gangs, gangs whose
// minCount is half their size, basic groups, and gangs pinned to one rack
// that cannot fit whole. Nothing preempts (one priority), so kube's only
// randomness, the tie between nodes of equal score, is what the
// references take away by scoring every node and taking the lowest name.
func GenerateBench(p BenchParams) (*Cluster, error) {
	if p.Nodes < 16 || p.Nodes > 20000 {
		return nil, fmt.Errorf("%w: nodes %d: want 16 to 20000", ErrParams, p.Nodes)
	}
	g := &gen{
		c:   &Cluster{Name: fmt.Sprintf("gang-bench/%dnodes-seed%d", p.Nodes, p.Seed)},
		rng: rand.New(rand.NewPCG(p.Seed, 0xbe9c)),
	}
	g.c.Namespaces = []*v1.Namespace{{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: Namespace}}}
	g.nodes(p.Nodes)
	order := g.rng.Perm(p.Nodes)
	for k, i := range order {
		switch k % 3 {
		case 0:
			g.fill(i, 0, MidPriority)
		case 1:
			g.fill(i, 4, MidPriority)
		}
	}
	sort.SliceStable(g.c.Running, func(a, b int) bool { return g.c.Running[a].Name < g.c.Running[b].Name })
	racks := (p.Nodes + NodesPerRack - 1) / NodesPerRack
	sizes := []int{2, 4, 8, 16}
	gpus := []int{1, 2, 4, 8}
	budget := g.freeGPUs() * 6 / 10
	for k := 0; budget > 0; k++ {
		gr := group{name: fmt.Sprintf("job-%d", k), size: sizes[g.rng.IntN(len(sizes))], gpus: gpus[g.rng.IntN(len(gpus))], priority: MidPriority}
		gr.minCount = int32(gr.size)
		var rack string
		switch {
		case k%benchPinnedEvery == benchPinnedEvery/2:
			gr.size, gr.gpus, gr.minCount = NodesPerRack+2, gpusPerNode, NodesPerRack+2
			rack = fmt.Sprintf("rack-%02d", g.rng.IntN(racks))
		case k%benchHalfEvery == 3:
			gr.minCount = int32(gr.size) / 2
		case k%benchBasicEvery == 5:
			gr.minCount = 0
		}
		budget -= gr.size * gr.gpus
		g.pending(gr)
		if rack != "" {
			for _, pod := range g.c.Pending[len(g.c.Pending)-gr.size:] {
				pod.Spec.NodeSelector = map[string]string{RackLabel: rack}
			}
		}
	}
	return g.c, nil
}
