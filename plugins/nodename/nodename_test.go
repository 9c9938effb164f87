package nodename

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func newPlugin(t *testing.T) *NodeName {
	t.Helper()
	p, err := New(context.Background(), nil, schedcore.NewHandle(nil, 0))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*NodeName)
}

func TestFilter(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		node *v1.Node
		want *schedcore.Status
	}{
		{name: "a pod without nodeName fits any node", pod: &v1.Pod{}, node: &v1.Node{}},
		{name: "a pod naming the node fits", pod: schedtest.MakePod("p").Node("foo").Obj(), node: schedtest.MakeNode("foo").Obj()},
		{
			name: "a pod naming another node does not fit",
			pod:  schedtest.MakePod("p").Node("bar").Obj(),
			node: schedtest.MakeNode("foo").Obj(),
			want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReason),
		},
	}
	pl := newPlugin(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ni := schedcore.NewNodeInfo()
			ni.SetNode(tc.node)
			got := pl.Filter(context.Background(), schedcore.NewCycleState(), tc.pod, ni)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPreFilter(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		want *schedcore.PreFilterResult
	}{
		{name: "a pod with nodeName is restricted to that node", pod: schedtest.MakePod("p").Node("foo").Obj(), want: &schedcore.PreFilterResult{NodeNames: sets.New("foo")}},
		{name: "a pod without nodeName is not restricted", pod: schedtest.MakePod("p").Obj()},
	}
	pl := newPlugin(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, s := pl.PreFilter(context.Background(), schedcore.NewCycleState(), tc.pod, nil)
			if !s.IsSuccess() {
				t.Errorf("status = %v, want success", s)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	got, err := newPlugin(t).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []schedcore.ClusterEventWithHint{{Event: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Add}}}
	if len(got) != 1 || got[0].Event != want[0].Event || got[0].QueueingHintFn != nil {
		t.Errorf("events = %+v, want %+v", got, want)
	}
}

// PassesEveryNode holds only when Filter passes whatever the node: for a
// pod naming a node it is false (Filter rejects the others).
func TestPassesEveryNode(t *testing.T) {
	pl := newPlugin(t)
	nodes := []*v1.Node{schedtest.MakeNode("foo").Obj(), schedtest.MakeNode("bar").Obj(), {}}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		want bool
	}{
		{name: "without nodeName", pod: schedtest.MakePod("p").Obj(), want: true},
		{name: "naming a node", pod: schedtest.MakePod("p").Node("foo").Obj()},
		{name: "naming a missing node", pod: schedtest.MakePod("p").Node("baz").Obj()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pl.PassesEveryNode(tc.pod)
			if got != tc.want {
				t.Errorf("PassesEveryNode = %v, want %v", got, tc.want)
			}
			every := true
			for _, n := range nodes {
				ni := schedcore.NewNodeInfo()
				ni.SetNode(n)
				every = every && pl.Filter(context.Background(), schedcore.NewCycleState(), tc.pod, ni).IsSuccess()
			}
			if got && !every {
				t.Errorf("PassesEveryNode, but Filter rejects a node")
			}
		})
	}
}
