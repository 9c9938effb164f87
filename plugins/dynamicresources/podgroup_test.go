package dynamicresources

import (
	"context"
	"testing"

	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestPodGroupPostFilter: kube's statuses: Unschedulable with the
// deallocation sentence (which DefaultPreemption's reason follows), or
// with no reason for a TAS-constrained group.
func TestPodGroupPostFilter(t *testing.T) {
	constrained := &schedulingv1beta1.PodGroupSchedulingConstraints{Topology: []schedulingv1beta1.TopologyConstraint{{Key: "rack"}}}
	for _, tc := range []struct {
		name        string
		tas, noDRA  bool
		constraints *schedulingv1beta1.PodGroupSchedulingConstraints
		want        string
	}{
		{"a group without claims still gets the sentence", false, false, nil, MsgPodGroupDeallocated},
		{"TAS off: a constraint does not matter", false, false, constrained, MsgPodGroupDeallocated},
		{"TAS on, unconstrained group", true, false, nil, MsgPodGroupDeallocated},
		{"TAS on, constrained group: no reason", true, false, constrained, ""},
		{"plugin disabled (DynamicResourceAllocation off): no reason", false, true, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := schedcore.DefaultFeatures
			f.GenericWorkload, f.TopologyAwareWorkloadScheduling = true, tc.tas
			f.DynamicResourceAllocation = !tc.noDRA
			p, err := New(context.Background(), nil, schedcore.NewHandle(nil, 1, schedcore.WithFeatures(f)))
			if err != nil {
				t.Fatal(err)
			}
			pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pg"}}
			pg.Spec.SchedulingConstraints = tc.constraints
			res, st := p.(*DynamicResources).PodGroupPostFilter(context.Background(), schedcore.NewCycleState(), &schedcore.QueuedPodGroupInfo{Namespace: "ns", Name: "pg", Object: pg}, nil)
			if res != nil || st.Code() != schedcore.Unschedulable || st.Message() != tc.want {
				t.Errorf("PodGroupPostFilter = %v, %v (%q), want nil, Unschedulable %q", res, st.Code(), st.Message(), tc.want)
			}
		})
	}
}
