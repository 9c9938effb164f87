package helper

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
)

func TestRequiredNodeAffinityAgreesWithComponentHelpers(t *testing.T) {
	req := func(key string, op v1.NodeSelectorOperator, vals ...string) v1.NodeSelectorRequirement {
		return v1.NodeSelectorRequirement{Key: key, Operator: op, Values: vals}
	}
	affinity := func(terms ...v1.NodeSelectorTerm) *v1.Affinity {
		return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
	}
	pods := map[string]*v1.Pod{
		"nothing":            {},
		"node selector":      {Spec: v1.PodSpec{NodeSelector: map[string]string{"zone": "a"}}},
		"in":                 {Spec: v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{req("zone", v1.NodeSelectorOpIn, "a", "b")}})}},
		"terms are ORed":     {Spec: v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{req("zone", v1.NodeSelectorOpIn, "x")}}, v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{req("gpu", v1.NodeSelectorOpExists)}})}},
		"not in, gt, lt":     {Spec: v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{req("zone", v1.NodeSelectorOpNotIn, "b"), req("cores", v1.NodeSelectorOpGt, "4"), req("cores", v1.NodeSelectorOpLt, "64")}})}},
		"does not exist":     {Spec: v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{req("gpu", v1.NodeSelectorOpDoesNotExist)}})}},
		"only empty terms":   {Spec: v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{})}},
		"no terms":           {Spec: v1.PodSpec{Affinity: affinity()}},
		"match fields":       {Spec: v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{req("metadata.name", v1.NodeSelectorOpIn, "n1")}})}},
		"bad operator":       {Spec: v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{req("zone", "Near", "a")}})}},
		"bad value for gt":   {Spec: v1.PodSpec{Affinity: affinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{req("cores", v1.NodeSelectorOpGt, "many")}})}},
		"selector and terms": {Spec: v1.PodSpec{NodeSelector: map[string]string{"gpu": "true"}, Affinity: affinity(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{req("zone", v1.NodeSelectorOpIn, "a")}})}},
	}
	nodes := []*v1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a", "cores": "8"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n2", Labels: map[string]string{"zone": "b", "gpu": "true", "cores": "128"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n3", Labels: map[string]string{"zone": "a", "gpu": "true"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n4"}},
	}
	for name, pod := range pods {
		t.Run(name, func(t *testing.T) {
			ours := GetRequiredNodeAffinity(pod)
			theirs := nodeaffinity.GetRequiredNodeAffinity(pod)
			for _, n := range nodes {
				gm, ge := ours.Match(n)
				wm, we := theirs.Match(n)
				if gm != wm || (ge == nil) != (we == nil) || (ge != nil && ge.Error() != we.Error()) {
					t.Errorf("node %s: got (%v, %v), component-helpers says (%v, %v)", n.Name, gm, ge, wm, we)
				}
			}
		})
	}
}

func TestPreferredSchedulingTermsAgreeWithComponentHelpers(t *testing.T) {
	term := func(w int32, key string, op v1.NodeSelectorOperator, vals ...string) v1.PreferredSchedulingTerm {
		return v1.PreferredSchedulingTerm{Weight: w, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: vals}}}}
	}
	sets := map[string][]v1.PreferredSchedulingTerm{
		"weights add up":     {term(5, "zone", v1.NodeSelectorOpIn, "a"), term(3, "gpu", v1.NodeSelectorOpExists), term(0, "zone", v1.NodeSelectorOpIn, "a")},
		"empty term skipped": {{Weight: 4}},
		"match fields":       {{Weight: 2, Preference: v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"n1"}}}}}},
	}
	nodes := []*v1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "n1", Labels: map[string]string{"zone": "a"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n2", Labels: map[string]string{"zone": "a", "gpu": "true"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "n3"}},
	}
	for name, ts := range sets {
		t.Run(name, func(t *testing.T) {
			ours, err := NewPreferredSchedulingTerms(ts)
			if err != nil {
				t.Fatal(err)
			}
			theirs, _ := nodeaffinity.NewPreferredSchedulingTerms(ts)
			for _, n := range nodes {
				if g, w := ours.Score(n), theirs.Score(n); g != w {
					t.Errorf("node %s: score %d, component-helpers %d", n.Name, g, w)
				}
			}
		})
	}
	if _, err := NewPreferredSchedulingTerms([]v1.PreferredSchedulingTerm{term(1, "x", "Near", "a")}); err == nil {
		t.Errorf("a bad operator parsed")
	}
}
