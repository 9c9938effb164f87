package noderesources

import (
	"context"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestEventsToRegister(t *testing.T) {
	tests := []struct {
		name    string
		ippvs   bool
		want    []schedcore.ClusterEvent
		hintsOn bool
	}{
		{
			name:  "with InPlacePodVerticalScaling the scale-down events are registered",
			ippvs: true,
			want: []schedcore.ClusterEvent{
				{Resource: schedcore.AssignedPod, ActionType: schedcore.Delete},
				{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeAllocatable},
				{Resource: schedcore.AssignedPod, ActionType: schedcore.UpdatePodScaleDown},
				{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodScaleDown},
			},
		},
		{
			name: "without it only pod deletion and node changes are",
			want: []schedcore.ClusterEvent{
				{Resource: schedcore.AssignedPod, ActionType: schedcore.Delete},
				{Resource: schedcore.Node, ActionType: schedcore.Add | schedcore.UpdateNodeAllocatable},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := schedcore.DefaultFeatures
			f.InPlacePodVerticalScaling = tc.ippvs
			h := schedcore.NewHandle(nil, 1, schedcore.WithFeatures(f))
			p, err := NewFit(context.Background(), nil, h)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := p.(*Fit).EventsToRegister(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var got []schedcore.ClusterEvent
			for _, e := range evs {
				if e.QueueingHintFn == nil {
					t.Errorf("event %v has no queueing hint", e.Event)
				}
				got = append(got, e.Event)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

type hintCase struct {
	pod            *v1.Pod
	oldObj, newObj any
	want           schedcore.QueueingHint
	wantErr        bool
}

func runHints(t *testing.T, cases map[string]hintCase, fn func(*Fit) schedcore.QueueingHintFn) {
	t.Helper()
	pl := newFit(t, nil)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := fn(pl)(logr.Discard(), tc.pod, tc.oldObj, tc.newObj)
			if tc.wantErr {
				if err == nil {
					t.Fatal("expected an error")
				}
				if got != schedcore.Queue {
					t.Errorf("hint with an error = %v, want Queue", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got != tc.want {
				t.Errorf("hint = %v, want %v", got, tc.want)
			}
		})
	}
}

func onNode(p *v1.Pod, node string) *v1.Pod { p.Spec.NodeName = node; return p }

func TestIsSchedulableAfterAssignedPodDelete(t *testing.T) {
	nominated := podReq("", rl("cpu", "2"))
	nominated.Status.NominatedNodeName = "fake"
	runHints(t, map[string]hintCase{
		"backoff-wrong-old-object":              {pod: &v1.Pod{}, oldObj: "not-a-pod", wantErr: true},
		"queue-on-other-pod-deleted":            {pod: podReq("", rl("cpu", "1")), oldObj: podReq("fake", rl("cpu", "1")), want: schedcore.Queue},
		"skip-queue-on-unscheduled-pod-deleted": {pod: &v1.Pod{}, oldObj: &v1.Pod{}, want: schedcore.QueueSkip},
		"queue-on-nominated-pod-deleted":        {pod: podReq("", rl("cpu", "1")), oldObj: nominated, want: schedcore.Queue},
	}, func(pl *Fit) schedcore.QueueingHintFn { return pl.isSchedulableAfterAssignedPodDelete })
}

func TestIsSchedulableAfterTargetPodScaleDown(t *testing.T) {
	runHints(t, map[string]hintCase{
		"queue-on-target-pod-some-resource-scale-down":           {pod: podReq("", rl("cpu", "1")), want: schedcore.Queue},
		"queue-on-target-pod-some-pod-level-resource-scale-down": {pod: withPodRequests(podReq(""), rl("cpu", "1")), want: schedcore.Queue},
	}, func(pl *Fit) schedcore.QueueingHintFn { return pl.isSchedulableAfterTargetPodScaleDown })
}

func TestIsSchedulableAfterAssignedPodScaleDown(t *testing.T) {
	plr := func(node string, kv ...string) *v1.Pod { return withPodRequests(podReq(node), rl(kv...)) }
	resized := func(specCPU, statusCPU string) *v1.Pod {
		p := podReq("fake", rl("cpu", specCPU))
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c0", Resources: &v1.ResourceRequirements{Requests: rl("cpu", statusCPU)}}}
		return p
	}
	runHints(t, map[string]hintCase{
		"backoff-wrong-old-object":            {pod: &v1.Pod{}, oldObj: "not-a-pod", wantErr: true},
		"backoff-wrong-new-object":            {pod: &v1.Pod{}, newObj: "not-a-pod", wantErr: true},
		"skip-queue-on-other-unscheduled-pod": {pod: podReq("", rl("cpu", "1")), oldObj: podReq("", rl("cpu", "2")), newObj: podReq("", rl("cpu", "1")), want: schedcore.QueueSkip},
		"skip-queue-on-other-pod-unrelated-resource-scaled-down": {
			pod: podReq("", rl("cpu", "1")), oldObj: podReq("fake", rl("memory", "2")), newObj: podReq("fake", rl("memory", "1")), want: schedcore.QueueSkip,
		},
		"skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down": {
			pod: plr("", "cpu", "1"), oldObj: plr("fake", "memory", "2"), newObj: plr("fake", "memory", "1"), want: schedcore.QueueSkip,
		},
		"queue-on-other-pod-some-resource-scale-down": {
			pod: podReq("", rl("cpu", "1")), oldObj: podReq("fake", rl("cpu", "2")), newObj: podReq("fake", rl("cpu", "1")), want: schedcore.Queue,
		},
		"queue-on-other-pod-some-pod-level-resource-scale-down": {
			pod: plr("", "cpu", "1"), oldObj: plr("fake", "cpu", "2"), newObj: plr("fake", "cpu", "1"), want: schedcore.Queue,
		},
		"queue-on-other-pod-extended-resource-scale-down": {
			pod: podReq("", rl("example.com/aaa", "1")), oldObj: podReq("fake", rl("example.com/aaa", "2")), newObj: podReq("fake", rl("example.com/aaa", "1")), want: schedcore.Queue,
		},
		"skip-queue-when-the-spec-shrinks-but-the-actuated-resources-still-count": {
			pod: podReq("", rl("cpu", "1")), oldObj: resized("2", "2"), newObj: resized("1", "2"), want: schedcore.QueueSkip,
		},
		"queue-when-the-actuated-resources-shrink": {
			pod: podReq("", rl("cpu", "1")), oldObj: resized("1", "2"), newObj: resized("1", "1"), want: schedcore.Queue,
		},
	}, func(pl *Fit) schedcore.QueueingHintFn { return pl.isSchedulableAfterAssignedPodScaleDown })
}

func TestIsSchedulableAfterNodeChange(t *testing.T) {
	memAndA := resourcePod(res{mem: 2, scalars: map[v1.ResourceName]int64{extendedResourceA: 1}})
	runHints(t, map[string]hintCase{
		"backoff-wrong-new-object": {pod: &v1.Pod{}, newObj: "not-a-node", wantErr: true},
		"backoff-wrong-old-object": {pod: &v1.Pod{}, oldObj: "not-a-node", newObj: &v1.Node{}, wantErr: true},
		"skip-queue-on-node-add-without-sufficient-resources": {
			pod: resourcePod(res{mem: 2}), newObj: nodeWith("n", "memory", "1"), want: schedcore.QueueSkip,
		},
		"skip-queue-on-node-add-without-required-resource-type": {
			pod:    resourcePod(res{scalars: map[v1.ResourceName]int64{extendedResourceA: 1}}),
			newObj: nodeWith("n", "example.com/bbb", "1"), want: schedcore.QueueSkip,
		},
		"queue-on-node-add-with-sufficient-resources": {
			pod: memAndA, newObj: nodeWith("n", "memory", "4", "example.com/aaa", "2"), want: schedcore.Queue,
		},
		"skip-queue-on-node-unrelated-changes": {
			pod:    memAndA,
			oldObj: nodeWith("n", "memory", "2", "example.com/aaa", "2"),
			newObj: nodeWith("n", "memory", "2", "example.com/aaa", "1", "example.com/bbb", "2"),
			want:   schedcore.QueueSkip,
		},
		"queue-on-pod-requested-resources-increase": {
			pod:    memAndA,
			oldObj: nodeWith("n", "memory", "2", "example.com/aaa", "1"),
			newObj: nodeWith("n", "memory", "2", "example.com/aaa", "2"),
			want:   schedcore.Queue,
		},
		"skip-queue-on-node-changes-from-suitable-to-unsuitable": {
			pod:    memAndA,
			oldObj: nodeWith("n", "memory", "4", "example.com/aaa", "2"),
			newObj: nodeWith("n", "memory", "1", "example.com/aaa", "2"),
			want:   schedcore.QueueSkip,
		},
		"queue-on-node-changes-from-unsuitable-to-suitable": {
			pod:    memAndA,
			oldObj: nodeWith("n", "memory", "1", "example.com/aaa", "2"),
			newObj: nodeWith("n", "memory", "4", "example.com/aaa", "2"),
			want:   schedcore.Queue,
		},
		"skip-queue-on-node-add-when-only-an-ignored-resource-is-missing-as-kube-does": {
			pod:    resourcePod(res{scalars: map[v1.ResourceName]int64{extendedResourceB: 1}}),
			newObj: nodeWith("n"),
			want:   schedcore.QueueSkip,
		},
	}, func(pl *Fit) schedcore.QueueingHintFn { return pl.isSchedulableAfterNodeChange })
}

func TestHaveAnyRequestedResourcesIncreased(t *testing.T) {
	tests := map[string]struct {
		pod              *v1.Pod
		original, modify *v1.Node
		want             bool
	}{
		"no-requested-resources": {
			pod:      resourcePod(res{}),
			original: nodeWith("n", "pods", "1", "cpu", "1", "memory", "1", "ephemeral-storage", "1", "example.com/aaa", "1"),
			modify:   nodeWith("n", "pods", "1", "cpu", "2", "memory", "2", "ephemeral-storage", "2", "example.com/aaa", "2"),
		},
		"no-requested-resources-pods-increased": {
			pod:      resourcePod(res{}),
			original: nodeWith("n", "pods", "1", "cpu", "1", "memory", "1", "ephemeral-storage", "1", "example.com/aaa", "1"),
			modify:   nodeWith("n", "pods", "2", "cpu", "1", "memory", "1", "ephemeral-storage", "1", "example.com/aaa", "1"),
			want:     true,
		},
		"scalar-resources-not-in-node": {
			pod:      resourcePod(res{cpu: 2, mem: 2, eph: 2, scalars: map[v1.ResourceName]int64{extendedResourceA: 2}}),
			original: nodeWith("n", "cpu", "1", "memory", "2", "ephemeral-storage", "3"),
			modify:   nodeWith("n", "cpu", "1", "memory", "2", "ephemeral-storage", "1"),
		},
		"requested-resources-decreased": {
			pod:      resourcePod(res{cpu: 2, mem: 2, eph: 2, scalars: map[v1.ResourceName]int64{extendedResourceA: 2}}),
			original: nodeWith("n", "cpu", "1", "memory", "2", "ephemeral-storage", "3", "example.com/aaa", "4"),
			modify:   nodeWith("n", "cpu", "1", "memory", "2", "ephemeral-storage", "1", "example.com/aaa", "1"),
		},
		"requested-resources-increased": {
			pod:      resourcePod(res{cpu: 2, mem: 2, eph: 2, scalars: map[v1.ResourceName]int64{extendedResourceA: 2}}),
			original: nodeWith("n", "cpu", "1", "memory", "2", "ephemeral-storage", "3", "example.com/aaa", "4"),
			modify:   nodeWith("n", "cpu", "3", "memory", "4", "ephemeral-storage", "3", "example.com/aaa", "4"),
			want:     true,
		},
		"requested-scalar-resource-increased": {
			pod:      resourcePod(res{scalars: map[v1.ResourceName]int64{extendedResourceA: 2}}),
			original: nodeWith("n", "example.com/aaa", "1"),
			modify:   nodeWith("n", "example.com/aaa", "2"),
			want:     true,
		},
		"non-requested-resources-decreased": {
			pod:      resourcePod(res{cpu: 2, mem: 2}),
			original: nodeWith("n", "cpu", "1", "memory", "2", "ephemeral-storage", "3", "example.com/aaa", "4"),
			modify:   nodeWith("n", "cpu", "1", "memory", "2", "ephemeral-storage", "1", "example.com/aaa", "1"),
		},
		"non-requested-resources-increased": {
			pod:      resourcePod(res{cpu: 2, mem: 2}),
			original: nodeWith("n", "cpu", "1", "memory", "2", "ephemeral-storage", "3", "example.com/aaa", "4"),
			modify:   nodeWith("n", "cpu", "1", "memory", "2", "ephemeral-storage", "5", "example.com/aaa", "6"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := haveAnyRequestedResourcesIncreased(tc.pod, tc.original, tc.modify, schedcore.DefaultFeatures); got != tc.want {
				t.Errorf("haveAnyRequestedResourcesIncreased = %v, want %v", got, tc.want)
			}
		})
	}
}
