package schedcore_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestConfirmedPodKeepsTermsOnlyOfItsOwnAffinity: an assumed pod's parsed
// affinity terms serve its confirmation (the bound copy the informer
// delivers) only when that copy has the same namespace and the very same
// affinity object; a copy with another affinity, or in another namespace
// (whose terms default to it), is parsed anew. The cache's node must carry
// the confirmed pod's own terms.
func TestConfirmedPodKeepsTermsOnlyOfItsOwnAffinity(t *testing.T) {
	otherAffinity := schedtest.MakePod("x").PodAntiAffinity("zone", map[string]string{"app": "b"}).Obj().Spec.Affinity
	for _, tc := range []struct {
		name     string
		change   func(bound *v1.Pod)
		wantApp  string // the label value the confirmed pod's term selects
		wantNS   string // the namespace it covers
		wantKept bool   // the assumed pod's parsed terms serve
	}{
		{name: "the bound copy shares the affinity", change: func(*v1.Pod) {}, wantApp: "a", wantNS: "ns", wantKept: true},
		{name: "the bound copy has another affinity", change: func(b *v1.Pod) { b.Spec.Affinity = otherAffinity }, wantApp: "b", wantNS: "ns"},
		{name: "the bound copy is in another namespace", change: func(b *v1.Pod) { b.Namespace = "other" }, wantApp: "a", wantNS: "other"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := schedcore.NewCache(schedcore.DefaultFeatures)
			cache.AddNode(schedtest.MakeNode("n1").Label("zone", "z1").Obj())
			assumed := schedtest.MakePod("p").Namespace("ns").UID("u1").PodAntiAffinity("zone", map[string]string{"app": "a"}).Node("n1").Obj()
			pi := schedcore.NewPodInfo(assumed)
			if err := cache.AssumePodInfo(pi); err != nil {
				t.Fatal(err)
			}
			bound := *assumed
			tc.change(&bound)
			if err := cache.AddPod(&bound); err != nil {
				t.Fatal(err)
			}
			if cache.IsAssumedPod(&bound) {
				t.Fatal("the pod is still assumed after its confirmation")
			}
			snap := schedcore.NewEmptySnapshot()
			cache.UpdateSnapshot(snap)
			ni, err := snap.Get("n1")
			if err != nil {
				t.Fatal(err)
			}
			if len(ni.PodsWithRequiredAntiAffinity) != 1 {
				t.Fatalf("%d pods with required anti-affinity on n1, want the confirmed one", len(ni.PodsWithRequiredAntiAffinity))
			}
			got := ni.PodsWithRequiredAntiAffinity[0]
			if got.Pod != &bound {
				t.Errorf("n1 holds %p, want the confirmed copy %p", got.Pod, &bound)
			}
			terms := got.RequiredAntiAffinityTerms
			if len(terms) != 1 {
				t.Fatalf("%d required anti-affinity terms, want 1", len(terms))
			}
			for _, v := range []string{"a", "b"} {
				if want := v == tc.wantApp; terms[0].Selector.Matches(labels.Set{"app": v}) != want {
					t.Errorf("the confirmed pod's term selects app=%s: %v, want %v", v, !want, want)
				}
			}
			if !terms[0].Namespaces.Has(tc.wantNS) || terms[0].Namespaces.Len() != 1 {
				t.Errorf("the confirmed pod's term covers namespaces %v, want only %s", terms[0].Namespaces.UnsortedList(), tc.wantNS)
			}
			if kept := &terms[0] == &pi.RequiredAntiAffinityTerms[0]; kept != tc.wantKept {
				t.Errorf("the assumed pod's parsed terms kept: %v, want %v", kept, tc.wantKept)
			}
		})
	}
}
