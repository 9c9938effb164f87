package schedcore_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// LabelSelectorAsSelector answers as metav1's, selector and error, for a
// selector object parsed before and changed in place since: the cache
// must see the change (its content check), not the address alone.
func TestLabelSelectorAsSelectorFollowsChangesInPlace(t *testing.T) {
	ls := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}
	check := func(step string) {
		t.Helper()
		want, wantErr := metav1.LabelSelectorAsSelector(ls)
		for range 2 { // the second call is answered from the cache
			got, err := schedcore.LabelSelectorAsSelector(ls)
			if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("%s: error %v, want %v", step, err, wantErr)
			}
			if err == nil && got.String() != want.String() {
				t.Fatalf("%s: selector %q, want %q", step, got, want)
			}
		}
	}
	check("parsed")
	ls.MatchLabels["app"] = "b"
	check("label value changed")
	ls.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"web"}}}
	check("expression added")
	ls.MatchExpressions[0].Values[0] = "db"
	check("expression value changed")
	ls.MatchExpressions[0].Key = "bad key!"
	check("key made invalid")
	ls.MatchExpressions[0].Key = "tier"
	check("key made valid again")
	if sel, _ := schedcore.LabelSelectorAsSelector(ls); !sel.Matches(labels.Set{"app": "b", "tier": "db"}) {
		t.Fatalf("selector %q does not match its own labels", sel)
	}
	if sel, err := schedcore.LabelSelectorAsSelector(nil); err != nil || !sel.Empty() && sel.String() != labels.Nothing().String() {
		t.Fatalf("nil selector: %v, %v", sel, err)
	}
}
