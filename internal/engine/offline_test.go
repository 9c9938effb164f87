package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// journal records what an offline cluster's observer is told.
type journal struct{ events []string }

func (j *journal) observer() Observer {
	return Observer{
		Placed: func(pod *v1.Pod, node string, _ int, _ schedcore.ScheduleResult) {
			j.events = append(j.events, "placed "+pod.Name+" on "+node)
		},
		Failed: func(pod *v1.Pod, f Failure) {
			j.events = append(j.events, "failed "+pod.Name+": "+f.Status.Message())
		},
		Attempting: func(_ context.Context, pod *v1.Pod, attempt int) {
			j.events = append(j.events, fmt.Sprintf("attempt %d of %s", attempt, pod.Name))
		},
	}
}

func offlineNode(name, cpu string) *v1.Node {
	return schedtest.MakeNode(name).Label(v1.LabelHostname, name).Capacity("cpu", cpu, "memory", "8Gi", "pods", "10").Obj()
}

func TestOfflineWithoutNodesFails(t *testing.T) {
	if _, _, err := NewOffline(context.Background(), &snapshot.Cluster{}, Options{}, Observer{}); !errors.Is(err, ErrNoNodes) {
		t.Errorf("error %v, want ErrNoNodes", err)
	}
}

// TestOfflineDrainReplacesAPod is what a drain plan does: cordon a node,
// evict its pod and submit a replacement, which must land elsewhere.
func TestOfflineDrainReplacesAPod(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{offlineNode("n1", "4"), offlineNode("n2", "4")},
		Pods: []*v1.Pod{
			schedtest.MakePod("a").Namespace("ns").Node("n1").Req("cpu", "1").Obj(),
			schedtest.MakePod("p").Namespace("ns").Req("cpu", "1").Obj(),
		},
	}
	ctx := context.Background()
	j := &journal{}
	c, pending, err := NewOffline(ctx, cl, Options{}, j.observer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(pending) != 1 || pending[0].Name != "p" {
		t.Fatalf("pending %v, want [p]", pending)
	}
	c.Submit(pending...)
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	cordoned := offlineNode("n1", "4")
	cordoned.Spec.Unschedulable = true
	if err := c.UpdateNode(cordoned); err != nil {
		t.Fatal(err)
	}
	c.Delete("ns", "a")
	if err := c.Add(schedtest.MakePod("a-2").Namespace("ns").Req("cpu", "1").Obj()); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"attempt 1 of p", "placed p on n2", "attempt 1 of a-2", "placed a-2 on n2"}, j.events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	var names []string
	for _, p := range c.Pods("ns") {
		names = append(names, p.Name+"@"+p.Spec.NodeName)
	}
	if d := cmp.Diff([]string{"a-2@n2", "p@n2"}, names); d != "" {
		t.Errorf("the store's pods (-want +got):\n%s", d)
	}
	if c.Placements() != 2 {
		t.Errorf("%d placements, want 2", c.Placements())
	}
}

// TestOfflineDepartureWakesAWaitingPod: a pod that fits nowhere waits in
// the unschedulable pool until a departure frees room, which requeues it
// (NodeResourcesFit's queueing hint) as the informer's delete event would.
func TestOfflineDepartureWakesAWaitingPod(t *testing.T) {
	cl := &snapshot.Cluster{
		Nodes: []*v1.Node{offlineNode("n1", "2")},
		Pods:  []*v1.Pod{schedtest.MakePod("big").Namespace("ns").Node("n1").Req("cpu", "2").Obj()},
	}
	ctx := context.Background()
	j := &journal{}
	c, _, err := NewOffline(ctx, cl, Options{}, j.observer())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Add(schedtest.MakePod("q").Namespace("ns").Req("cpu", "1").Obj()); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(schedtest.MakePod("q").Namespace("ns").Obj()); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("adding a pod twice: %v, want an error", err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.Delete("ns", "big")
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"attempt 1 of q", "failed q: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.", "attempt 2 of q", "placed q on n1"}
	if d := cmp.Diff(want, j.events); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}
