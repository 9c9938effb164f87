package schedcore

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// lookupLines describes what l gives for each of nodes and each name, and
// what the nodes' own ImageStates hold.
func lookupLines(l *ImageLookup, nodes []*NodeInfo) (got, want []string) {
	line := func(ni *NodeInfo, name string, s *ImageStateSummary) string {
		if s == nil {
			return fmt.Sprintf("%s %s -", ni.Name(), name)
		}
		return fmt.Sprintf("%s %s %d/%d", ni.Name(), name, s.Size, s.NumNodes)
	}
	for _, ni := range nodes {
		for k, name := range l.names {
			got = append(got, line(ni, name, l.Summary(ni, k)))
			want = append(want, line(ni, name, ni.ImageStates[name]))
		}
	}
	return got, want
}

// TestImageLookup checks that an ImageLookup gives each node its own
// summary, as node.ImageStates[name] does: the snapshot's listed nodes
// (read from the columns), clones of them, with no snapshot at all, a
// listed node whose images changed in place after the lookup was made,
// and another snapshot's nodes (whose slab is the registered one, at
// positions holding other images). Each case fails if the lookup trusted its
// columns where they do not hold the node's summary.
func TestImageLookup(t *testing.T) {
	names := []string{"img/a:1", "img/b:1", "img/missing:1"}
	c := NewCache(DefaultFeatures)
	for i := range 8 {
		var imgs []v1.ContainerImage
		if i%2 == 0 {
			imgs = append(imgs, v1.ContainerImage{Names: []string{names[0]}, SizeBytes: int64(100 + i)})
		}
		if i%3 == 0 {
			imgs = append(imgs, v1.ContainerImage{Names: []string{names[1]}, SizeBytes: 300})
		}
		c.AddNode(imagesNode(fmt.Sprintf("n%d", i), imgs...))
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	l := s.ImageLookup(names, 0)
	check := func(what string, l *ImageLookup, nodes []*NodeInfo) {
		t.Helper()
		got, want := lookupLines(l, nodes)
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: lookup gives %q, the node holds %q", what, got[i], want[i])
			}
		}
	}
	check("listed nodes", &l, s.List())
	for i, ni := range s.List() {
		if slabIndex(ni) != i {
			t.Fatalf("%s is not the slab member at %d: the columns were not read", ni.Name(), i)
		}
	}
	var clones []*NodeInfo
	for _, ni := range s.List() {
		clones = append(clones, ni.Clone())
	}
	check("clones", &l, clones)
	check("no snapshot", new((*Snapshot)(nil).ImageLookup(names, 0)), s.List())

	// Node n0's images change: UpdateSnapshot overwrites its NodeInfo in
	// place, after the lookup read the columns.
	c.UpdateNode(imagesNode("n0"), imagesNode("n0", v1.ContainerImage{Names: []string{names[1]}, SizeBytes: 900}))
	c.UpdateSnapshot(s)
	if ni := s.List()[0]; ni != &s.slab[0] || slabIndex(ni) != 0 || len(ni.ImageStates) != 1 {
		t.Fatalf("n0 was not updated in place with its new images (%d)", len(ni.ImageStates))
	}
	l2 := s.ImageLookup(names, 0)
	check("the old lookup after an image change", &l, s.List())
	check("a new lookup after an image change", &l2, s.List())

	// Another snapshot, registered last, lists other images at the same
	// positions.
	c2 := NewCache(DefaultFeatures)
	for i := range 8 {
		c2.AddNode(imagesNode(fmt.Sprintf("m%d", i), v1.ContainerImage{Names: []string{names[(i+1)%2]}, SizeBytes: 7}))
	}
	other := NewEmptySnapshot()
	c2.UpdateSnapshot(other)
	check("another snapshot's nodes", &l2, other.List())
	check("this snapshot's nodes, another slab registered", &l2, s.List())
}

// TestImageLookupBuildsColumnsOnlyWhenWorthIt: a lookup for a few of many
// nodes (sampling) reads a new name from the nodes' maps and builds no
// column (at 100,000 nodes, columns built for one pod each cost a sampled
// dry-run 40% of its CPU); a column kept already is used, and a lookup for
// every node builds one. Each gives the nodes' own summaries.
func TestImageLookupBuildsColumnsOnlyWhenWorthIt(t *testing.T) {
	names := []string{"img/a:1"}
	c := NewCache(DefaultFeatures)
	for i := range 10 {
		c.AddNode(imagesNode(fmt.Sprintf("n%d", i), v1.ContainerImage{Names: []string{names[0]}, SizeBytes: int64(100 + i)}))
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	tests := []struct {
		name       string
		scored     int
		wantColumn bool
	}{
		{"sampled: 2 of 10 nodes, no column yet", 2, false},
		{"half the nodes", 5, true},
		{"sampled, the column kept", 2, true},
	}
	for _, tt := range tests {
		l := s.ImageLookup(names, tt.scored)
		if got := l.cols[0].Len() > 0; got != tt.wantColumn {
			t.Errorf("%s: column used %v, want %v", tt.name, got, tt.wantColumn)
		}
		got, want := lookupLines(&l, s.List())
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: lookup gives %q, the node holds %q", tt.name, got[i], want[i])
			}
		}
	}
}
