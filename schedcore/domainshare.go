package schedcore

// ShareKey makes key k's counts those of key sk of src, shared
// copy-on-write as Clone shares them (the first Add to either side copies
// them), and reports true: a plugin that keeps counts across cycles hands
// them to a cycle without copying. When src does not read the same label
// column as key k (another snapshot or label, or counts made before the
// snapshot's nodes changed: their domain ids are not key k's), it changes
// nothing and reports false.
func (d *DomainCounts) ShareKey(k int, src *DomainCounts, sk int) bool {
	key, from := &d.keys[k], &src.keys[sk]
	// A column belongs to one snapshot and label, and is made anew when
	// the snapshot's nodes change.
	if key.col != from.col {
		return false
	}
	if data := from.data; data != nil {
		data.refs.Add(1)
	}
	if old := key.data; old != nil {
		old.refs.Add(-1)
	}
	key.data = from.data
	return true
}

// AddKeyScaled adds, to key k, the counts of key sk of src times mult:
// each domain src holds a non-zero count in, as Add (AddValue for a value
// no node has) would one by one, so a plugin that keeps counts by domain
// across cycles sums them into a cycle's without a lookup per value. When
// src does not read the same label column as key k (see ShareKey), it
// adds nothing and reports false.
func (d *DomainCounts) AddKeyScaled(k int, src *DomainCounts, sk int, mult int64) bool {
	key, from := &d.keys[k], &src.keys[sk]
	if key.col != from.col {
		return false
	}
	data := from.data
	if data == nil {
		return true
	}
	// Ids from the column's size on are values no node has: d numbers
	// its own.
	nv := Domain(key.col.NumValues())
	add := func(dom Domain, c int64) {
		switch {
		case c == 0:
		case dom >= nv:
			d.AddValue(k, data.values[dom-nv], c*mult)
		default:
			d.Add(k, dom, c*mult)
		}
	}
	if data.sparse != nil {
		for dom, c := range data.sparse {
			add(dom, c)
		}
		return true
	}
	for id, c := range data.counts {
		add(Domain(id), c)
	}
	return true
}
