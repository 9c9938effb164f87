package schedcore

import (
	"fmt"
	"math/rand"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// imageColumnWant is what an image column must give at each list
// position: the node's own summary of the name, as its ImageStates holds it.
func imageColumnWant(s *Snapshot, name string) []string {
	var out []string
	for _, ni := range s.List() {
		if sum := ni.ImageStates[name]; sum != nil {
			out = append(out, fmt.Sprintf("%s %d/%d", ni.Name(), sum.Size, sum.NumNodes))
		} else {
			out = append(out, ni.Name()+" -")
		}
	}
	return out
}

func imageColumnGot(s *Snapshot, col ImageColumn) []string {
	var out []string
	for i, ni := range s.List() {
		if id := col.ID(i); id != 0 {
			sum := col.Summary(id)
			out = append(out, fmt.Sprintf("%s %d/%d", ni.Name(), sum.Size, sum.NumNodes))
		} else {
			out = append(out, ni.Name()+" -")
		}
	}
	return out
}

// TestImageColumnFollowsSnapshot checks that an image column, kept across
// UpdateSnapshot calls and synced through the snapshot's log of image
// changes, gives at every position the summary the listed node's
// ImageStates holds, whatever changed in between: pods placed (the node
// copied again with the same summaries), a node's images changed, nodes
// added and removed (the list rebuilt), summaries re-taken. Columns asked
// for rarely fall behind the log by many changes. A column handed out
// earlier keeps what it gave (columns are immutable once returned).
func TestImageColumnFollowsSnapshot(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	names := []string{"img/a:1", "img/b:1", "img/c:2"}
	node := func(i int) *v1.Node {
		n := imagesNode(fmt.Sprintf("n%d", i))
		for k, name := range names {
			if rng.Intn(2) == 0 {
				n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: []string{name}, SizeBytes: int64(100*(k+1) + rng.Intn(3))})
			}
		}
		return n
	}
	c := NewCache(DefaultFeatures)
	nodes := 8
	for i := range nodes {
		c.AddNode(node(i))
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	type held struct {
		col  ImageColumn
		vals []string
	}
	var kept []held
	for step := range 400 {
		switch r := rng.Intn(10); {
		case r < 6:
			name := fmt.Sprint("p", step)
			_ = c.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(name)}, Spec: v1.PodSpec{NodeName: fmt.Sprintf("n%d", rng.Intn(nodes))}})
		case r < 8:
			c.AddNode(node(rng.Intn(nodes)))
		case r < 9:
			c.RefreshImageSummaries()
		default:
			if rng.Intn(2) == 0 {
				c.AddNode(node(nodes))
				nodes++
			} else {
				c.RemoveNode(imagesNode(fmt.Sprintf("n%d", rng.Intn(nodes))))
			}
		}
		c.UpdateSnapshot(s)
		// The first name is asked for every step, the others now and then.
		for k, name := range names {
			if k > 0 && rng.Intn(4*k) != 0 {
				continue
			}
			col := s.ImageColumn(name)
			want := imageColumnWant(s, name)
			if got := imageColumnGot(s, col); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("step %d, %s: column gives\n%v\nwant\n%v", step, name, got, want)
			}
			if rng.Intn(8) == 0 {
				kept = append(kept, held{col, columnValues(col)})
			}
		}
	}
	// A column left behind by more image changes than the log holds
	// reads every node again.
	// The first change (the first node gains an image) is then
	// overwritten in the log by the changes of the second node.
	const late = "img/late:1"
	col := s.ImageColumn(late)
	first, other := s.List()[0].Name(), s.List()[1].Name()
	c.AddNode(imagesNode(first, v1.ContainerImage{Names: []string{late}, SizeBytes: 12345}))
	c.UpdateSnapshot(s)
	for range changeLogSize + 10 {
		c.AddNode(imagesNode(other))
		c.UpdateSnapshot(s)
	}
	if got, want := imageColumnGot(s, s.ImageColumn(late)), imageColumnWant(s, late); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after %d changes: column gives\n%v\nwant\n%v", changeLogSize+10, got, want)
	}
	kept = append(kept, held{col, columnValues(col)})
	for i, h := range kept {
		if got := columnValues(h.col); fmt.Sprint(got) != fmt.Sprint(h.vals) {
			t.Fatalf("column %d changed after it was handed out:\n%v\nwas\n%v", i, got, h.vals)
		}
	}
}

// columnValues lists the summaries a column gives by position.
func columnValues(col ImageColumn) []string {
	out := make([]string, col.Len())
	for i := range out {
		out[i] = valueOf(col, i)
	}
	return out
}

func valueOf(col ImageColumn, i int) string {
	if id := col.ID(i); id != 0 {
		sum := col.Summary(id)
		return fmt.Sprintf("%d/%d", sum.Size, sum.NumNodes)
	}
	return "-"
}
