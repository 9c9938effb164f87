package schedcore

import (
	"slices"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

// PrepareLabelIndex brings the snapshot's pod index by label pair up to
// date and makes it hold label keys keys (those selectors with an
// equality requirement will ask for), and builds the label columns of
// topology keys topo: what a first cycle would build for them
// (PreparePlugin).
func (s *Snapshot) PrepareLabelIndex(keys, topo []string) {
	x := &s.podIndex
	x.mu.Lock()
	if x.byKey == nil {
		x.byKey = map[string]*posting{}
	}
	x.sync(s)
	for _, k := range keys {
		x.want(k)
	}
	x.mu.Unlock()
	for _, k := range topo {
		s.column(k)
	}
}

// IndexedKeys appends to keys the label keys of sel's single-valued
// equality requirements, the ones the pod index is asked for
// (PodLabelIndex.Candidates), that keys lacks.
func IndexedKeys(keys []string, sel labels.Selector) []string {
	if sel == nil {
		return keys
	}
	reqs, selectable := sel.Requirements()
	if !selectable {
		return keys
	}
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In:
		default:
			continue
		}
		if r.Values().Len() != 1 {
			continue
		}
		if !slices.Contains(keys, r.Key()) {
			keys = append(keys, r.Key())
		}
	}
	return keys
}
