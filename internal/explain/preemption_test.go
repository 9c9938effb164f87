package explain

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestExplainShowsWhatPreemptionWouldDo(t *testing.T) {
	never := v1.PreemptNever
	cluster := func() *snapshot.Cluster {
		return &snapshot.Cluster{
			Nodes: []*v1.Node{node("a").Obj(), node("b").Obj()},
			Pods: []*v1.Pod{
				st.MakePod("guarded").Namespace("ns").Node("a").Label("app", "g").Priority(1).Req("cpu", "4").Obj(),
				st.MakePod("batch-1").Namespace("ns").Node("b").Priority(5).Req("cpu", "2").Obj(),
				st.MakePod("batch-2").Namespace("ns").Node("b").Priority(5).Req("cpu", "2").Obj(),
			},
			PDBs: []*policyv1.PodDisruptionBudget{{
				ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "ns"},
				Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "g"}}},
			}},
		}
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want *report.PreemptionOutcome
	}{
		{
			name: "a higher-priority pod would evict on the node without PDB violations",
			pod:  st.MakePod("urgent").Namespace("ns").Priority(100).Req("cpu", "2").Obj(),
			want: &report.PreemptionOutcome{Node: "b", Victims: []string{"ns/batch-2"},
				Message: "preemption: found a potential placement for pod on node b, preempting 1 victims"},
		},
		{
			name: "when only the PDB-guarded node helps, the violation is counted",
			pod:  st.MakePod("urgent").Namespace("ns").Priority(100).Req("cpu", "4").NodeSelector(v1.LabelHostname, "a").Obj(),
			want: &report.PreemptionOutcome{Node: "a", Victims: []string{"ns/guarded"}, PDBViolations: 1,
				Message: "preemption: found a potential placement for pod on node a, preempting 1 victims"},
		},
		{
			name: "a pod of equal priority finds no victims",
			pod:  st.MakePod("peer").Namespace("ns").Priority(0).Req("cpu", "2").Obj(),
			want: &report.PreemptionOutcome{Victims: []string{},
				Message: "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."},
		},
		{
			name: "preemptionPolicy Never is not eligible",
			pod: func() *v1.Pod {
				p := st.MakePod("polite").Namespace("ns").Priority(100).Req("cpu", "2").Obj()
				p.Spec.PreemptionPolicy = &never
				return p
			}(),
			want: &report.PreemptionOutcome{Victims: []string{}, Message: "preemption: not eligible due to preemptionPolicy=Never."},
		},
		{name: "a pod that fits has no preemption", pod: st.MakePod("small").Namespace("ns").Req("cpu", "0").Obj()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cl := cluster()
			rep := explainOn(t, cl, tc.pod, "")
			if diff := cmp.Diff(tc.want, rep.Preemption); diff != "" {
				t.Errorf("preemption (-want +got):\n%s", diff)
			}
			// Nothing was evicted from the state.
			if got := len(cl.Pods); got != 3 {
				t.Errorf("cluster has %d pods after explain, want 3", got)
			}
		})
	}
}
