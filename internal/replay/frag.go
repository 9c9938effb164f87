package replay

import (
	"sort"
)

// Shapes are a workload's typical pod shapes: its most common request
// vectors (over a list of resources), at most maxShapes, with how many
// pods have each. Fragmentation is measured against them, as the FGD paper
// measures it against the workload's distribution of task types.
type Shapes struct {
	vecs   [][]int64
	counts []int
	total  int
}

// NewShapes counts the distinct request vectors and keeps the maxShapes
// most common (ties: first seen first).
func NewShapes(requests [][]int64) *Shapes {
	index := map[string]int{}
	var vecs [][]int64
	var counts []int
	for _, v := range requests {
		k := shapeKey(v)
		j, ok := index[k]
		if !ok {
			j = len(vecs)
			index[k] = j
			vecs = append(vecs, v)
			counts = append(counts, 0)
		}
		counts[j]++
	}
	order := make([]int, len(vecs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return counts[order[a]] > counts[order[b]] })
	if len(order) > maxShapes {
		order = order[:maxShapes]
	}
	s := &Shapes{}
	for _, j := range order {
		s.vecs = append(s.vecs, vecs[j])
		s.counts = append(s.counts, counts[j])
		s.total += counts[j]
	}
	return s
}

func shapeKey(v []int64) string {
	b := make([]byte, 0, 8*len(v))
	for _, x := range v {
		for s := 0; s < 64; s += 8 {
			b = append(b, byte(x>>s))
		}
	}
	return string(b)
}

// Len is the number of shapes kept.
func (s *Shapes) Len() int { return len(s.vecs) }

// Fragmentation writes into out, for each resource, the part of a node's
// free capacity that the typical pods cannot use: free[r] times the share
// of pods whose shape does not fit the node (any resource short, or no
// room for one more pod when slot is false) or asks for none of r (the
// FGD paper's measure, over whole resources). unusable is scratch space
// of the same length.
func (s *Shapes) Fragmentation(free []int64, slot bool, unusable []int, out []float64) {
	for k := range out {
		out[k], unusable[k] = 0, 0
	}
	if s.total == 0 {
		return
	}
	for i, shape := range s.vecs {
		fits := slot
		for k := 0; fits && k < len(free); k++ {
			fits = shape[k] <= free[k]
		}
		for k := range unusable {
			if !fits || shape[k] == 0 {
				unusable[k] += s.counts[i]
			}
		}
	}
	for k := range out {
		out[k] = float64(max(free[k], 0)) * float64(unusable[k]) / float64(s.total)
	}
}
