package engine

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestChangesCountEveryChangeToTheCluster: each change a driver makes
// moves the count a replay's repeated retries rely on; reading does not.
func TestChangesCountEveryChangeToTheCluster(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, c *Offline)
		moves  bool
	}{
		{"a node arrives", func(_ *testing.T, c *Offline) { c.AddNode(offlineNode("n3", "4")) }, true},
		{"a node leaves", func(t *testing.T, c *Offline) {
			if _, err := c.RemoveNode("n2"); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a node is cordoned", func(t *testing.T, c *Offline) {
			n := offlineNode("n2", "4")
			n.Spec.Unschedulable = true
			if err := c.UpdateNode(n); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a pod arrives", func(t *testing.T, c *Offline) {
			if err := c.Add(schedtest.MakePod("q").Namespace("ns").Req("cpu", "1").Obj()); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"a running pod leaves", func(_ *testing.T, c *Offline) { c.Delete("ns", "a") }, true},
		{"a claim arrives", func(_ *testing.T, c *Offline) {
			c.AddPVC(&v1.PersistentVolumeClaim{})
		}, true},
		{"the cluster is read", func(_ *testing.T, c *Offline) {
			c.Current()
			c.Pod("ns", "a")
			c.Pods("ns")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cl := &snapshot.Cluster{
				Nodes: []*v1.Node{offlineNode("n1", "4"), offlineNode("n2", "4")},
				Pods:  []*v1.Pod{schedtest.MakePod("a").Namespace("ns").Node("n1").Req("cpu", "1").Obj()},
			}
			c, _, err := NewOffline(context.Background(), cl, Options{}, Observer{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			before := c.Changes()
			tt.change(t, c)
			if moved := c.Changes() != before; moved != tt.moves {
				t.Errorf("the count moved: %v, want %v", moved, tt.moves)
			}
		})
	}
}
