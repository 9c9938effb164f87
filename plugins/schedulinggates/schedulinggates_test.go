package schedulinggates

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func newPlugin(t *testing.T) *SchedulingGates {
	t.Helper()
	p, err := New(context.Background(), nil, schedcore.NewHandle(nil, 0))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*SchedulingGates)
}

func TestPreEnqueue(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		want *schedcore.Status
	}{
		{name: "a pod without gates is enqueued", pod: schedtest.MakePod("p").Obj()},
		{
			name: "a pod with one gate waits for it",
			pod:  schedtest.MakePod("p").SchedulingGates("foo").Obj(),
			want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "waiting for scheduling gates: [foo]"),
		},
		{
			name: "a pod with several gates lists them in order",
			pod:  schedtest.MakePod("p").SchedulingGates("foo", "bar").Obj(),
			want: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "waiting for scheduling gates: [foo bar]"),
		},
	}
	pl := newPlugin(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := pl.PreEnqueue(context.Background(), tc.pod)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PreEnqueue (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	pl := newPlugin(t)
	events, err := pl.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := schedcore.ClusterEvent{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodSchedulingGatesEliminated}
	if len(events) != 1 || events[0].Event != want || events[0].QueueingHintFn == nil {
		t.Fatalf("events = %+v, want %+v with a hint", events, want)
	}
	old := schedtest.MakePod("p").SchedulingGates("foo").Obj()
	updated := schedtest.MakePod("p").Obj()
	if h, err := events[0].QueueingHintFn(logr.Discard(), updated, old, updated); err != nil || h != schedcore.Queue {
		t.Errorf("hint = %v, %v; want Queue, nil", h, err)
	}
}
