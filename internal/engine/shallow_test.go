package engine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestOfflineLeavesTheCallersPodsAlone checks what shallowCopy relies on:
// loading (UIDs filled in), nominating, binding and evicting change the
// store's pods, never the caller's cluster, though they share their maps
// and slices with it.
func TestOfflineLeavesTheCallersPodsAlone(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{offlineNode("n1", "2"), offlineNode("n2", "2")},
		Pods: []*v1.Pod{
			schedtest.MakePod("running").Namespace("ns").Node("n1").Req("cpu", "1").Label("app", "a").Obj(),
			schedtest.MakePod("p").Namespace("ns").Req("cpu", "1").Label("app", "a").Obj(),
			schedtest.MakePod("q").Namespace("ns").Req("cpu", "1").Label("app", "a").Obj(),
		},
	}
	before := make([]*v1.Pod, len(cl.Pods))
	for i, p := range cl.Pods {
		p.UID = "" // as in a hand-written dump: loading fills it in
		before[i] = p.DeepCopy()
	}
	ctx := context.Background()
	c, pending, err := NewOffline(ctx, cl, Options{}, Observer{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Submit(pending...)
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.Delete("ns", "running")
	bound := 0
	for _, p := range c.Pods("ns") {
		if p.Spec.NodeName != "" && p.UID != "" {
			bound++
		}
	}
	if bound != 2 {
		t.Fatalf("%d pods bound with a UID, want 2", bound)
	}
	if diff := cmp.Diff(before, cl.Pods); diff != "" {
		t.Errorf("the caller's pods changed (-before +after):\n%s", diff)
	}
}

// The binder stores the pod it binds as the bound pod only when that pod
// is the store's pod, field for field (the same maps, slices and strings),
// with the node set; any other pod to bind gets a copy of the store's pod
// with the node set and the nomination cleared, as the API server does.
func TestBinderStoresTheAssumedPodOnlyWhenItIsTheStoresPod(t *testing.T) {
	cur := schedtest.MakePod("p").Label("app", "a").Obj()
	cur.UID = "u"
	nominated := *cur
	nominated.Status.NominatedNodeName = "n2"
	relabelled := *cur
	relabelled.Labels = map[string]string{"app": "a"} // equal, not the same map
	for _, tc := range []struct {
		name   string
		stored *v1.Pod
		pod    func(cur *v1.Pod) *v1.Pod
		same   bool
	}{
		{name: "the assumed copy", stored: cur, pod: func(c *v1.Pod) *v1.Pod { x := *c; x.Spec.NodeName = "n1"; return &x }, same: true},
		{name: "another node set", stored: cur, pod: func(c *v1.Pod) *v1.Pod { x := *c; x.Spec.NodeName = "n2"; return &x }},
		{name: "a nominated pod", stored: &nominated, pod: func(c *v1.Pod) *v1.Pod { x := *c; x.Spec.NodeName = "n1"; return &x }},
		{name: "equal labels in another map", stored: cur, pod: func(*v1.Pod) *v1.Pod { x := relabelled; x.Spec.NodeName = "n1"; return &x }},
		{name: "another scheduler name", stored: cur, pod: func(c *v1.Pod) *v1.Pod { x := *c; x.Spec.NodeName = "n1"; x.Spec.SchedulerName = "other"; return &x }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore()
			s.put(tc.stored)
			pod := tc.pod(tc.stored)
			if err := (binder{s}).Bind(context.Background(), pod, "n1"); err != nil {
				t.Fatal(err)
			}
			got, _ := s.get(cur.Namespace, cur.Name)
			if (got == pod) != tc.same {
				t.Fatalf("bound pod is the pod to bind: %v, want %v", got == pod, tc.same)
			}
			if got.Spec.NodeName != "n1" || got.Status.NominatedNodeName != "" {
				t.Errorf("bound to %q, nominated %q", got.Spec.NodeName, got.Status.NominatedNodeName)
			}
			want := *tc.stored
			want.Spec.NodeName, want.Status.NominatedNodeName = "n1", ""
			if diff := cmp.Diff(&want, got); diff != "" {
				t.Errorf("bound pod (-want +got):\n%s", diff)
			}
		})
	}
}
