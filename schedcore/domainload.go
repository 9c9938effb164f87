package schedcore

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
