package schedcore

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestClaimsOwnedByIsTheScan: after adds, updates that change the owners,
// assumed versions, restores and deletes, ClaimsOwnedBy gives, for each
// owner, what a scan of Claims finds, in the same order. It fails when the
// check of the latest version's owners is dropped (a claim whose owner was
// replaced, or whose assumed version named another owner, stays listed).
func TestClaimsOwnedByIsTheScan(t *testing.T) {
	owned := func(name, rv string, owners ...types.UID) *resourceapi.ResourceClaim {
		c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID("uid-" + name), ResourceVersion: rv}}
		for _, o := range owners {
			c.OwnerReferences = append(c.OwnerReferences, metav1.OwnerReference{Name: string(o), UID: o})
		}
		return c
	}
	cases := []struct {
		name  string
		steps func(m *DRAManager)
	}{
		{name: "claims of one owner, listed by name", steps: func(m *DRAManager) {
			m.AddClaim(owned("b", "1", "pod-1"))
			m.AddClaim(owned("a", "1", "pod-1", "pod-2"))
			m.AddClaim(owned("c", "1", "pod-2"))
		}},
		{name: "an update that replaces the owner", steps: func(m *DRAManager) {
			m.AddClaim(owned("a", "1", "pod-1"))
			m.AddClaim(owned("a", "2", "pod-2"))
		}},
		{name: "an assumed version with another owner", steps: func(m *DRAManager) {
			m.AddClaim(owned("a", "1", "pod-1"))
			if err := m.AssumeClaim(owned("a", "2", "pod-2")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "restored", steps: func(m *DRAManager) {
			m.AddClaim(owned("a", "1", "pod-1"))
			if err := m.AssumeClaim(owned("a", "2", "pod-2")); err != nil {
				t.Fatal(err)
			}
			m.RestoreClaim("ns", "a")
		}},
		{name: "deleted and made again for another owner", steps: func(m *DRAManager) {
			m.AddClaim(owned("a", "1", "pod-1"))
			m.AddClaim(owned("b", "1", "pod-1"))
			m.DeleteClaim(owned("a", "1", "pod-1"))
			m.AddClaim(owned("b", "2", "pod-2"))
			m.DeleteClaim(owned("b", "2", "pod-2"))
			m.AddClaim(owned("b", "3", "pod-3"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := NewDRAManager()
			tc.steps(m)
			for _, o := range []types.UID{"pod-1", "pod-2", "pod-3"} {
				var want []string
				for _, c := range m.Claims() {
					for _, or := range c.OwnerReferences {
						if or.UID == o {
							want = append(want, c.Name+"@"+c.ResourceVersion)
							break
						}
					}
				}
				var got []string
				for _, c := range m.ClaimsOwnedBy(o) {
					got = append(got, c.Name+"@"+c.ResourceVersion)
				}
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("claims owned by %s (-scan +index):\n%s", o, d)
				}
			}
		})
	}
}
