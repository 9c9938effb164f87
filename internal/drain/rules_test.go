package drain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func owned(p *v1.Pod, apiVersion, kind, name string) *v1.Pod {
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, Controller: ptr.To(true)}}
	return p
}

func ready(p *v1.Pod) *v1.Pod {
	p.Status.Phase = v1.PodRunning
	p.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
	return p
}

func TestClassifyFollowsKubectlDrainFilters(t *testing.T) {
	mirror := st.MakePod("etcd").Obj()
	mirror.Annotations = map[string]string{v1.MirrorPodAnnotationKey: "x"}
	finished := st.MakePod("done").Phase(v1.PodSucceeded).Obj()
	finishedDS := owned(st.MakePod("ds-done").Phase(v1.PodFailed).Obj(), "apps/v1", "DaemonSet", "d")
	tests := []struct {
		name  string
		pod   *v1.Pod
		force bool
		want  verdict
	}{
		{"a ReplicaSet's pod is evicted", owned(st.MakePod("a").Obj(), "apps/v1", "ReplicaSet", "rs"), false, evict},
		{"a DaemonSet's pod stays", owned(st.MakePod("a").Obj(), "apps/v1", "DaemonSet", "ds"), false, keepDaemonSet},
		{"a DaemonSet's pod stays even with --force", owned(st.MakePod("a").Obj(), "apps/v1", "DaemonSet", "ds"), true, keepDaemonSet},
		{"a finished DaemonSet pod is deleted", finishedDS, false, evict},
		{"a DaemonSet of another API group is an ordinary controller", owned(st.MakePod("a").Obj(), "example.com/v1", "DaemonSet", "ds"), false, evict},
		{"a mirror pod stays", mirror, false, keepMirror},
		{"a pod without a controller makes kubectl refuse the node", st.MakePod("a").Obj(), false, refuseUnmanaged},
		{"a pod without a controller is deleted with --force", st.MakePod("a").Obj(), true, evict},
		{"a finished pod without a controller is deleted", finished, false, evict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.pod, tc.force); got != tc.want {
				t.Errorf("classify = %v, want %v", got, tc.want)
			}
		})
	}
}

func pdb(name string, match map[string]string, status policyv1.PodDisruptionBudgetStatus) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: match}},
		Status:     status,
	}
}

// The eviction subresource's decisions (pkg/registry/core/pod/storage/
// eviction.go), evictions asked one after another.
func TestBudgetsDecideAsTheEvictionSubresource(t *testing.T) {
	web := map[string]string{"app": "web"}
	tooMany := "Cannot evict pod as it would violate the pod's disruption budget."
	tests := []struct {
		name string
		pdbs []*policyv1.PodDisruptionBudget
		pods []*v1.Pod
		want []*Refusal
	}{
		{
			name: "each eviction uses up the budget until none is left",
			pdbs: []*policyv1.PodDisruptionBudget{pdb("web", web, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 2, CurrentHealthy: 3, DesiredHealthy: 1, ExpectedPods: 3})},
			pods: []*v1.Pod{ready(st.MakePod("a").Label("app", "web").Obj()), ready(st.MakePod("b").Label("app", "web").Obj()), ready(st.MakePod("c").Label("app", "web").Obj())},
			want: []*Refusal{nil, nil, {Code: 429, Budget: "default/web", Message: tooMany, Cause: "The disruption budget web does not allow evicting pods currently"}},
		},
		{
			name: "a budget at its minimum says how many healthy pods it needs",
			pdbs: []*policyv1.PodDisruptionBudget{pdb("web", web, policyv1.PodDisruptionBudgetStatus{CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2})},
			pods: []*v1.Pod{ready(st.MakePod("a").Label("app", "web").Obj())},
			want: []*Refusal{{Code: 429, Budget: "default/web", Message: tooMany, Cause: "The disruption budget web needs 2 healthy pods and has 2 currently"}},
		},
		{
			name: "pods no budget selects go",
			pdbs: []*policyv1.PodDisruptionBudget{pdb("web", web, policyv1.PodDisruptionBudgetStatus{})},
			pods: []*v1.Pod{ready(st.MakePod("a").Label("app", "api").Obj()), ready(st.MakePod("b").Namespace("other").Label("app", "web").Obj())},
			want: []*Refusal{nil, nil},
		},
		{
			name: "pending and terminal pods go without a look at the budget",
			pdbs: []*policyv1.PodDisruptionBudget{pdb("web", web, policyv1.PodDisruptionBudgetStatus{})},
			pods: []*v1.Pod{st.MakePod("a").Label("app", "web").Phase(v1.PodPending).Obj(), st.MakePod("b").Label("app", "web").Phase(v1.PodFailed).Obj()},
			want: []*Refusal{nil, nil},
		},
		{
			name: "an unready pod goes without using the budget when the application is healthy",
			pdbs: []*policyv1.PodDisruptionBudget{pdb("web", web, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2})},
			pods: []*v1.Pod{st.MakePod("a").Label("app", "web").Phase(v1.PodRunning).Obj()},
			want: []*Refusal{nil},
		},
		{
			name: "a budget the controller has not processed refuses",
			pdbs: []*policyv1.PodDisruptionBudget{func() *policyv1.PodDisruptionBudget {
				p := pdb("web", web, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 5, ObservedGeneration: 1})
				p.Generation = 2
				return p
			}()},
			pods: []*v1.Pod{ready(st.MakePod("a").Label("app", "web").Obj())},
			want: []*Refusal{{Code: 429, Budget: "default/web", Message: tooMany, Cause: "The disruption budget web is still being processed by the server."}},
		},
		{
			name: "a negative budget is forbidden",
			pdbs: []*policyv1.PodDisruptionBudget{pdb("web", web, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: -1})},
			pods: []*v1.Pod{ready(st.MakePod("a").Label("app", "web").Obj())},
			want: []*Refusal{{Code: 403, Budget: "default/web", Message: `poddisruptionbudgets.policy "web" is forbidden: pdb disruptions allowed is negative`,
				Cause: "The disruption budget web does not allow evicting pods currently: pdb disruptions allowed is negative"}},
		},
		{
			name: "two budgets for one pod is an error of the subresource",
			pdbs: []*policyv1.PodDisruptionBudget{pdb("a", web, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1}), pdb("b", web, policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 1})},
			pods: []*v1.Pod{ready(st.MakePod("a").Label("app", "web").Obj())},
			want: []*Refusal{{Code: 500, Budget: "a, b", Message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBudgets(tc.pdbs)
			var got []*Refusal
			for _, p := range tc.pods {
				got = append(got, b.evict(p))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("refusals (-want +got):\n%s", diff)
			}
		})
	}
}
