package schedcore

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLoadedSparseCountsAreDense loads the same random totals into counts
// that Load makes sparse (a key of many values, few of them counted) and
// into counts kept dense, then applies the same random writes (nodes'
// domains, values no node has, clones written on either side), and
// compares everything they answer after each step: the sparse form's
// bits of the domains it holds must follow every write.
func TestLoadedSparseCountsAreDense(t *testing.T) {
	defer func(m, s int) { sparseMinValues, sparseShare = m, s }(sparseMinValues, sparseShare)
	var nodes []*v1.Node
	for i := 0; i < 300; i++ {
		nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%03d", i),
			Labels: map[string]string{"host": fmt.Sprintf("n%03d", i), "zone": fmt.Sprintf("z%d", i%3)}}})
	}
	snap := NewSnapshot(nil, nodes)
	list := snap.List()
	rng := rand.New(rand.NewSource(7))
	sparseLoads := 0
	for round := 0; round < 300; round++ {
		counts, members := make([]int64, 300), make([]int32, 300)
		for i := rng.Intn(40); i > 0; i-- {
			dom := rng.Intn(300)
			members[dom] = int32(rng.Intn(3))
			counts[dom] = int64(rng.Intn(3))
		}
		// Totals as long as the values seen so far: shorter than the key's.
		n := 1 + rng.Intn(300)
		sides := make([]*DomainCounts, 2)
		for side := range sides {
			sparseMinValues, sparseShare = 100, 10
			if side == 1 {
				sparseMinValues = 1 << 30
			}
			sides[side] = NewDomainCounts(snap, "host", "zone")
			sides[side].Load(0, counts[:n], members[:n])
		}
		if sides[0].keys[0].data.sparse != nil {
			sparseLoads++
		}
		var clones []*DomainCounts
		for w := rng.Intn(30); w >= 0; w-- {
			pairs := [][2]*DomainCounts{{sides[0], sides[1]}}
			if clones != nil {
				pairs = append(pairs, [2]*DomainCounts{clones[0], clones[1]})
			}
			for p, pair := range pairs {
				if got, want := describeCounts(pair[0]), describeCounts(pair[1]); !cmp.Equal(want, got) {
					t.Fatalf("round %d, copy %d: loaded sparse counts differ from dense (-dense +sparse):\n%s", round, p, cmp.Diff(want, got))
				}
			}
			k, delta := rng.Intn(2), int64(rng.Intn(4)-1)
			value := ""
			if rng.Intn(8) == 0 {
				value = fmt.Sprintf("other%d", rng.Intn(3))
			}
			ni := list[rng.Intn(len(list))]
			onClone := clones != nil && rng.Intn(2) == 0
			for side := range sides {
				sparseMinValues, sparseShare = 100, 10
				if side == 1 {
					sparseMinValues = 1 << 30
				}
				d := sides[side]
				if onClone {
					d = clones[side]
				}
				if value != "" {
					d.AddValue(k, value, delta)
				} else {
					d.AddNode(k, ni, delta)
				}
			}
			if clones == nil && rng.Intn(5) == 0 {
				clones = []*DomainCounts{sides[0].Clone(), sides[1].Clone()}
			}
		}
	}
	if sparseLoads < 100 {
		t.Fatalf("only %d of 300 loads were sparse", sparseLoads)
	}
}

// Counts kept apart from members (PodTopologySpread's totals of matching
// pods, over the nodes holding some) end before the members do: Load
// counts the domains past them 0, on a dense key and on a sparse one.
func TestLoadReadsMissingCountsAsZero(t *testing.T) {
	var nodes []*v1.Node
	for i := 0; i < 300; i++ {
		nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%03d", i),
			Labels: map[string]string{"host": fmt.Sprintf("n%03d", i), "zone": fmt.Sprintf("z%d", i%3)}}})
	}
	snap := NewSnapshot(nil, nodes)
	for _, tc := range []struct {
		name    string
		key     string
		counts  []int64
		members []int32
		want    map[Domain]int64
	}{
		{name: "dense key, counts end early", key: "zone", counts: []int64{4}, members: []int32{2, 1, 3}, want: map[Domain]int64{0: 4, 1: 0, 2: 0}},
		{name: "dense key, no counts", key: "zone", members: []int32{0, 1}, want: map[Domain]int64{1: 0}},
		{name: "sparse key, counts end early", key: "host", counts: []int64{0, 2}, members: []int32{0, 1, 0, 0, 1}, want: map[Domain]int64{1: 2, 4: 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := NewDomainCounts(snap, tc.key)
			d.Load(0, tc.counts, tc.members)
			got := map[Domain]int64{}
			d.ForEach(0, func(dom Domain, n int64) { got[dom] = n })
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("counted domains (-want +got):\n%s", diff)
			}
			if d.NumCounted(0) != len(tc.want) {
				t.Errorf("NumCounted %d, want %d", d.NumCounted(0), len(tc.want))
			}
		})
	}
}
