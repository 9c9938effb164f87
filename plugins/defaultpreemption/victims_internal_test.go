package defaultpreemption

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestMoreImportantVictim transcribes kube v1.37's TestMoreImportantVictim
// (framework/preemption/util_test.go), CompositePodGroup cases left out.
func TestMoreImportantVictim(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 10, 0, time.UTC)
	before := now.Add(-time.Second)
	pods := func(n int) []*schedcore.PodInfo {
		out := make([]*schedcore.PodInfo, n)
		for i := range out {
			out[i] = schedcore.NewPodInfo(schedtest.MakePod("p").Obj())
		}
		return out
	}
	pod, group := schedcore.PodKeyType, schedcore.PodGroupKeyType
	tests := []struct {
		name     string
		vi1, vi2 *Victim
		want     bool
	}{
		{"vi1 has higher priority", &Victim{Priority: 20, Type: pod}, &Victim{Priority: 10, Type: pod}, true},
		{"vi2 has higher priority", &Victim{Priority: 10, Type: pod}, &Victim{Priority: 20, Type: pod}, false},
		{"vi1 is PG, vi2 is Pod, same priority", &Victim{Priority: 10, Pods: pods(1), Type: group}, &Victim{Priority: 10, Pods: pods(1), Type: pod}, true},
		{"vi1 is Pod, vi2 is PG, same priority", &Victim{Priority: 10, Pods: pods(1), Type: pod}, &Victim{Priority: 10, Pods: pods(1), Type: group}, false},
		{"both Pods, vi1 older", &Victim{Priority: 10, Pods: pods(1), EarliestStart: before, Type: pod}, &Victim{Priority: 10, Pods: pods(1), EarliestStart: now, Type: pod}, true},
		{"both Pods, vi2 older", &Victim{Priority: 10, Pods: pods(1), EarliestStart: now, Type: pod}, &Victim{Priority: 10, Pods: pods(1), EarliestStart: before, Type: pod}, false},
		{"both PGs, vi1 larger", &Victim{Priority: 10, Pods: pods(2), Type: group}, &Victim{Priority: 10, Pods: pods(1), Type: group}, true},
		{"both PGs, vi2 larger", &Victim{Priority: 10, Pods: pods(1), Type: group}, &Victim{Priority: 10, Pods: pods(2), Type: group}, false},
		{"both PGs, same size, vi1 older", &Victim{Priority: 10, Pods: pods(2), EarliestStart: before, Type: group}, &Victim{Priority: 10, Pods: pods(2), EarliestStart: now, Type: group}, true},
		{"both PGs, same size, vi2 older", &Victim{Priority: 10, Pods: pods(2), EarliestStart: now, Type: group}, &Victim{Priority: 10, Pods: pods(2), EarliestStart: before, Type: group}, false},
		{"a smaller PG still outranks a pod of the same priority", &Victim{Priority: 10, Pods: pods(1), Type: group}, &Victim{Priority: 10, Pods: pods(3), Type: pod}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := moreImportantVictim(tt.vi1, tt.vi2); got != tt.want {
				t.Errorf("moreImportantVictim = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFilterVictimsWithPDBViolation: units spend each PDB's allowance pod
// by pod in unit order; a unit with any violating pod violates, with the
// count of its violating pods (kube's FilterVictimsWithPDBViolation).
func TestFilterVictimsWithPDBViolation(t *testing.T) {
	labeled := func(name string) *schedcore.PodInfo {
		return schedcore.NewPodInfo(schedtest.MakePod(name).Label("app", "foo").Obj())
	}
	plain := schedcore.NewPodInfo(schedtest.MakePod("plain").Obj())
	pdb := func(allowed int32) *policyv1.PodDisruptionBudget {
		return &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "pdb"},
			Spec:   policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "foo"}}},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: allowed}}
	}
	group := &Victim{Pods: []*schedcore.PodInfo{labeled("g1"), labeled("g2"), labeled("g3")}, Type: schedcore.PodGroupKeyType}
	single := &Victim{Pods: []*schedcore.PodInfo{labeled("s1")}, Type: schedcore.PodKeyType}
	other := &Victim{Pods: []*schedcore.PodInfo{plain}, Type: schedcore.PodKeyType}
	tests := []struct {
		name             string
		allowed          int32
		wantViolating    map[string]int // first pod's name → violating pods
		wantNonViolating []string
	}{
		{"nothing allowed: every labeled pod violates", 0, map[string]int{"g1": 3, "s1": 1}, []string{"plain"}},
		{"two allowed: the group's third pod violates, so does the single", 2, map[string]int{"g1": 1, "s1": 1}, []string{"plain"}},
		{"four allowed: none", 4, map[string]int{}, []string{"g1", "s1", "plain"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			violating, nonViolating := filterVictimsWithPDBViolation([]*Victim{group, single, other}, []*policyv1.PodDisruptionBudget{pdb(tt.allowed)})
			got := map[string]int{}
			for _, v := range violating {
				got[v.victim.Pods[0].Pod.Name] = v.violateCount
			}
			var gotNon []string
			for _, v := range nonViolating {
				gotNon = append(gotNon, v.Pods[0].Pod.Name)
			}
			if diff := cmp.Diff(tt.wantViolating, got); diff != "" {
				t.Errorf("violating (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNonViolating, gotNon); diff != "" {
				t.Errorf("non-violating (-want +got):\n%s", diff)
			}
		})
	}
}
