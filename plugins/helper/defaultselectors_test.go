package helper_test

import (
	"fmt"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/plugins/helper"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

// TestDefaultSelectorsKept checks the default selectors kept across cycles
// against helper.DefaultSelector made anew, for pods that differ in
// namespace, labels or controller, under sources replaced (a Service
// added, one removed) between the asks: each of these changes the
// selector of some pod.
func TestDefaultSelectorsKept(t *testing.T) {
	svc := func(ns, name string, sel map[string]string) *v1.Service {
		return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: v1.ServiceSpec{Selector: sel}}
	}
	rs := func(name, hash string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: name},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a", "hash": hash}}}}
	}
	rss := []*appsv1.ReplicaSet{rs("rs1", "1"), rs("rs2", "2")}
	withTier := &schedcore.SelectorSources{ReplicaSets: rss, Services: []*v1.Service{
		svc("ns1", "a", map[string]string{"app": "a"}), svc("ns1", "tier", map[string]string{"tier": "x"}), svc("ns2", "b", map[string]string{"app": "b"}),
	}}
	withB := &schedcore.SelectorSources{ReplicaSets: rss, Services: append([]*v1.Service{svc("ns1", "b", map[string]string{"app": "b"})}, withTier.Services...)}
	withoutTier := &schedcore.SelectorSources{ReplicaSets: rss, Services: []*v1.Service{withTier.Services[0], withTier.Services[2]}}

	var pods []*v1.Pod
	for _, ns := range []string{"ns1", "ns2"} {
		for _, ls := range []map[string]string{{"app": "a"}, {"app": "a", "tier": "x"}, {"app": "b"}, nil} {
			for _, owner := range []string{"", "rs1", "rs2"} {
				p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("p%d", len(pods)), Labels: ls}}
				if owner != "" {
					yes := true
					p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: owner, Controller: &yes}}
				}
				pods = append(pods, p)
			}
		}
	}
	var d helper.DefaultSelectors
	for step, src := range []*schedcore.SelectorSources{withTier, withB, withTier, withoutTier, nil, withTier} {
		for round := 0; round < 2; round++ {
			for _, p := range pods {
				want := helper.DefaultSelector(p, src).String()
				if got := d.Get(p, src).String(); got != want {
					t.Errorf("step %d, pod %s/%s %v owner %v: kept selector %q, want %q", step, p.Namespace, p.Name, p.Labels, p.OwnerReferences, got, want)
				}
			}
		}
	}
}
