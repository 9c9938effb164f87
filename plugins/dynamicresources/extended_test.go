package dynamicresources

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestExtendedVariantsByNode: the special claim's node variants are shared
// by the nodes whose device plugins leave the same resources to DRA, and
// only by them: a node providing example.com/a itself asks DRA for b only,
// one providing neither for both, and a class added in the cycle makes the
// variant anew. It fails when the variants are shared regardless of the
// backed resources or of the objects revision, or when the claims to
// allocate are made once for every variant.
func TestExtendedVariantsByNode(t *testing.T) {
	ctx := context.Background()
	dra := schedcore.NewDRAManager()
	class := func(name, res string) *resourceapi.DeviceClass {
		return &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: resourceapi.DeviceClassSpec{ExtendedResourceName: ptr.To(res)}}
	}
	dra.AddClass(class("a", "example.com/a"))
	dra.AddClass(class("b", "example.com/b"))
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ml", UID: "pod-uid"}, Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c",
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{"example.com/a": resource.MustParse("1"), "example.com/b": resource.MustParse("1")},
			Limits: v1.ResourceList{"example.com/a": resource.MustParse("1"), "example.com/b": resource.MustParse("1")}}}}}}
	pl, state := preFiltered(ctx, t, dra, pod)
	s, err := getStateData(state)
	if err != nil {
		t.Fatal(err)
	}
	node := func(name string, provides ...v1.ResourceName) *schedcore.NodeInfo {
		n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{}}}
		for _, r := range provides {
			n.Status.Allocatable[r] = resource.MustParse("4")
		}
		ni := schedcore.NewNodeInfo()
		ni.SetNode(n)
		return ni
	}
	classes := func(ni *schedcore.NodeInfo) (*resourceapi.ResourceClaim, string) {
		c, _, st := pl.filterExtendedResources(s, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("%s: %v", ni.Name(), st)
		}
		var out []string
		for _, r := range c.Spec.Devices.Requests {
			out = append(out, r.Exactly.DeviceClassName)
		}
		return c, fmt.Sprint(out)
	}
	withA1, got := classes(node("with-a-1", "example.com/a"))
	if got != "[b]" {
		t.Errorf("a node providing a asks DRA for %s, want [b]", got)
	}
	neither, got := classes(node("neither"))
	if got != "[a b]" {
		t.Errorf("a node providing neither asks DRA for %s, want [a b]", got)
	}
	// The claims to allocate: the store's special claim, or the node's
	// variant in its place.
	for _, c := range []*resourceapi.ResourceClaim{nil, withA1, neither, nil, withA1} {
		want := c
		if c == nil {
			want = s.claims.extendedResourceClaim()
		}
		if got := s.claimsToAllocate(c); len(got) != 1 || got[0] != want {
			t.Errorf("claims to allocate with variant %p: %v, want [%p]", c, got, want)
		}
	}
	if withA2, _ := classes(node("with-a-2", "example.com/a")); withA2 != withA1 {
		t.Errorf("two nodes providing a: two variants")
	}
	dra.AddClass(class("c", "example.com/c"))
	if withA3, got := classes(node("with-a-3", "example.com/a")); withA3 == withA1 || got != "[b]" {
		t.Errorf("after a class was added: the same variant (%v), asking for %s", withA3 == withA1, got)
	}
}
