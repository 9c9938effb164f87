package schedcore

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestNodeInfoMayHoldImage pins the image filter: never false for a name
// the node's ImageStates hold (in the snapshot, in a clone), true for any
// name once ImageStates is not the map the filter was made from, and false
// for most names the node does not hold (it is a filter, not a yes).
func TestNodeInfoMayHoldImage(t *testing.T) {
	c := NewCache(DefaultFeatures)
	c.AddNode(imagesNode("a", v1.ContainerImage{Names: []string{"reg/app-1:v1", "reg/app-1@sha256:01"}, SizeBytes: 100},
		v1.ContainerImage{Names: []string{"reg/app-2:latest"}, SizeBytes: 200}))
	c.AddNode(imagesNode("b"))
	s := NewEmptySnapshot()
	c.UpdateSnapshot(s)
	a, _ := s.Get("a")
	b, _ := s.Get("b")
	held := []string{"reg/app-1:v1", "reg/app-1@sha256:01", "reg/app-2:latest"}
	for _, ni := range []*NodeInfo{a, a.Clone()} {
		for _, name := range held {
			if !ni.MayHoldImage(ImageNameBits(name)) {
				t.Errorf("node a: MayHoldImage(%q) = false for a name it holds", name)
			}
			if !ni.MayHoldImage(ImageNameBitsOf([]byte(name))) {
				t.Errorf("node a: MayHoldImage(ImageNameBitsOf(%q)) = false for a name it holds", name)
			}
		}
	}
	passed := 0
	for i := range 200 {
		name := fmt.Sprintf("reg/other-%d:v1", i)
		if a.MayHoldImage(ImageNameBits(name)) {
			passed++
		}
		if b.MayHoldImage(ImageNameBits(name)) {
			t.Errorf("node b, no images: MayHoldImage(%q) = true", name)
		}
	}
	// Three names set at most 6 of 64 bits: about 1% of the others pass.
	if passed > 50 {
		t.Errorf("node a: %d of 200 names it does not hold passed the filter", passed)
	}
	byHand := a.Clone()
	byHand.ImageStates = map[string]*ImageStateSummary{"reg/other-0:v1": {Size: 1, NumNodes: 1}}
	if !byHand.MayHoldImage(ImageNameBits("reg/other-0:v1")) || !byHand.MayHoldImage(ImageNameBits("reg/other-1:v1")) {
		t.Error("ImageStates set by hand: MayHoldImage must answer true")
	}
	if !(&NodeInfo{}).MayHoldImage(ImageNameBits("x")) {
		t.Error("a NodeInfo without a filter: MayHoldImage must answer true")
	}
}
