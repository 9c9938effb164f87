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
