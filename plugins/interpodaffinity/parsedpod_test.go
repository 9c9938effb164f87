package interpodaffinity

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// PreScore takes the terms PreFilter parsed in the cycle only for the pod
// they were parsed from: another pod's, or none, are parsed afresh.
func TestPreScoreReusesPreFilterTermsOfTheSamePod(t *testing.T) {
	pref := func(w int32, key string) *v1.Affinity {
		return &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{
			{Weight: w, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, TopologyKey: key}},
		}}}
	}
	podA := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "default"}, Spec: v1.PodSpec{Affinity: pref(5, "zone")}}
	podB := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"}, Spec: v1.PodSpec{Affinity: pref(9, "rack")}}
	parsedA := schedcore.NewPodInfo(podA)
	tests := []struct {
		name      string
		state     *preFilterState // nil: PreFilter wrote none
		pod       *v1.Pod
		wantReuse bool
	}{
		{"the pod PreFilter parsed", &preFilterState{podInfo: parsedA}, podA, true},
		{"another pod", &preFilterState{podInfo: parsedA}, podB, false},
		{"no PreFilter state", nil, podB, false},
		{"a state without terms", &preFilterState{}, podA, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := schedcore.NewCycleState()
			if tc.state != nil {
				cs.Write(preFilterStateKey, tc.state)
			}
			pi := parsedPod(cs, tc.pod)
			if got := pi == parsedA; got != tc.wantReuse {
				t.Fatalf("reused PreFilter's terms: %v, want %v", got, tc.wantReuse)
			}
			if pi.Pod != tc.pod {
				t.Fatalf("terms of pod %q, want %q", pi.Pod.Name, tc.pod.Name)
			}
			want := tc.pod.Spec.Affinity.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution[0]
			if len(pi.PreferredAffinityTerms) != 1 || pi.PreferredAffinityTerms[0].Weight != want.Weight || pi.PreferredAffinityTerms[0].TopologyKey != want.PodAffinityTerm.TopologyKey {
				t.Fatalf("preferred terms %+v, want weight %d on %s", pi.PreferredAffinityTerms, want.Weight, want.PodAffinityTerm.TopologyKey)
			}
		})
	}
}
