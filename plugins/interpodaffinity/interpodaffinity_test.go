package interpodaffinity

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestNewArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    runtime.Object
		want    args
		wantErr string
	}{
		{name: "nil args take kube's defaults", args: nil, want: args{hardPodAffinityWeight: 1}},
		{name: "empty args take kube's defaults", args: NewArgs(), want: args{hardPodAffinityWeight: 1}},
		{name: "a zero weight is valid", args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptr.To[int32](0)}, want: args{}},
		{name: "the maximum weight is valid", args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptr.To[int32](100), IgnorePreferredTermsOfExistingPods: true},
			want: args{hardPodAffinityWeight: 100, ignorePreferredTermsOfExistingPods: true}},
		{name: "a weight above 100 is rejected with the field path", args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptr.To[int32](101)},
			wantErr: "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"},
		{name: "a negative weight is rejected with the field path", args: &configv1.InterPodAffinityArgs{HardPodAffinityWeight: ptr.To[int32](-1)},
			wantErr: "hardPodAffinityWeight: Invalid value: -1: not in valid range [0, 100]"},
		{name: "args of another plugin are rejected", args: &configv1.NodeAffinityArgs{},
			wantErr: "want args to be of type InterPodAffinityArgs, got *v1.NodeAffinityArgs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl, err := New(context.Background(), tt.args, schedcore.NewHandle(nil, 1))
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, pl.(*InterPodAffinity).args, cmp.AllowUnexported(args{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewDoesNotModifyTheArgs(t *testing.T) {
	in := &configv1.InterPodAffinityArgs{}
	if _, err := New(context.Background(), in, schedcore.NewHandle(nil, 1)); err != nil {
		t.Fatal(err)
	}
	if in.HardPodAffinityWeight != nil {
		t.Errorf("New set hardPodAffinityWeight on the caller's args")
	}
}

func TestNewTakesTheFastPathGateFromTheHandle(t *testing.T) {
	for _, fp := range fastPathOpt {
		if got := newPlugin(t, nil, schedcore.NewEmptySnapshot(), fp).fastPath; got != fp {
			t.Errorf("fastPath = %v, want %v", got, fp)
		}
	}
	if schedcore.DefaultFeatures.InterPodAffinityHostnameFastPath {
		t.Error("InterPodAffinityHostnameFastPath is alpha and off by default in v1.37.2")
	}
}

func TestEventsToRegister(t *testing.T) {
	p := newPlugin(t, nil, schedcore.NewEmptySnapshot(), false)
	evs, err := p.EventsToRegister(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []schedcore.ClusterEvent
	for _, e := range evs {
		if e.QueueingHintFn == nil {
			t.Errorf("%v has no hint", e.Event)
		}
		got = append(got, e.Event)
	}
	wantEvents := []schedcore.ClusterEvent{
		{Resource: schedcore.AssignedPod, ActionType: schedcore.Add | schedcore.UpdatePodLabel | schedcore.Delete},
		{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodLabel},
		{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeLabel},
	}
	if diff := cmp.Diff(wantEvents, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// Ported from kube's Test_isSchedulableAfterAssignedPodChange.
func TestIsSchedulableAfterAssignedPodChange(t *testing.T) {
	affPod := func() *podWrapper {
		return makePod().UID("p").Name("p").PodAffinityIn("service", "region", []string{"securityscan", "value2"})
	}
	antiPod := func() *podWrapper {
		return makePod().UID("p").Name("p").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"})
	}
	twoAnti := func() *podWrapper {
		return makePod().UID("p").Name("p").PodAntiAffinityIn("service", "region", []string{"securityscan"}).PodAntiAffinityIn("app", "region", []string{"web"})
	}
	other := func() *podWrapper { return makePod().UID("other").Node("fake-node") }
	tests := []struct {
		name           string
		pod            *v1.Pod
		oldPod, newPod *v1.Pod
		want           schedcore.QueueingHint
	}{
		{name: "add a pod which matches the pod affinity", pod: affPod().Obj(), newPod: other().Label("service", "securityscan").Obj(), want: schedcore.Queue},
		{name: "add an un-scheduled pod", pod: affPod().Obj(), newPod: makePod().UID("other").Label("service", "securityscan").Obj(), want: schedcore.QueueSkip},
		{name: "add a pod which doesn't match the pod affinity", pod: affPod().Obj(), newPod: other().Label("aaa", "a").Obj(), want: schedcore.QueueSkip},
		{name: "update a pod from non-match to match pod affinity", pod: affPod().Obj(), newPod: other().Label("service", "securityscan").Obj(), oldPod: other().Label("aaa", "a").Obj(), want: schedcore.Queue},
		{name: "the updating pod matches target pod's affinity both before and after label changes", pod: affPod().Obj(), newPod: other().Label("service", "securityscan").Obj(), oldPod: other().Label("service", "value2").Obj(), want: schedcore.QueueSkip},
		{name: "update an un-scheduled pod", pod: affPod().Obj(), newPod: makePod().UID("other").Label("service", "securityscan").Obj(), oldPod: makePod().UID("other").Label("aaa", "a").Obj(), want: schedcore.QueueSkip},
		{name: "update a pod from match to non-match the pod affinity", pod: affPod().Obj(), newPod: other().Label("aaa", "a").Obj(), oldPod: other().Label("service", "securityscan").Obj(), want: schedcore.QueueSkip},
		{
			name:   "update a pod from match to non-match pod's affinity - multiple terms case",
			pod:    makePod().UID("p").Name("p").PodAffinityExists("aaa", "hostname").PodAffinityExists("bbb", "hostname").Obj(),
			newPod: other().Label("service", "securityscan").Obj(), oldPod: other().Label("aaa", "a").Obj(), want: schedcore.QueueSkip,
		},
		{
			name:   "update a pod from non-match to match pod's affinity - multiple terms case",
			pod:    makePod().UID("p").Name("p").PodAffinityExists("aaa", "hostname").PodAffinityExists("bbb", "hostname").Obj(),
			newPod: other().Label("aaa", "").Label("bbb", "").Obj(), oldPod: other().Label("aaa", "a").Obj(), want: schedcore.Queue,
		},
		{name: "modify pod label to change it from satisfying pod anti-affinity to not satisfying anti-affinity", pod: antiPod().Obj(), newPod: other().Label("service", "aaaa").Obj(), oldPod: other().Label("service", "securityscan").Obj(), want: schedcore.Queue},
		{name: "modify pod label to change it from not satisfying pod anti-affinity to satisfying anti-affinity", pod: antiPod().Obj(), newPod: other().Label("service", "securityscan").Obj(), oldPod: other().Label("service", "bbb").Obj(), want: schedcore.QueueSkip},
		{name: "delete a pod which doesn't match pod's anti-affinity", pod: antiPod().Obj(), oldPod: other().Label("aaa", "a").Obj(), want: schedcore.QueueSkip},
		{name: "delete a pod which matches pod's anti-affinity", pod: antiPod().Obj(), oldPod: other().Label("service", "securityscan").Obj(), want: schedcore.Queue},
		{
			name:   "delete a pod with anti-affinity that matches pending pod",
			pod:    makePod().Name("p").Label("service", "securityscan").Obj(),
			oldPod: makePod().Node("fake-node").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"}).Obj(), want: schedcore.Queue,
		},
		{
			name:   "delete a pod with anti-affinity that doesn't match pending pod",
			pod:    makePod().Name("p").Label("service", "foo").Obj(),
			oldPod: makePod().Node("fake-node").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"}).Obj(), want: schedcore.QueueSkip,
		},
		{
			name:   "delete a pod which doesn't match pending pod's anti-affinity and has anti-affinity that doesn't match pending pod",
			pod:    makePod().Name("p").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"}).Label("service", "foo").Obj(),
			oldPod: makePod().Node("fake-node").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"}).Label("service", "foo").Obj(), want: schedcore.QueueSkip,
		},
		{
			name:   "delete a nominated pod which doesn't match pod's anti-affinity",
			pod:    makePod().Name("p").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"}).Obj(),
			oldPod: makePod().Nominated("fake-node").Label("aaa", "a").Obj(), want: schedcore.QueueSkip,
		},
		{
			name:   "delete a nominated pod which matches pod's anti-affinity",
			pod:    makePod().Name("p").PodAntiAffinityIn("service", "region", []string{"securityscan", "value2"}).Obj(),
			oldPod: makePod().Nominated("fake-node").Label("service", "securityscan").Obj(), want: schedcore.Queue,
		},
		{
			name: "modify pod label to change it from matching only one of target pod's anti-affinity terms to matching none",
			pod:  twoAnti().Obj(), newPod: other().Label("service", "foo").Label("app", "bar").Obj(), oldPod: other().Label("service", "securityscan").Label("app", "bar").Obj(), want: schedcore.Queue,
		},
		{
			name: "modify pod label but it still matches one of target pod's anti-affinity terms",
			pod:  twoAnti().Obj(), newPod: other().Label("service", "foo").Label("app", "web").Obj(), oldPod: other().Label("service", "securityscan").Label("app", "bar").Obj(), want: schedcore.QueueSkip,
		},
		{name: "delete a pod which matches only one of target pod's anti-affinity terms", pod: twoAnti().Obj(), oldPod: other().Label("service", "securityscan").Obj(), want: schedcore.Queue},
		{
			name: "delete a pod with anti-affinity that matches pending pod on only one term",
			pod:  makePod().Name("p").Label("service", "securityscan").Obj(),
			oldPod: makePod().Node("fake-node").UID("other").PodAntiAffinityIn("service", "region", []string{"securityscan"}).
				PodAntiAffinityIn("app", "region", []string{"web"}).Obj(),
			want: schedcore.Queue,
		},
	}
	p := newPlugin(t, nil, schedcore.NewEmptySnapshot(), false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := p.isSchedulableAfterAssignedPodChange(logr.Discard(), tt.pod, tt.oldPod, tt.newPod)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsSchedulableAfterAssignedPodChangeWithWrongTypeIsAnError(t *testing.T) {
	p := newPlugin(t, nil, schedcore.NewEmptySnapshot(), false)
	got, err := p.isSchedulableAfterAssignedPodChange(logr.Discard(), makePod().Obj(), nil, &v1.Node{})
	if err == nil || got != schedcore.Queue {
		t.Errorf("got (%v, %v), want (Queue, an error)", got, err)
	}
}

// Ported from kube's Test_isSchedulableAfterTargetPodUpdateLabel.
func TestIsSchedulableAfterTargetPodUpdateLabel(t *testing.T) {
	p := newPlugin(t, nil, schedcore.NewEmptySnapshot(), false)
	pod := makePod().UID("p").Name("p").Label("foo", "baz").Obj()
	got, err := p.isSchedulableAfterTargetPodUpdateLabel(logr.Discard(), pod, pod.DeepCopy(), pod.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	if got != schedcore.Queue {
		t.Errorf("got %v, want Queue", got)
	}
}

// Ported from kube's Test_isSchedulableAfterNodeChange.
func TestIsSchedulableAfterNodeChange(t *testing.T) {
	affPod := func(topologyKey string) *v1.Pod {
		return makePod().Name("p").PodAffinityIn("service", topologyKey, []string{"securityscan", "value2"}).Obj()
	}
	antiPod := makePod().Name("p").PodAntiAffinity("zone", &metav1.LabelSelector{MatchLabels: map[string]string{"another": "label"}}).Obj()
	mk := func(labels ...string) *v1.Node {
		m := map[string]string{}
		for i := 0; i+1 < len(labels); i += 2 {
			m[labels[i]] = labels[i+1]
		}
		return node("node-a", m)
	}
	tests := []struct {
		name             string
		pod              *v1.Pod
		oldNode, newNode *v1.Node
		want             schedcore.QueueingHint
	}{
		{name: "add a new node with matched pod affinity topologyKey", pod: affPod("zone"), newNode: mk("zone", "zone1"), want: schedcore.Queue},
		{name: "add a new node without matched topologyKey", pod: affPod("region"), newNode: mk("zone", "zone1"), want: schedcore.QueueSkip},
		{name: "update node label but not topologyKey", pod: affPod("zone"), oldNode: mk("aaa", "a"), newNode: mk("aaa", "b"), want: schedcore.QueueSkip},
		{name: "update node label that isn't related to the pod affinity", pod: affPod("zone"), oldNode: mk("zone", "zone1"), newNode: mk("zone", "zone1", "unrelated-label", "unrelated"), want: schedcore.QueueSkip},
		{name: "update node with different affinity topologyKey value", pod: affPod("zone"), oldNode: mk("zone", "zone1"), newNode: mk("zone", "zone2"), want: schedcore.Queue},
		{name: "update node to have the affinity topology label", pod: affPod("zone"), oldNode: mk("aaa", "a"), newNode: mk("zone", "zone1"), want: schedcore.Queue},
		{name: "add a new node with matched pod anti-affinity topologyKey", pod: antiPod, newNode: mk("zone", "zone1"), want: schedcore.Queue},
		{name: "add a new node without matched pod anti-affinity topologyKey", pod: antiPod, newNode: mk(), want: schedcore.Queue},
		{name: "update node label that isn't related to the pod anti-affinity", pod: antiPod, oldNode: mk("zone", "zone1"), newNode: mk("zone", "zone1", "unrelated-label", "unrelated"), want: schedcore.QueueSkip},
		{name: "update node with different anti-affinity topologyKey value", pod: antiPod, oldNode: mk("zone", "zone1"), newNode: mk("zone", "zone2"), want: schedcore.Queue},
		{name: "update node to have the anti-affinity topology label", pod: antiPod, oldNode: mk("aaa", "a"), newNode: mk("zone", "zone1"), want: schedcore.QueueSkip},
		{name: "update node label not to have anti-affinity topology label", pod: antiPod, oldNode: mk("zone", "zone1"), newNode: mk("aaa", "a"), want: schedcore.Queue},
	}
	p := newPlugin(t, nil, schedcore.NewEmptySnapshot(), false)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var oldObj, newObj any
			if tt.oldNode != nil {
				oldObj = tt.oldNode
			}
			newObj = tt.newNode
			got, err := p.isSchedulableAfterNodeChange(logr.Discard(), tt.pod, oldObj, newObj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
