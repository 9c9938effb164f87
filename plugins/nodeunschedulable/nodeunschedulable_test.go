package nodeunschedulable

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func newPlugin(t *testing.T) *NodeUnschedulable {
	t.Helper()
	p, err := New(context.Background(), nil, schedcore.NewHandle(nil, 0))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p.(*NodeUnschedulable)
}

func node(unschedulable bool, taints ...v1.Taint) *v1.Node {
	n := schedtest.MakeNode("n").Obj()
	n.Spec.Unschedulable = unschedulable
	n.Spec.Taints = taints
	return n
}

func podWithTolerations(tols ...v1.Toleration) *v1.Pod {
	p := schedtest.MakePod("p").Obj()
	p.Spec.Tolerations = tols
	return p
}

func TestFilter(t *testing.T) {
	unschedulable := schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, ErrReasonUnschedulable)
	tests := []struct {
		name string
		pod  *v1.Pod
		node *v1.Node
		want *schedcore.Status
	}{
		{name: "a cordoned node rejects a pod without tolerations", pod: podWithTolerations(), node: node(true), want: unschedulable},
		{name: "a schedulable node takes any pod", pod: podWithTolerations(), node: node(false)},
		{
			name: "a cordoned node takes a pod tolerating the unschedulable taint",
			pod:  podWithTolerations(v1.Toleration{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}),
			node: node(true),
		},
		{
			name: "a toleration of the key with any effect tolerates it",
			pod:  podWithTolerations(v1.Toleration{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists}),
			node: node(true),
		},
		{
			name: "a wildcard Exists toleration tolerates it",
			pod:  podWithTolerations(v1.Toleration{Operator: v1.TolerationOpExists}),
			node: node(true),
		},
		{
			name: "a toleration with another effect does not tolerate it",
			pod:  podWithTolerations(v1.Toleration{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoExecute}),
			node: node(true),
			want: unschedulable,
		},
		{
			name: "a toleration of an unrelated key does not tolerate it",
			pod:  podWithTolerations(v1.Toleration{Key: "foo", Operator: v1.TolerationOpExists}),
			node: node(true),
			want: unschedulable,
		},
	}
	pl := newPlugin(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			state := schedcore.NewCycleState()
			if _, s := pl.PreFilter(context.Background(), state, tc.pod, nil); !s.IsSuccess() {
				t.Fatalf("PreFilter: %v", s)
			}
			ni := schedcore.NewNodeInfo()
			ni.SetNode(tc.node)
			got := pl.Filter(context.Background(), state, tc.pod, ni)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Filter (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEventsToRegister(t *testing.T) {
	events, err := newPlugin(t).EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []schedcore.ClusterEvent
	for _, e := range events {
		if e.QueueingHintFn == nil {
			t.Errorf("event %v has no hint", e.Event.Label())
		}
		got = append(got, e.Event)
	}
	want := []schedcore.ClusterEvent{
		{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeTaint},
		{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodToleration},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestIsSchedulableAfterNodeChange(t *testing.T) {
	notReady := v1.Taint{Key: v1.TaintNodeNotReady, Effect: v1.TaintEffectNoExecute}
	tests := []struct {
		name           string
		oldObj, newObj any
		want           schedcore.QueueingHint
		wantErr        bool
	}{
		{name: "a new object that is not a node queues with an error", newObj: "not-a-node", want: schedcore.Queue, wantErr: true},
		{name: "an old object that is not a node queues with an error", oldObj: "not-a-node", newObj: node(true), want: schedcore.Queue, wantErr: true},
		{name: "an added cordoned node is skipped", newObj: node(true), want: schedcore.QueueSkip},
		{name: "an added schedulable node queues", newObj: node(false), want: schedcore.Queue},
		{name: "a taint change on a node that stays cordoned is skipped", oldObj: node(true, notReady), newObj: node(true), want: schedcore.QueueSkip},
		{name: "a taint change on a node that stays schedulable is skipped", oldObj: node(false, notReady), newObj: node(false), want: schedcore.QueueSkip},
		{name: "a node uncordoned queues", oldObj: node(true), newObj: node(false), want: schedcore.Queue},
		{name: "a node cordoned is skipped", oldObj: node(false), newObj: node(true), want: schedcore.QueueSkip},
	}
	pl := newPlugin(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pl.isSchedulableAfterNodeChange(logr.Discard(), podWithTolerations(), tc.oldObj, tc.newObj)
			if (err != nil) != tc.wantErr {
				t.Errorf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestIsSchedulableAfterTargetPodTolerationChange(t *testing.T) {
	tests := []struct {
		name           string
		oldObj, newObj any
		want           schedcore.QueueingHint
		wantErr        bool
	}{
		{name: "a new object that is not a pod queues with an error", newObj: "not-a-pod", want: schedcore.Queue, wantErr: true},
		{name: "an old object that is not a pod queues with an error", oldObj: "not-a-pod", newObj: podWithTolerations(), want: schedcore.Queue, wantErr: true},
		{
			name:   "the pod gaining the unschedulable toleration queues",
			oldObj: podWithTolerations(),
			newObj: podWithTolerations(v1.Toleration{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule}),
			want:   schedcore.Queue,
		},
		{
			name:   "the pod gaining an unrelated toleration is skipped",
			oldObj: podWithTolerations(),
			newObj: podWithTolerations(v1.Toleration{Key: "foo", Effect: v1.TaintEffectNoSchedule}),
			want:   schedcore.QueueSkip,
		},
	}
	pl := newPlugin(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := pl.isSchedulableAfterTargetPodTolerationChange(logr.Discard(), podWithTolerations(), tc.oldObj, tc.newObj)
			if (err != nil) != tc.wantErr {
				t.Errorf("error = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}
