package engine

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
)

// TemplateClaimsIn makes the claims of a pod's templates that the cluster
// lacks, records them in a copy of the pod, and returns the cluster's
// claims with them added, leaving the cluster's slice and the pod alone.
func TestTemplateClaimsInAddsTheMissingClaims(t *testing.T) {
	existing := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"}}
	dra := snapshot.DRA{
		ResourceClaimTemplates: []*resourceapi.ResourceClaimTemplate{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gpu"}}},
		ResourceClaims:         []*resourceapi.ResourceClaim{existing},
	}
	for _, tc := range []struct {
		name       string
		claims     []v1.PodResourceClaim
		wantClaims int
	}{
		{"no claims", nil, 1},
		{"a template", []v1.PodResourceClaim{{Name: "c", ResourceClaimTemplateName: ptr.To("gpu")}}, 2},
		{"a missing template", []v1.PodResourceClaim{{Name: "c", ResourceClaimTemplateName: ptr.To("none")}}, 1},
		{"a claim by name", []v1.PodResourceClaim{{Name: "c", ResourceClaimName: ptr.To("other")}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: v1.PodSpec{ResourceClaims: tc.claims}}
			got, claims := TemplateClaimsIn(pod, dra)
			if len(claims) != tc.wantClaims || claims[0] != existing {
				t.Fatalf("%d claims (first %v), want %d starting with the cluster's", len(claims), claims[0].Name, tc.wantClaims)
			}
			if len(dra.ResourceClaims) != 1 || len(pod.Status.ResourceClaimStatuses) != 0 {
				t.Errorf("the cluster's claims (%d) or the pod (%v) changed", len(dra.ResourceClaims), pod.Status.ResourceClaimStatuses)
			}
			if made := tc.wantClaims - 1; made > 0 {
				st := got.Status.ResourceClaimStatuses
				if len(st) != 1 || st[0].Name != "c" || st[0].ResourceClaimName == nil || *st[0].ResourceClaimName != claims[1].Name {
					t.Errorf("the pod's claim statuses %v, want c -> %s", st, claims[1].Name)
				}
				if claims[1].Namespace != "ns" {
					t.Errorf("claim made in %q, want ns", claims[1].Namespace)
				}
			} else if got != pod {
				t.Errorf("nothing made, but the pod was copied")
			}
		})
	}
}
