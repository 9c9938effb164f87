package dynamicresources

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestClaimChangeHints: a claim change queues the pods using the claim
// (by name in the spec, or a template's claim named in the status) when
// its status changed, and any pod when an allocation went; other pods
// skip it. It fails when the name check skips a pod that uses the claim,
// or a deallocation.
func TestClaimChangeHints(t *testing.T) {
	ctx := context.Background()
	dra := schedcore.NewDRAManager()
	byName := podWith("direct")
	byTemplate := podWith()
	byTemplate.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("t")}}
	byTemplate.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("pod-gpu-abc")}}
	direct, templated, other := claim("direct", exactly("gpu", 1)), claim("pod-gpu-abc", exactly("gpu", 1)), claim("other", exactly("gpu", 1))
	templated.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: byTemplate.Name, UID: byTemplate.UID, Controller: ptr.To(true)}}
	for _, c := range []*resourceapi.ResourceClaim{direct, templated, other} {
		dra.AddClaim(c)
	}
	p, err := New(ctx, nil, schedcore.NewHandle(nil, 1, schedcore.WithDRA(dra)))
	if err != nil {
		t.Fatal(err)
	}
	pl := p.(*DynamicResources)
	reserved := func(c *resourceapi.ResourceClaim) *resourceapi.ResourceClaim {
		c = c.DeepCopy()
		c.Status.ReservedFor = []resourceapi.ResourceClaimConsumerReference{{Resource: "pods", Name: "x", UID: "x"}}
		return c
	}
	allocated := func(c *resourceapi.ResourceClaim) *resourceapi.ResourceClaim {
		c = c.DeepCopy()
		c.Status.Allocation = &resourceapi.AllocationResult{}
		return c
	}
	cases := []struct {
		name     string
		pod      *v1.Pod
		old, new *resourceapi.ResourceClaim
		want     schedcore.QueueingHint
	}{
		{name: "the pod's claim by name", pod: byName, old: direct, new: reserved(direct), want: schedcore.Queue},
		{name: "the pod's template claim", pod: byTemplate, old: templated, new: reserved(templated), want: schedcore.Queue},
		{name: "another claim", pod: byName, old: other, new: reserved(other), want: schedcore.QueueSkip},
		{name: "another claim deallocated", pod: byName, old: allocated(other), new: other, want: schedcore.Queue},
	}
	for _, tc := range cases {
		got, err := pl.isSchedulableAfterClaimChange(logr.Discard(), tc.pod, tc.old, tc.new)
		if err != nil || got != tc.want {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}
