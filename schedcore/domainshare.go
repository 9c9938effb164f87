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
