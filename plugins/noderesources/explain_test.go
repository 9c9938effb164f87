package noderesources

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestExplainFilterSaysWhatIsMissing checks NodeResourcesFit's account of a
// rejection, from the requests its PreFilter computed: how much of each
// resource is missing, or that a request exceeds the allocatable (then the
// shortfall is 1), with the args' ignored resources left out as the Filter
// leaves them out.
func TestExplainFilterSaysWhatIsMissing(t *testing.T) {
	node := schedtest.MakeNode("n").Capacity("cpu", "4", "memory", "8Gi", "pods", "10", "example.com/gpu", "2").Obj()
	used := schedtest.MakePod("used").Node("n").Req("cpu", "3", "memory", "6Gi", "example.com/gpu", "1").Obj()
	tests := []struct {
		name string
		pod  *v1.Pod
		args *configv1.NodeResourcesFitArgs
		want *schedcore.FilterExplanation
	}{
		{"half the cpu is missing", schedtest.MakePod("p").Req("cpu", "2").Obj(), nil,
			schedcore.NewFilterExplanation(0.5, "needs 1 cpu more (free 1 of 4)")},
		{"each missing resource in the Filter's order, the largest share wins", schedtest.MakePod("p").Req("cpu", "1500m", "memory", "4Gi").Obj(), nil,
			schedcore.NewFilterExplanation(0.5, "needs 500m cpu more (free 1 of 4)", "needs 2Gi memory more (free 2Gi of 8Gi)")},
		{"a request over the allocatable cannot be closed", schedtest.MakePod("p").Req("cpu", "6").Obj(), nil,
			schedcore.NewFilterExplanation(1, "requests 6 cpu, more than the node's allocatable 4 (removing pods cannot help)")},
		{"extended resources are counted", schedtest.MakePod("p").Req("example.com/gpu", "2").Obj(), nil,
			schedcore.NewFilterExplanation(0.5, "needs 1 example.com/gpu more (free 1 of 2)")},
		{"ignored resources are not", schedtest.MakePod("p").Req("cpu", "2", "example.com/gpu", "2").Obj(), &configv1.NodeResourcesFitArgs{IgnoredResources: []string{"example.com/gpu"}},
			schedcore.NewFilterExplanation(0.5, "needs 1 cpu more (free 1 of 4)")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := newFit(t, tt.args)
			ni := nodeInfoWith(node, used)
			st, state := runFilterState(t, pl, tt.pod, ni)
			if st.IsSuccess() {
				t.Fatal("Filter passed the node")
			}
			if d := cmp.Diff(tt.want, pl.ExplainFilter(context.Background(), state, tt.pod, ni, st)); d != "" {
				t.Errorf("ExplainFilter (-want +got):\n%s", d)
			}
		})
	}
}
