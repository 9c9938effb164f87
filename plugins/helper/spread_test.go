package helper

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func ownedBy(p *v1.Pod, name string, gvk schema.GroupVersionKind, controller bool) *v1.Pod {
	p.OwnerReferences = append(p.OwnerReferences, metav1.OwnerReference{
		APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: name, Controller: &controller,
	})
	return p
}

func TestGetPodServices(t *testing.T) {
	var services []*v1.Service
	for i := 0; i < 3; i++ {
		services = append(services, &v1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("service-%d", i), Namespace: "test"},
			Spec:       v1.ServiceSpec{Selector: map[string]string{"app": fmt.Sprintf("test-%d", i)}},
		})
	}
	other := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "other-ns", Namespace: "other"},
		Spec:       v1.ServiceSpec{Selector: map[string]string{"app": "test-0"}},
	}
	headless := &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "no-selector", Namespace: "test"}}
	src := &schedcore.SelectorSources{Services: append(append([]*v1.Service{other, headless}, services...), nil)}

	var pods []*v1.Pod
	for i := 0; i < 5; i++ {
		pods = append(pods, schedtest.MakePod(fmt.Sprintf("test-pod-%d", i)).Namespace("test").
			Label("app", fmt.Sprintf("test-%d", i)).Label("label", fmt.Sprintf("label-%d", i)).Obj())
	}
	tests := []struct {
		name string
		src  *schedcore.SelectorSources
		pod  *v1.Pod
		want []*v1.Service
	}{
		{name: "the service selecting pod-0 in its namespace", src: src, pod: pods[0], want: []*v1.Service{services[0]}},
		{name: "the service selecting pod-1", src: src, pod: pods[1], want: []*v1.Service{services[1]}},
		{name: "the service selecting pod-2", src: src, pod: pods[2], want: []*v1.Service{services[2]}},
		{name: "no service selects pod-3", src: src, pod: pods[3]},
		{name: "no service selects pod-4", src: src, pod: pods[4]},
		{name: "nil sources give no services", pod: pods[0]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, GetPodServices(tt.src, tt.pod)); diff != "" {
				t.Errorf("GetPodServices (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDefaultSelector(t *testing.T) {
	const ns = "test"
	service := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: ns},
		Spec:       v1.ServiceSpec{Selector: map[string]string{"podLabelKey": "podLabelVal"}},
	}
	service2 := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "svc2", Namespace: ns},
		Spec:       v1.ServiceSpec{Selector: map[string]string{"tier": "web"}},
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: ns},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"replicaSetLabelKey": "replicaSetLabelVal"}}},
	}
	rsExpr := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs-expr", Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "track", Operator: metav1.LabelSelectorOpIn, Values: []string{"stable", "canary"}},
		}}},
	}
	rsBad := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs-bad", Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "track", Operator: "Bogus"},
		}}},
	}
	rsOtherNS := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "elsewhere"},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"wrong": "ns"}}},
	}
	rc := &v1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "rc", Namespace: ns},
		Spec:       v1.ReplicationControllerSpec{Selector: map[string]string{"replicationLabelKey": "replicationLabelVal"}},
	}
	ss := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "ss", Namespace: ns},
		Spec:       appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"statefulSetLabelKey": "statefulSetLabelVal"}}},
	}
	all := &schedcore.SelectorSources{
		Services:               []*v1.Service{service},
		ReplicationControllers: []*v1.ReplicationController{rc},
		ReplicaSets:            []*appsv1.ReplicaSet{rsOtherNS, rs, rsExpr, rsBad},
		StatefulSets:           []*appsv1.StatefulSet{ss},
	}
	pod := func() *v1.Pod {
		return schedtest.MakePod("test-pod").Namespace(ns).Label("podLabelKey", "podLabelVal").Label("tier", "web").Obj()
	}
	rsGVK := appsv1.SchemeGroupVersion.WithKind("ReplicaSet")

	tests := []struct {
		name      string
		src       *schedcore.SelectorSources
		pod       *v1.Pod
		want      string
		wantEmpty bool
	}{
		{name: "no sources give an empty selector", pod: pod(), want: "", wantEmpty: true},
		{name: "no matching objects give an empty selector", src: &schedcore.SelectorSources{}, pod: pod(), want: "", wantEmpty: true},
		{name: "a pod without owner takes its services' selector", src: all, pod: pod(), want: "podLabelKey=podLabelVal"},
		{
			name: "selectors of several services are merged",
			src:  &schedcore.SelectorSources{Services: []*v1.Service{service, service2}},
			pod:  pod(), want: "podLabelKey=podLabelVal,tier=web",
		},
		{name: "a ReplicaSet owner adds its selector", src: all, pod: ownedBy(pod(), "rs", rsGVK, true), want: "podLabelKey=podLabelVal,replicaSetLabelKey=replicaSetLabelVal"},
		{name: "a ReplicaSet owner with match expressions adds them", src: all, pod: ownedBy(pod(), "rs-expr", rsGVK, true), want: "podLabelKey=podLabelVal,track in (canary,stable)"},
		{name: "a ReplicaSet whose selector does not parse is ignored", src: all, pod: ownedBy(pod(), "rs-bad", rsGVK, true), want: "podLabelKey=podLabelVal"},
		{
			name: "a ReplicaSet alone gives its selector",
			src:  &schedcore.SelectorSources{ReplicaSets: []*appsv1.ReplicaSet{rs}},
			pod:  ownedBy(pod(), "rs", rsGVK, true), want: "replicaSetLabelKey=replicaSetLabelVal",
		},
		{name: "a missing ReplicaSet adds nothing", src: all, pod: ownedBy(pod(), "gone", rsGVK, true), want: "podLabelKey=podLabelVal"},
		{name: "an owner that is not the controller is ignored", src: all, pod: ownedBy(pod(), "rs", rsGVK, false), want: "podLabelKey=podLabelVal"},
		{
			name: "a ReplicationController owner adds its selector",
			src:  all, pod: ownedBy(pod(), "rc", v1.SchemeGroupVersion.WithKind("ReplicationController"), true),
			want: "podLabelKey=podLabelVal,replicationLabelKey=replicationLabelVal",
		},
		{
			name: "a StatefulSet owner adds its selector",
			src:  all, pod: ownedBy(pod(), "ss", appsv1.SchemeGroupVersion.WithKind("StatefulSet"), true),
			want: "podLabelKey=podLabelVal,statefulSetLabelKey=statefulSetLabelVal",
		},
		{
			name: "a Deployment owner is not a supported controller",
			src:  all, pod: ownedBy(pod(), "rs", appsv1.SchemeGroupVersion.WithKind("Deployment"), true),
			want: "podLabelKey=podLabelVal",
		},
		{
			name: "an owner of another API group is not a supported controller",
			src:  all, pod: ownedBy(pod(), "rs", schema.GroupVersionKind{Group: "extensions", Version: "v1beta1", Kind: "ReplicaSet"}, true),
			want: "podLabelKey=podLabelVal",
		},
		{
			name: "an owner with an unparsable apiVersion is ignored",
			src:  all, pod: ownedBy(pod(), "rs", schema.GroupVersionKind{Group: "a/b", Version: "c", Kind: "ReplicaSet"}, true),
			want: "podLabelKey=podLabelVal",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultSelector(tt.pod, tt.src)
			if diff := cmp.Diff(tt.want, got.String()); diff != "" {
				t.Errorf("DefaultSelector (-want +got):\n%s", diff)
			}
			if got.Empty() != tt.wantEmpty {
				t.Errorf("DefaultSelector(...).Empty() = %v, want %v", got.Empty(), tt.wantEmpty)
			}
		})
	}
}

// setSelects answers as the selector kube makes from a Service's selector
// (labels.Set.AsSelectorPreValidated) does: this fails if a missing key,
// another value or an empty set is judged otherwise.
func TestSetSelectsAsSetSelector(t *testing.T) {
	tests := []struct {
		name      string
		sel, pods map[string]string
	}{
		{name: "empty set selects all", sel: map[string]string{}, pods: map[string]string{"app": "a"}},
		{name: "empty set, pod without labels", sel: map[string]string{}, pods: nil},
		{name: "one pair held", sel: map[string]string{"app": "a"}, pods: map[string]string{"app": "a", "tier": "web"}},
		{name: "other value", sel: map[string]string{"app": "a"}, pods: map[string]string{"app": "b"}},
		{name: "key missing", sel: map[string]string{"app": "a"}, pods: map[string]string{"tier": "a"}},
		{name: "empty value held", sel: map[string]string{"app": ""}, pods: map[string]string{"app": ""}},
		{name: "empty value, key missing", sel: map[string]string{"app": ""}, pods: map[string]string{}},
		{name: "two pairs, one held", sel: map[string]string{"app": "a", "tier": "web"}, pods: map[string]string{"app": "a", "tier": "db"}},
		{name: "two pairs held", sel: map[string]string{"app": "a", "tier": "web"}, pods: map[string]string{"app": "a", "tier": "web", "x": "y"}},
		{name: "pod without labels", sel: map[string]string{"app": "a"}, pods: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := labels.Set(tc.sel).AsSelectorPreValidated().Matches(labels.Set(tc.pods))
			if got := setSelects(tc.sel, tc.pods); got != want {
				t.Errorf("setSelects = %v, kube's selector says %v", got, want)
			}
		})
	}
}
