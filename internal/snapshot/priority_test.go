package snapshot

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
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

// TestResolvePodGroupPriority: a PodGroup written by hand gets the
// spec.priority the API server's Priority admission (admitPodGroup)
// would compute from its priorityClassName.
func TestResolvePodGroupPriority(t *testing.T) {
	prio := func(v int32) *int32 { return &v }
	withDefaults := []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000},
		{ObjectMeta: metav1.ObjectMeta{Name: "default-b"}, Value: 20, GlobalDefault: true},
		{ObjectMeta: metav1.ObjectMeta{Name: "default-a"}, Value: 10, GlobalDefault: true},
	}
	noDefault := withDefaults[:1]
	tests := []struct {
		name        string
		className   string
		priority    *int32
		classes     []*schedulingv1.PriorityClass
		wantPrio    *int32
		wantClass   string
		wantWarning string
	}{
		{name: "named class", className: "high", classes: withDefaults, wantPrio: prio(1000), wantClass: "high"},
		{name: "no class: the globalDefault with the lowest value, named", classes: withDefaults, wantPrio: prio(10), wantClass: "default-a"},
		{name: "no class, no globalDefault: 0", classes: noDefault, wantPrio: prio(0)},
		{name: "no class, no classes in the dump: 0", wantPrio: prio(0)},
		{name: "a system class the dump leaves out", className: "system-cluster-critical", wantPrio: prio(2000000000), wantClass: "system-cluster-critical"},
		{name: "admitted already: kept", className: "high", priority: prio(1000), classes: withDefaults, wantPrio: prio(1000), wantClass: "high"},
		{name: "admitted already, classes not dumped: kept", className: "high", priority: prio(1000), wantPrio: prio(1000), wantClass: "high"},
		{
			name: "a priority its class contradicts: kept, with admission's refusal", className: "high", priority: prio(5), classes: withDefaults,
			wantPrio: prio(5), wantClass: "high",
			wantWarning: "warning: podgroup ns/pg: priority set in the pod group (5) must match the priority computed (1000) based on the priority class set in the spec (the API server would refuse it): priority 5 kept",
		},
		{
			name: "an unknown class: unset, with a warning", className: "nope", classes: withDefaults, wantClass: "nope",
			wantWarning: `warning: podgroup ns/pg: priorityClassName "nope" is not a PriorityClass of the dump: priority 0 (the API server would refuse the pod group)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pg := &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pg"}}
			pg.Spec.PriorityClassName, pg.Spec.Priority = tt.className, tt.priority
			w := ResolvePodGroupPriority(pg, tt.classes)
			if w != tt.wantWarning {
				t.Errorf("warning %q, want %q", w, tt.wantWarning)
			}
			if diff := cmp.Diff(tt.wantPrio, pg.Spec.Priority); diff != "" {
				t.Errorf("spec.priority (-want +got):\n%s", diff)
			}
			if pg.Spec.PriorityClassName != tt.wantClass {
				t.Errorf("spec.priorityClassName %q, want %q", pg.Spec.PriorityClassName, tt.wantClass)
			}
		})
	}
}

// TestResolvePrioritiesCoversPodGroups: the loader's pass resolves the
// dump's PodGroups with its pods.
func TestResolvePrioritiesCoversPodGroups(t *testing.T) {
	c := &Cluster{
		PriorityClasses: []*schedulingv1.PriorityClass{{ObjectMeta: metav1.ObjectMeta{Name: "high"}, Value: 1000}},
		Workloads: Workloads{PodGroups: []*schedulingv1beta1.PodGroup{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, Spec: schedulingv1beta1.PodGroupSpec{PriorityClassName: "high"}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}, Spec: schedulingv1beta1.PodGroupSpec{PriorityClassName: "gone"}},
		}},
	}
	c.ResolvePriorities()
	if p := c.Workloads.PodGroups[0].Spec.Priority; p == nil || *p != 1000 {
		t.Errorf("podgroup a: spec.priority %v, want 1000", p)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "podgroup ns/b") {
		t.Errorf("warnings %q, want one for podgroup ns/b", c.Warnings)
	}
}
