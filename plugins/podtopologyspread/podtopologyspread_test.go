package podtopologyspread

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func TestEventsToRegister(t *testing.T) {
	p, _ := newPlugin(t, listArgs(), nil, nil, nil)
	got, err := p.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var events []schedcore.ClusterEvent
	for _, e := range got {
		if e.QueueingHintFn == nil {
			t.Errorf("event %v has no hint", e.Event)
		}
		events = append(events, e.Event)
	}
	want := []schedcore.ClusterEvent{
		{Resource: schedcore.AssignedPod, ActionType: schedcore.Add | schedcore.UpdatePodLabel | schedcore.Delete},
		{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodToleration | schedcore.UpdatePodLabel},
		{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.Delete | schedcore.UpdateNodeLabel | schedcore.UpdateNodeTaint},
	}
	if diff := cmp.Diff(want, events); diff != "" {
		t.Errorf("EventsToRegister (-want +got):\n%s", diff)
	}
}

func TestIsSchedulableAfterNodeChange(t *testing.T) {
	zone := func() *v1.Pod { return mkPod("p").spread(1, "zone", dns, fooSelector).obj() }
	zoneNode := func() *v1.Pod {
		return mkPod("p").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, fooSelector).obj()
	}
	taint := func(key string) v1.Taint { return v1.Taint{Key: key, Value: "bbb", Effect: v1.TaintEffectNoSchedule} }
	tests := []struct {
		name             string
		pod              *v1.Pod
		oldNode, newNode any
		sel              *schedcore.SelectorSources
		want             schedcore.QueueingHint
		wantErr          bool
	}{
		{name: "a node changing its topology value queues", pod: zone(), oldNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1").Obj(), newNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone2").Obj(), want: schedcore.Queue},
		{name: "a node without the keys changing another label skips", pod: zone(), oldNode: schedtest.MakeNode("node-a").OnlyLabels("foo", "bar1").Obj(), newNode: schedtest.MakeNode("node-a").OnlyLabels("foo", "bar2").Obj(), want: schedcore.QueueSkip},
		{
			name: "a node with the keys losing another label skips", pod: zoneNode(),
			oldNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node1", "foo", "bar").Obj(), newNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node1").Obj(),
			want: schedcore.QueueSkip,
		},
		{name: "a created node without the keys skips", pod: zone(), newNode: schedtest.MakeNode("node-a").OnlyLabels("foo", "bar").Obj(), want: schedcore.QueueSkip},
		{name: "a created node with the keys queues", pod: zone(), newNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1").Obj(), want: schedcore.Queue},
		{name: "a deleted node without the keys skips", pod: zone(), oldNode: schedtest.MakeNode("node-a").OnlyLabels("foo", "bar").Obj(), want: schedcore.QueueSkip},
		{name: "a deleted node with the keys queues", pod: zone(), oldNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1").Obj(), want: schedcore.Queue},
		{name: "a created node with only one of the keys skips", pod: zoneNode(), newNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1").Obj(), want: schedcore.QueueSkip},
		{name: "a created node with all keys queues", pod: zoneNode(), newNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node1").Obj(), want: schedcore.Queue},
		{name: "an unchanged node with only one key skips", pod: zoneNode(), oldNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1").Obj(), newNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1").Obj(), want: schedcore.QueueSkip},
		{
			name: "a node with all keys changing one value queues", pod: zoneNode(),
			oldNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node1").Obj(), newNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node2").Obj(),
			want: schedcore.Queue,
		},
		{
			name: "a node gaining the missing key queues", pod: zoneNode(),
			oldNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1").Obj(), newNode: schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node1").Obj(),
			want: schedcore.Queue,
		},
		{
			name: "a node with all keys changing taints queues", pod: zoneNode(),
			oldNode: tainted(schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node1").Obj(), taint("aaa")), newNode: tainted(schedtest.MakeNode("node-a").OnlyLabels("zone", "zone1", "node", "node1").Obj(), taint("ccc")),
			want: schedcore.Queue,
		},
		{
			name: "a node with one key changing taints skips", pod: zoneNode(),
			oldNode: tainted(schedtest.MakeNode("node-a").OnlyLabels("node", "node1").Obj(), taint("aaa")), newNode: tainted(schedtest.MakeNode("node-a").OnlyLabels("node", "node1").Obj(), taint("ccc")),
			want: schedcore.QueueSkip,
		},
		{
			name: "default constraints apply to a pod without its own", pod: mkPod("p", "app", "web").obj(),
			sel:     &schedcore.SelectorSources{Services: []*v1.Service{service("default", "app", "web")}},
			newNode: schedtest.MakeNode("node-a").OnlyLabels(v1.LabelHostname, "node-a").Obj(), want: schedcore.Queue,
		},
		{name: "an object that is not a node is an error", pod: zone(), newNode: &v1.Pod{}, want: schedcore.Queue, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A List default on hostname for the defaulted case; it has no
			// effect on pods with constraints.
			p, _ := newPlugin(t, listArgs(tsc(1, v1.LabelHostname, dns, nil)), nil, nil, tt.sel)
			got, err := p.isSchedulableAfterNodeChange(logr.Discard(), tt.pod, tt.oldNode, tt.newNode)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsSchedulableAfterAssignedPodChange(t *testing.T) {
	zone := func() *v1.Pod { return mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).obj() }
	zoneNode := func() *v1.Pod {
		return mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector).spread(1, "node", dns, barSelector).obj()
	}
	bound := func(name string, kv ...string) *v1.Pod {
		return schedtest.MakePod(name).Node("fake-node").Label(kv...).Obj()
	}
	nominated := func(name string, kv ...string) *v1.Pod {
		p := mkPod(name, kv...).obj()
		p.Status.NominatedNodeName = "fake-node"
		return p
	}
	unbound := func(name string, kv ...string) *v1.Pod { return mkPod(name, kv...).obj() }
	tests := []struct {
		name           string
		pod            *v1.Pod
		oldPod, newPod any
		want           schedcore.QueueingHint
		wantErr        bool
	}{
		{name: "an added pod matching the selector queues", pod: zone(), newPod: bound("p2", "foo", ""), want: schedcore.Queue},
		{name: "an added unscheduled pod skips", pod: zone(), newPod: unbound("p2", "foo", ""), want: schedcore.QueueSkip},
		{name: "an updated unscheduled pod skips", pod: zone(), oldPod: unbound("p2", "bar", ""), newPod: unbound("p2", "foo", ""), want: schedcore.QueueSkip},
		{name: "a deleted unscheduled pod skips", pod: zone(), oldPod: unbound("p2", "foo", ""), want: schedcore.QueueSkip},
		{name: "an added pod of another namespace skips", pod: zone(), newPod: schedtest.MakePod("p2").Namespace("fake-namespace").Node("fake-node").Label("foo", "").Obj(), want: schedcore.QueueSkip},
		{name: "an added pod not matching the selector skips", pod: zone(), newPod: bound("p2", "bar", ""), want: schedcore.QueueSkip},
		{name: "a deleted pod matching the selector queues", pod: zone(), oldPod: bound("p2", "foo", ""), want: schedcore.Queue},
		{name: "a deleted nominated pod not matching the selector skips", pod: zone(), oldPod: nominated("p2", "bar", ""), want: schedcore.QueueSkip},
		{name: "a deleted nominated pod matching the selector queues", pod: zone(), oldPod: nominated("p2", "foo", ""), want: schedcore.Queue},
		{name: "a deleted pod not matching the selector skips", pod: zone(), oldPod: bound("p2", "bar", ""), want: schedcore.QueueSkip},
		{name: "a change of an unrelated label skips", pod: zone(), oldPod: bound("p2", "foo", "", "bar", "bar1"), newPod: bound("p2", "foo", "", "bar", "bar2"), want: schedcore.QueueSkip},
		{name: "gaining a label the selector matches queues", pod: zone(), oldPod: bound("p2"), newPod: bound("p2", "foo", ""), want: schedcore.Queue},
		{name: "losing a label the selector matches queues", pod: zone(), oldPod: bound("p2", "foo", ""), newPod: bound("p2"), want: schedcore.Queue},
		{name: "changing the value of a matched label that still matches skips", pod: zone(), oldPod: bound("p2", "foo", "foo1"), newPod: bound("p2", "foo", "foo2"), want: schedcore.QueueSkip},
		{name: "gaining a label the second constraint matches queues", pod: zoneNode(), oldPod: bound("p2", "foo", ""), newPod: bound("p2", "foo", "", "bar", "bar2"), want: schedcore.Queue},
		{name: "gaining a label no constraint matches skips", pod: zoneNode(), oldPod: bound("p2", "foo", ""), newPod: bound("p2", "foo", "", "baz", ""), want: schedcore.QueueSkip},
		{name: "changing a matched label that still matches both skips", pod: zoneNode(), oldPod: bound("p2", "foo", "", "bar", ""), newPod: bound("p2", "foo", "", "bar", "bar2"), want: schedcore.QueueSkip},
		{name: "an object that is not a pod is an error", pod: zone(), newPod: &v1.Node{}, want: schedcore.Queue, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPlugin(t, listArgs(), nil, nil, nil)
			got, err := p.isSchedulableAfterAssignedPodChange(logr.Discard(), tt.pod, tt.oldPod, tt.newPod)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, wantErr %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsSchedulableAfterTargetPodChange(t *testing.T) {
	withPolicy := func(p v1.NodeInclusionPolicy) *v1.Pod {
		return mkPod("p", "foo", "").spread(1, "zone", dns, fooSelector, taintsPolicy(p)).spread(1, "node", dns, barSelector).obj()
	}
	tests := []struct {
		name           string
		pod            *v1.Pod
		oldPod, newPod *v1.Pod
		want           schedcore.QueueingHint
	}{
		{
			name: "a new toleration queues when a constraint honors taints", pod: withPolicy(honor),
			oldPod: mkPod("p", "foo", "").obj(), newPod: mkPod("p", "foo", "").tolerate(v1.TaintNodeUnschedulable).obj(),
			want: schedcore.Queue,
		},
		{
			name: "a new toleration skips when no constraint honors taints", pod: withPolicy(ignore),
			oldPod: mkPod("p", "foo", "").obj(), newPod: mkPod("p", "foo", "").tolerate(v1.TaintNodeUnschedulable).obj(),
			want: schedcore.QueueSkip,
		},
		{
			name: "a new label a selector matches queues", pod: withPolicy(ignore),
			oldPod: mkPod("p").obj(), newPod: mkPod("p", "foo", "").obj(),
			want: schedcore.Queue,
		},
		{
			name: "a new unrelated label skips", pod: withPolicy(ignore),
			oldPod: mkPod("p").obj(), newPod: mkPod("p", "unrelated", "").obj(),
			want: schedcore.QueueSkip,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _ := newPlugin(t, listArgs(), nil, nil, nil)
			got, err := p.isSchedulableAfterTargetPodChange(logr.Discard(), tt.pod, tt.oldPod, tt.newPod)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("hint = %v, want %v", got, tt.want)
			}
		})
	}
}
