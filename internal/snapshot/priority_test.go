package snapshot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestResolvePriority: a pod written by hand gets the priority of its
// class as the API server's admission would give it; a pod the API server
// already admitted keeps its own.
func TestResolvePriority(t *testing.T) {
	never := v1.PreemptNever
	lower := v1.PreemptLowerPriority
	classes := []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
		{ObjectMeta: metav1.ObjectMeta{Name: "polite"}, Value: 500, PreemptionPolicy: &never},
		{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Value: 10, GlobalDefault: true},
	}
	prio := func(v int32) *int32 { return &v }
	tests := []struct {
		name         string
		pod          v1.PodSpec
		classes      []*schedulingv1.PriorityClass
		wantPriority *int32
		wantPolicy   *v1.PreemptionPolicy
		wantWarning  string
	}{
		{name: "the class's value", pod: v1.PodSpec{PriorityClassName: "high"}, classes: classes, wantPriority: prio(1000)},
		{name: "and its preemption policy", pod: v1.PodSpec{PriorityClassName: "polite"}, classes: classes, wantPriority: prio(500), wantPolicy: &never},
		{name: "the pod's own policy stays", pod: v1.PodSpec{PriorityClassName: "polite", PreemptionPolicy: &lower}, classes: classes, wantPriority: prio(500), wantPolicy: &lower},
		{name: "no class: the global default", pod: v1.PodSpec{}, classes: classes, wantPriority: prio(10)},
		{name: "no class and no global default", pod: v1.PodSpec{}, classes: classes[:2]},
		{name: "an admitted pod keeps its priority", pod: v1.PodSpec{PriorityClassName: "high", Priority: prio(7)}, classes: classes, wantPriority: prio(7)},
		{name: "a system class the dump leaves out", pod: v1.PodSpec{PriorityClassName: "system-node-critical"}, wantPriority: prio(2000001000)},
		{name: "an unknown class warns", pod: v1.PodSpec{PriorityClassName: "nope"}, classes: classes,
			wantWarning: `warning: pod ns/p: priorityClassName "nope" is not a PriorityClass of the dump: priority 0 (the API server would refuse the pod)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: tt.pod}
			w := ResolvePriority(p, tt.classes)
			if w != tt.wantWarning {
				t.Errorf("warning %q, want %q", w, tt.wantWarning)
			}
			if d := cmp.Diff(tt.wantPriority, p.Spec.Priority); d != "" {
				t.Errorf("priority (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.wantPolicy, p.Spec.PreemptionPolicy); d != "" {
				t.Errorf("preemption policy (-want +got):\n%s", d)
			}
		})
	}
}
