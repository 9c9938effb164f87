package interpodaffinity

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// A dry-run cancelled mid-cycle (compare and replay cancel their other runs
// on an error) must not panic in PreFilter: NodeMemo.Values leaves the rows
// it did not reach nil.
func TestPreFilterOnACancelledContext(t *testing.T) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range 64 {
		name := fmt.Sprintf("n%d", i)
		nodes = append(nodes, schedtest.MakeNode(name).Label(v1.LabelHostname, name).Obj())
		pods = append(pods, makePod().Name(fmt.Sprintf("p%d", i)).Label("app", "db").Node(name).Obj())
	}
	snap := newSnapshot(pods, nodes, nil)
	for _, fp := range fastPathOpt {
		t.Run(fastPathName("cancelled", fp), func(t *testing.T) {
			p := newPlugin(t, nil, snap, fp)
			pod := makePod().Name("in").PodAntiAffinityExists("app", v1.LabelHostname).Obj()
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, st := p.PreFilter(ctx, schedcore.NewCycleState(), pod, snap.List())
			if st.IsSuccess() {
				t.Fatalf("PreFilter on a cancelled context: success, want the context's error")
			}
		})
	}
}
