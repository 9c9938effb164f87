package queue

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
)

func TestPodSchedulingPropertiesChange(t *testing.T) {
	base := pod("p").Req("cpu", "1", "memory", "1Gi").Label("app", "web").Obj()
	with := func(f func(p *v1.Pod)) *v1.Pod { p := base.DeepCopy(); f(p); return p }
	claim := "claim-1"
	tests := []struct {
		name        string
		oldPod      *v1.Pod
		newPod      *v1.Pod
		isTargetPod bool
		want        []schedcore.ClusterEvent
	}{
		{
			name:   "no change of interest is a plain UnscheduledPod/Update",
			oldPod: base, newPod: with(func(p *v1.Pod) { p.Annotations = map[string]string{"a": "b"} }),
			want: []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Update}},
		},
		{
			name:   "the pod being scheduled is the TargetPod",
			oldPod: base, newPod: with(func(p *v1.Pod) { p.Labels = nil }), isTargetPod: true,
			want: []schedcore.ClusterEvent{{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodLabel}},
		},
		{
			name:   "a pod on a node is an AssignedPod even as the target",
			oldPod: with(func(p *v1.Pod) { p.Spec.NodeName = "n" }), newPod: with(func(p *v1.Pod) { p.Spec.NodeName = "n"; p.Labels["x"] = "y" }), isTargetPod: true,
			want: []schedcore.ClusterEvent{{Resource: schedcore.AssignedPod, ActionType: schedcore.UpdatePodLabel}},
		},
		{
			name:   "lowering one request and raising another is both a scale down and a scale up",
			oldPod: base,
			newPod: with(func(p *v1.Pod) {
				p.Spec.Containers[0].Resources.Requests = v1.ResourceList{"cpu": base.Spec.Containers[0].Resources.Requests["memory"], "memory": base.Spec.Containers[0].Resources.Requests["cpu"]}
			}),
			want: []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.UpdatePodScaleDown}, {Resource: schedcore.UnscheduledPod, ActionType: schedcore.UpdatePodScaleUp}},
		},
		{
			name:   "removing a request is a scale down",
			oldPod: base, newPod: with(func(p *v1.Pod) { delete(p.Spec.Containers[0].Resources.Requests, "memory") }),
			want: []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.UpdatePodScaleDown}},
		},
		{
			name:   "removing every scheduling gate",
			oldPod: with(func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "a"}, {Name: "b"}} }),
			newPod: base, isTargetPod: true,
			want: []schedcore.ClusterEvent{{Resource: schedcore.TargetPod, ActionType: schedcore.UpdatePodSchedulingGatesEliminated}},
		},
		{
			name:   "removing one of two gates is not an elimination",
			oldPod: with(func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "a"}, {Name: "b"}} }),
			newPod: with(func(p *v1.Pod) { p.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "a"}} }),
			want:   []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Update}},
		},
		{
			name:   "adding a toleration",
			oldPod: base, newPod: with(func(p *v1.Pod) { p.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}} }),
			want: []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.UpdatePodToleration}},
		},
		{
			name:   "a generated resource claim appearing in the status",
			oldPod: base, newPod: with(func(p *v1.Pod) {
				p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &claim}}
			}),
			want: []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.UpdatePodGeneratedResourceClaim}},
		},
		{
			name: "the same claim statuses are no change",
			oldPod: with(func(p *v1.Pod) {
				p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &claim}}
			}),
			newPod: with(func(p *v1.Pod) {
				p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: new("claim-1")}}
			}),
			want: []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Update}},
		},
		{
			name: "a claim name changing is a generated claim change",
			oldPod: with(func(p *v1.Pod) {
				p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: &claim}}
			}),
			newPod: with(func(p *v1.Pod) {
				p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: new("claim-2")}}
			}),
			want: []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.UpdatePodGeneratedResourceClaim}},
		},
		{
			name:   "an extended resource claim status appearing",
			oldPod: base, newPod: with(func(p *v1.Pod) {
				p.Status.ExtendedResourceClaimStatus = &v1.PodExtendedResourceClaimStatus{ResourceClaimName: "ext"}
			}),
			want: []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.UpdatePodGeneratedResourceClaim}},
		},
		{
			name:   "labels and tolerations at once, in kube's order",
			oldPod: base, newPod: with(func(p *v1.Pod) {
				p.Labels = map[string]string{"app": "db"}
				p.Spec.Tolerations = []v1.Toleration{{Key: "k", Operator: v1.TolerationOpExists}}
			}),
			want: []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.UpdatePodLabel}, {Resource: schedcore.UnscheduledPod, ActionType: schedcore.UpdatePodToleration}},
		},
		{
			name:   "nil and empty labels are the same",
			oldPod: with(func(p *v1.Pod) { p.Labels = nil }), newPod: with(func(p *v1.Pod) { p.Labels = map[string]string{} }),
			want: []schedcore.ClusterEvent{{Resource: schedcore.UnscheduledPod, ActionType: schedcore.Update}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PodSchedulingPropertiesChange(tt.newPod, tt.oldPod, tt.isTargetPod, schedcore.DefaultFeatures)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}

func TestMatchClusterEvents(t *testing.T) {
	tests := []struct {
		name         string
		registered   schedcore.ClusterEvent
		incoming     schedcore.ClusterEvent
		wantMatching bool
	}{
		{name: "the same event matches", registered: nodeAdd, incoming: nodeAdd, wantMatching: true},
		{name: "a specific update matches a general Update registration", registered: nodeUpdate, incoming: nodeLabel, wantMatching: true},
		{name: "a general Update does not match a specific registration", registered: nodeLabel, incoming: nodeUpdate},
		{name: "another action does not match", registered: nodeAdd, incoming: schedcore.ClusterEvent{Resource: schedcore.Node, ActionType: schedcore.Delete}},
		{name: "another resource does not match", registered: nodeAdd, incoming: assignedAdd},
		{name: "a Pod registration covers assigned pods", registered: schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.Add}, incoming: assignedAdd, wantMatching: true},
		{name: "a wildcard registration matches everything", registered: schedcore.ClusterEvent{Resource: schedcore.WildCard, ActionType: schedcore.All}, incoming: schedcore.EventUnschedulableTimeout, wantMatching: true},
		{name: "a wildcard incoming event matches no specific registration", registered: nodeAdd, incoming: schedcore.EventForceActivate},
		{name: "a resource wildcard with an action matches that action anywhere", registered: schedcore.ClusterEvent{Resource: schedcore.WildCard, ActionType: schedcore.Add}, incoming: nodeAdd, wantMatching: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matchClusterEvents(tt.registered, tt.incoming); got != tt.wantMatching {
				t.Errorf("matchClusterEvents(%v, %v) = %v", tt.registered, tt.incoming, got)
			}
		})
	}
}

func TestBuildHintMapUnrollsPodEvents(t *testing.T) {
	fw := newFramework(t, []*filterPlugin{
		{name: "X", events: []schedcore.ClusterEventWithHint{withHint(schedcore.ClusterEvent{Resource: schedcore.Pod, ActionType: schedcore.Delete}, nil), withHint(nodeAdd, nil)}},
		{name: "Y", events: []schedcore.ClusterEventWithHint{withHint(nodeAdd, nil)}},
		{name: "Z"},
	})
	m, err := buildHintMap(t.Context(), fw)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, h := range m {
		for _, fn := range h.fns {
			got[h.event.Label()] = append(got[h.event.Label()], fn.plugin)
		}
	}
	want := map[string][]string{
		"AssignedPodDelete": {"X"}, "UnscheduledPodDelete": {"X"}, "TargetPodDelete": {"X"},
		"NodeAdd": {"X", "Y"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}
