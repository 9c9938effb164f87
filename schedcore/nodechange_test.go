package schedcore_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestNodeSchedulingPropertiesChange(t *testing.T) {
	base := func() *v1.Node {
		n := schedtest.MakeNode("n").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Label("zone", "a").Obj()
		n.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}}
		return n
	}
	with := func(f func(*v1.Node)) *v1.Node { n := base(); f(n); return n }
	ev := func(as ...schedcore.ActionType) []schedcore.ClusterEvent {
		var out []schedcore.ClusterEvent
		for _, a := range as {
			out = append(out, schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: a})
		}
		return out
	}
	tests := []struct {
		name     string
		old, new *v1.Node
		want     []schedcore.ClusterEvent
	}{
		{"an identical node is no event", base(), base(), nil},
		{"a heartbeat (condition times and reason only) is no event", base(), with(func(n *v1.Node) {
			n.Status.Conditions[0].LastHeartbeatTime = metav1.Now()
			n.Status.Conditions[0].Reason = "KubeletReady"
		}), nil},
		{"a condition status change is UpdateNodeCondition", base(), with(func(n *v1.Node) { n.Status.Conditions[0].Status = v1.ConditionFalse }), ev(schedcore.UpdateNodeCondition)},
		{"a new condition type is UpdateNodeCondition", base(), with(func(n *v1.Node) {
			n.Status.Conditions = append(n.Status.Conditions, v1.NodeCondition{Type: v1.NodeDiskPressure, Status: v1.ConditionFalse})
		}), ev(schedcore.UpdateNodeCondition)},
		{"becoming schedulable is UpdateNodeTaint", with(func(n *v1.Node) { n.Spec.Unschedulable = true }), base(), ev(schedcore.UpdateNodeTaint)},
		{"becoming unschedulable is no event", base(), with(func(n *v1.Node) { n.Spec.Unschedulable = true }), nil},
		{"an allocatable change is UpdateNodeAllocatable", base(), with(func(n *v1.Node) {
			n.Status.Allocatable = schedtest.ResourceList("cpu", "8", "memory", "8Gi", "pods", "110")
		}), ev(schedcore.UpdateNodeAllocatable)},
		{"a label change is UpdateNodeLabel", base(), with(func(n *v1.Node) { n.Labels["zone"] = "b" }), ev(schedcore.UpdateNodeLabel)},
		{"a taint change is UpdateNodeTaint", base(), with(func(n *v1.Node) {
			n.Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}
		}), ev(schedcore.UpdateNodeTaint)},
		{"an annotation change is UpdateNodeAnnotation", base(), with(func(n *v1.Node) { n.Annotations = map[string]string{"a": "b"} }), ev(schedcore.UpdateNodeAnnotation)},
		{"a declared feature change is UpdateNodeDeclaredFeature", base(), with(func(n *v1.Node) { n.Status.DeclaredFeatures = []string{"X"} }), ev(schedcore.UpdateNodeDeclaredFeature)},
		{"a preemption policy change is UpdateNodePreemptionPolicy", base(), with(func(n *v1.Node) { n.Spec.PodPreemptionPolicy = &v1.NodePodPreemptionPolicy{} }), ev(schedcore.UpdateNodePreemptionPolicy)},
		{"several changes come in kube's order", with(func(n *v1.Node) { n.Spec.Unschedulable = true }), with(func(n *v1.Node) {
			n.Annotations = map[string]string{"a": "b"}
			n.Labels["zone"] = "b"
			n.Spec.Taints = []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}
		}), ev(schedcore.UpdateNodeTaint, schedcore.UpdateNodeLabel, schedcore.UpdateNodeTaint, schedcore.UpdateNodeAnnotation)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, schedcore.NodeSchedulingPropertiesChange(tt.new, tt.old)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}
