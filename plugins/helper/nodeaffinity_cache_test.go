package helper

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

// The parsed nodeSelector, required and preferred terms follow their
// objects changed in place: each step's answers on a few nodes are
// component-helpers', errors included, though the objects keep their
// addresses (the caches must check content, not the address alone).
func TestNodeAffinityParsingFollowsChangesInPlace(t *testing.T) {
	nodes := []*v1.Node{{}, {}, {}, {}}
	nodes[0].Labels = map[string]string{"zone": "a", "disk": "ssd"}
	nodes[1].Labels = map[string]string{"zone": "b", "disk": "ssd"}
	nodes[2].Labels = map[string]string{"zone": "b", "disk": "hdd"}
	nodes[3].Labels = map[string]string{"zone": "c"}
	for i, n := range nodes {
		n.Name = fmt.Sprintf("n%d", i)
	}
	required := &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"a"}}}}}}
	preferred := []v1.PreferredSchedulingTerm{{Weight: 3, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "disk", Operator: v1.NodeSelectorOpIn, Values: []string{"ssd"}}}}}}
	pod := &v1.Pod{Spec: v1.PodSpec{
		NodeSelector: map[string]string{"disk": "ssd"},
		Affinity:     &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: required, PreferredDuringSchedulingIgnoredDuringExecution: preferred}},
	}}
	check := func(step string) {
		t.Helper()
		for range 2 { // the second round is answered from the caches
			want := nodeaffinity.GetRequiredNodeAffinity(pod)
			got := GetRequiredNodeAffinity(pod)
			wantPref, wantErr := nodeaffinity.NewPreferredSchedulingTerms(preferred)
			gotPref, err := NewPreferredSchedulingTerms(preferred)
			if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("%s: preferred error %v, want %v", step, err, wantErr)
			}
			for _, n := range nodes {
				w, werr := want.Match(n)
				g, gerr := got.Match(n)
				if w != g || (werr == nil) != (gerr == nil) {
					t.Fatalf("%s: node %s: Match %v, %v; want %v, %v", step, n.Name, g, gerr, w, werr)
				}
				if err == nil && gotPref.Score(n) != wantPref.Score(n) {
					t.Fatalf("%s: node %s: Score %d, want %d", step, n.Name, gotPref.Score(n), wantPref.Score(n))
				}
			}
		}
	}
	check("parsed")
	pod.Spec.NodeSelector["disk"] = "hdd"
	check("nodeSelector value changed")
	pod.Spec.NodeSelector["zone"] = "b"
	check("nodeSelector label added")
	delete(pod.Spec.NodeSelector, "disk")
	delete(pod.Spec.NodeSelector, "zone")
	check("nodeSelector emptied")
	required.NodeSelectorTerms[0].MatchExpressions[0].Values[0] = "b"
	check("required value changed")
	required.NodeSelectorTerms[0].MatchExpressions[0].Operator = v1.NodeSelectorOpNotIn
	check("required operator changed")
	required.NodeSelectorTerms = append(required.NodeSelectorTerms, v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}})
	check("required term added")
	required.NodeSelectorTerms[1].MatchExpressions[0].Key = "bad key!"
	check("required key made invalid")
	required.NodeSelectorTerms[1].MatchExpressions[0].Key = "zone"
	required.NodeSelectorTerms[1].MatchFields = []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n2"}}}
	check("required matchFields added")
	preferred[0].Weight = 7
	check("preferred weight changed")
	preferred[0].Preference.MatchExpressions[0].Values[0] = "hdd"
	check("preferred value changed")
	preferred[0].Preference.MatchExpressions[0].Key = "bad key!"
	check("preferred key made invalid")
	preferred[0].Preference.MatchExpressions[0].Key = "disk"
	check("preferred key made valid again")
}
