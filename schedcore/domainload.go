package schedcore

import "context"

// Load sets key k's counts to totals a caller keeps across cycles, by
// domain: counts[dom] in each domain with members[dom] > 0 (nodes that
// count there), which is counted even with 0; the other domains are not
// counted. Domains are the snapshot's (NodeDomains of its nodes), so the
// slices are no longer than its values; counts may be shorter than
// members (totals of counts alone, kept apart from those of members: the
// missing domains count 0). It replaces what Add counted.
//
// A key of many values of which few are counted (the hostname, where a
// few nodes hold matching pods) is loaded sparse, as Add would leave it:
// no two arrays as long as the values per cycle.
func (d *DomainCounts) Load(k int, counts []int64, members []int32) {
	key := &d.keys[k]
	n := key.col.NumValues()
	data := &domainData{}
	data.refs.Store(1)
	if n >= sparseMinValues {
		counted := 0
		for _, m := range members {
			if m > 0 {
				counted++
			}
		}
		if counted <= n/sparseShare {
			data.sparse, data.size = make(map[Domain]int64, counted), n
		}
	}
	if data.sparse != nil {
		data.present = make([]uint64, (n+63)/64)
	} else {
		data.counts, data.counted = make([]int64, n), make([]bool, n)
	}
	for dom, m := range members {
		if m <= 0 {
			continue
		}
		data.numCounted++
		var c int64
		if dom < len(counts) {
			c = counts[dom]
		}
		if c != 0 {
			data.nonZero++
		}
		if data.sparse != nil {
			data.sparse[Domain(dom)] = c
			data.mark(Domain(dom))
			continue
		}
		data.counted[dom] = true
		data.counts[dom] = c
	}
	if old := key.data; old != nil {
		old.refs.Add(-1)
	}
	key.data = data
}

// absent reports whether sparse counts surely lack domain dom (present
// says so), without a map lookup: most nodes' domains of a key loaded
// sparse are not counted.
func (data *domainData) absent(dom Domain) bool {
	return int(dom) < len(data.present)*64 && data.present[dom/64]&(1<<(dom%64)) == 0
}

// mark notes that sparse counts hold domain dom (when present covers it).
func (data *domainData) mark(dom Domain) {
	if int(dom) < len(data.present)*64 {
		data.present[dom/64] |= 1 << (dom % 64)
	}
}

// keyValues is the number of values of key k's label (0 when none).
func (d *DomainCounts) keyValues(k int) int {
	if col := d.keys[k].col; col != nil {
		return col.NumValues()
	}
	return 0
}

// CountNodes fills, in parallel, each node's row (its count per key, -1
// where it does not count) with row, which gets the node's domains
// (NodeDomains) and whether it has every key, then adds the rows into d
// (AddAt: a node without a key is in its domain "").
func (d *DomainCounts) CountNodes(ctx context.Context, par Parallelizer, nodes []*NodeInfo, row func(ni *NodeInfo, doms []Domain, all bool, row []int32)) error {
	nc := d.NumKeys()
	rows := make([]int32, len(nodes)*nc)
	domBuf := make([]Domain, len(nodes)*nc)
	// A node's row is little work: a few nodes go in order.
	par.UntilAtLeast(ctx, len(nodes), minParallelNodes, func(n int) {
		r := rows[n*nc : (n+1)*nc]
		for i := range r {
			r[i] = -1
		}
		if ni := nodes[n]; ni.Node() != nil {
			doms, all := d.NodeDomains(ni, domBuf[n*nc:n*nc:(n+1)*nc])
			row(ni, doms, all, r)
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	for n, ni := range nodes {
		for i, cnt := range rows[n*nc : (n+1)*nc] {
			if cnt >= 0 {
				d.AddAt(i, ni, domBuf[n*nc+i], int64(cnt))
			}
		}
	}
	return nil
}

// minParallelNodes is the fewest nodes CountNodes counts in parallel.
const minParallelNodes = 128
