package schedcore

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func imagesNode(name string, images ...v1.ContainerImage) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Images: images}}
}

func snapshotImages(t *testing.T, s *Snapshot, node string) map[string]ImageStateSummary {
	t.Helper()
	ni, err := s.Get(node)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ImageStateSummary{}
	for k, v := range ni.ImageStates {
		out[k] = *v
	}
	return out
}

// TestCacheImageStates pins the image summaries to kube-scheduler's cache:
// the size is the one first reported for a name, NumNodes counts distinct
// nodes, and a node's summaries are taken when that node is copied into the
// snapshot.
func TestCacheImageStates(t *testing.T) {
	c := NewCache(DefaultFeatures)
	c.AddNode(imagesNode("a", v1.ContainerImage{Names: []string{"img:1", "img:1", "dup"}, SizeBytes: 100}, v1.ContainerImage{Names: []string{"dup"}, SizeBytes: 7}))
	c.AddNode(imagesNode("b", v1.ContainerImage{Names: []string{"img:1"}, SizeBytes: 200}))
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)

	want := map[string]ImageStateSummary{"img:1": {Size: 100, NumNodes: 2}, "dup": {Size: 100, NumNodes: 1}}
	if diff := cmp.Diff(want, snapshotImages(t, s, "a")); diff != "" {
		t.Errorf("node a: a name repeated on a node counts once and keeps the first size (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]ImageStateSummary{"img:1": {Size: 100, NumNodes: 2}}, snapshotImages(t, s, "b")); diff != "" {
		t.Errorf("node b: the size first recorded for a name wins (-want +got):\n%s", diff)
	}

	// A third node with the image: only the changed node is re-copied, so
	// node a still sees NumNodes 2 while c sees 3.
	c.AddNode(imagesNode("c", v1.ContainerImage{Names: []string{"img:1"}, SizeBytes: 300}))
	c.UpdateSnapshot(s)
	if got := snapshotImages(t, s, "a")["img:1"]; got != (ImageStateSummary{Size: 100, NumNodes: 2}) {
		t.Errorf("unchanged node a: img:1 = %+v, want the summary from its last copy", got)
	}
	if got := snapshotImages(t, s, "c")["img:1"]; got != (ImageStateSummary{Size: 100, NumNodes: 3}) {
		t.Errorf("new node c: img:1 = %+v, want {100 3}", got)
	}

	// A pod on node a re-copies it with the current counts.
	if err := c.AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "p"}, Spec: v1.PodSpec{NodeName: "a"}}); err != nil {
		t.Fatal(err)
	}
	c.UpdateSnapshot(s)
	if got := snapshotImages(t, s, "a")["img:1"]; got != (ImageStateSummary{Size: 100, NumNodes: 3}) {
		t.Errorf("re-copied node a: img:1 = %+v, want {100 3}", got)
	}

	// Once every node holding a name is gone, the next one brings its size.
	for _, n := range []string{"a", "b", "c"} {
		c.RemoveNode(imagesNode(n, v1.ContainerImage{Names: []string{"img:1", "dup"}}))
	}
	c.AddNode(imagesNode("d", v1.ContainerImage{Names: []string{"img:1"}, SizeBytes: 400}))
	c.UpdateSnapshot(s)
	if diff := cmp.Diff(map[string]ImageStateSummary{"img:1": {Size: 400, NumNodes: 1}}, snapshotImages(t, s, "d")); diff != "" {
		t.Errorf("node d (-want +got):\n%s", diff)
	}

	// Updating a node replaces its images.
	c.UpdateNode(nil, imagesNode("d", v1.ContainerImage{Names: []string{"other"}, SizeBytes: 5}))
	c.UpdateSnapshot(s)
	if diff := cmp.Diff(map[string]ImageStateSummary{"other": {Size: 5, NumNodes: 1}}, snapshotImages(t, s, "d")); diff != "" {
		t.Errorf("updated node d (-want +got):\n%s", diff)
	}
}

// Every node's summaries are keyed by one string per image name, the
// cache's (imageState.name), not by the node's own copy: ImageLocality's
// lookups then compare bytes the CPU has cached. Names are equal either
// way; this pins the sharing.
func TestNodeImageStatesShareNames(t *testing.T) {
	c := NewCache(DefaultFeatures)
	// Each node reports the names in strings of its own, as decoded.
	own := func(s string) string { return string([]byte(s)) }
	for _, n := range []string{"a", "b", "c"} {
		c.AddNode(imagesNode(n,
			v1.ContainerImage{Names: []string{own("registry.example.com/app:v1"), own("registry.example.com/app@sha256:1")}, SizeBytes: 100},
			v1.ContainerImage{Names: []string{own("registry.example.com/db:v2")}, SizeBytes: 200}))
	}
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	first := map[string]*byte{}
	for _, n := range []string{"a", "b", "c"} {
		ni, err := s.Get(n)
		if err != nil {
			t.Fatal(err)
		}
		if len(ni.ImageStates) != 3 {
			t.Fatalf("node %s: %d image names, want 3", n, len(ni.ImageStates))
		}
		for name := range ni.ImageStates {
			p := unsafe.StringData(name)
			if q, ok := first[name]; ok && q != p {
				t.Errorf("node %s: name %q is a string of its own, not the one other nodes' summaries share", n, name)
			}
			first[name] = p
		}
	}
}
