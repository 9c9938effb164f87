package schedcore

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSparseDomainCountsAreDense applies the same random writes (nodes'
// domains, values no node has, clones written on either side) to counts
// kept sparse and to counts kept dense, and compares everything they
// answer: a key of many values (the hostname) starts sparse and turns
// dense as it fills.
func TestSparseDomainCountsAreDense(t *testing.T) {
	defer func(m, s int) { sparseMinValues, sparseShare = m, s }(sparseMinValues, sparseShare)
	var nodes []*v1.Node
	for i := 0; i < 300; i++ {
		nodes = append(nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%03d", i),
			Labels: map[string]string{"host": fmt.Sprintf("n%03d", i), "zone": fmt.Sprintf("z%d", i%3)}}})
	}
	snap := NewSnapshot(nil, nodes)
	list := snap.List()
	rng := rand.New(rand.NewSource(11))
	for round := 0; round < 300; round++ {
		// Sparse from 100 values (the 300 hosts, not the 3 zones), dense
		// past a tenth of them; or (dense side) never sparse.
		sparse, dense := NewDomainCounts(snap, "host", "zone"), NewDomainCounts(snap, "host", "zone")
		var sparseClone, denseClone *DomainCounts
		writes := rng.Intn(60)
		for w := 0; w < writes; w++ {
			k, delta := rng.Intn(2), int64(rng.Intn(4)-1)
			value := ""
			if rng.Intn(8) == 0 {
				value = fmt.Sprintf("other%d", rng.Intn(3))
			}
			ni := list[rng.Intn(len(list))]
			onClone := sparseClone != nil && rng.Intn(2) == 0
			for side, d := range []*DomainCounts{sparse, dense} {
				sparseMinValues, sparseShare = 100, 10
				if side == 1 {
					sparseMinValues = 1 << 30
				}
				if onClone {
					d = []*DomainCounts{sparseClone, denseClone}[side]
				}
				if value != "" {
					d.AddValue(k, value, delta)
				} else {
					d.AddNode(k, ni, delta)
				}
			}
			if sparseClone == nil && rng.Intn(10) == 0 {
				sparseClone, denseClone = sparse.Clone(), dense.Clone()
			}
		}
		pairs := [][2]*DomainCounts{{sparse, dense}}
		if sparseClone != nil {
			pairs = append(pairs, [2]*DomainCounts{sparseClone, denseClone})
		}
		for p, pair := range pairs {
			if got, want := describeCounts(pair[0]), describeCounts(pair[1]); !cmp.Equal(want, got) {
				t.Fatalf("round %d, copy %d: sparse counts differ from dense (-dense +sparse):\n%s", round, p, cmp.Diff(want, got))
			}
		}
	}
}

// describeCounts is everything d answers about its keys' domains.
func describeCounts(d *DomainCounts) []string {
	var out []string
	out = append(out, fmt.Sprintf("nonZero %d", d.NonZero()))
	for k := 0; k < d.NumKeys(); k++ {
		out = append(out, fmt.Sprintf("key %d: counted %d complete %v", k, d.NumCounted(k), d.Complete(k)))
		d.ForEach(k, func(dom Domain, n int64) { out = append(out, fmt.Sprintf("  each %d %s %d", dom, d.Value(k, dom), n)) })
		for dom := Domain(-1); dom < 310; dom++ {
			if d.At(k, dom) != 0 || d.Counted(k, dom) {
				out = append(out, fmt.Sprintf("  at %d %d %v", dom, d.At(k, dom), d.Counted(k, dom)))
			}
		}
		for i := 0; i < 3; i++ {
			v := fmt.Sprintf("other%d", i)
			out = append(out, fmt.Sprintf("  value %s: %d", v, d.ValueDomain(k, v)))
		}
	}
	return out
}
