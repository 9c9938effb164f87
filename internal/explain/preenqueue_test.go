package explain

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/internal/dryrun"
	"github.com/kubectl-sched/kubectl-sched/internal/engine"
	"github.com/kubectl-sched/kubectl-sched/internal/report"
	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	st "github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// gpuCluster is a GPU node (two devices of gpu.example.com) beside a node
// without devices, a ResourceClaimTemplate "one-gpu" in default, and pods.
func gpuCluster(pods []*v1.Pod, claims ...*resourceapi.ResourceClaim) *snapshot.Cluster {
	return &snapshot.Cluster{
		Nodes: []*v1.Node{node("cpu-node").Obj(), node("gpu-node").Obj()},
		Pods:  pods,
		DRA: snapshot.DRA{
			DeviceClasses: []*resourceapi.DeviceClass{{ObjectMeta: metav1.ObjectMeta{Name: "gpu.example.com"}}},
			ResourceSlices: []*resourceapi.ResourceSlice{{
				ObjectMeta: metav1.ObjectMeta{Name: "gpu-node-gpu.example.com"},
				Spec: resourceapi.ResourceSliceSpec{
					Driver: "gpu.example.com", NodeName: ptr("gpu-node"),
					Pool:    resourceapi.ResourcePool{Name: "gpu-node", ResourceSliceCount: 1},
					Devices: []resourceapi.Device{{Name: "gpu-0"}, {Name: "gpu-1"}},
				},
			}},
			ResourceClaimTemplates: []*resourceapi.ResourceClaimTemplate{{
				ObjectMeta: metav1.ObjectMeta{Name: "one-gpu", Namespace: "default"},
				Spec: resourceapi.ResourceClaimTemplateSpec{Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
					Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu.example.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}},
				}}},
			}},
			ResourceClaims: claims,
		},
	}
}

// myPod is kube's podWithClaimTemplate ("default/my-pod", pod claim
// "my-resource" from the template), its status naming claimName if set.
func myPod(claimName string) *v1.Pod {
	p := st.MakePod("my-pod").UID("1234").Obj()
	p.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "my-resource", ResourceClaimTemplateName: ptr("one-gpu")}}
	if claimName != "" {
		p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "my-resource", ResourceClaimName: ptr(claimName)}}
	}
	return p
}

// myClaim is the claim made for my-pod from the template, owned by owner.
func myClaim(owner types.UID) *resourceapi.ResourceClaim {
	return &resourceapi.ResourceClaim{
		ObjectMeta: metav1.ObjectMeta{
			Name: "my-pod-my-resource", Namespace: "default", UID: "claim-1",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "Pod", Name: "my-pod", UID: owner, Controller: ptr(true)}},
			Annotations:     map[string]string{resourceapi.PodResourceClaimAnnotation: "my-resource"},
		},
		Spec: resourceapi.ResourceClaimSpec{Devices: resourceapi.DeviceClaim{
			Requests: []resourceapi.DeviceRequest{{Name: "gpu", Exactly: &resourceapi.ExactDeviceRequest{DeviceClassName: "gpu.example.com", AllocationMode: resourceapi.DeviceAllocationModeExactCount, Count: 1}}},
		}},
	}
}

// A pod of a live cluster that a PreEnqueue plugin holds (kube's
// DynamicResources PreEnqueue cases "missing-claim", "deleted-claim",
// "wrong-claim"; SchedulingGates) gets no cycle in explain either, with the
// plugin and message the scheduler's queue holds it with: explain and the
// queue run the profile's PreEnqueue plugins through the same pass
// (Framework.RunPreEnqueuePluginsFrom).
func TestLiveExplainHoldsWhatTheQueueHolds(t *testing.T) {
	deleted := myClaim("1234")
	deleted.DeletionTimestamp = &metav1.Time{}
	gated := st.MakePod("gated").UID("g").SchedulingGates("example.com/wait").Obj()
	tests := []struct {
		name   string
		pod    *v1.Pod
		claims []*resourceapi.ResourceClaim
		// want is the PreEnqueue outcome, nil when the pod gets its cycle
		// (then it is placed on gpu-node).
		want *report.PreFilterOutcome
	}{
		{name: "missing-claim: the controller has not made the template's claim yet", pod: myPod(""),
			want: &report.PreFilterOutcome{Code: "UnschedulableAndUnresolvable", Plugin: "DynamicResources", Reason: `pod "default/my-pod": ResourceClaim not created yet`}},
		{name: "deleted-claim", pod: myPod("my-pod-my-resource"), claims: []*resourceapi.ResourceClaim{deleted},
			want: &report.PreFilterOutcome{Code: "UnschedulableAndUnresolvable", Plugin: "DynamicResources", Reason: `resourceclaim "my-pod-my-resource" is being deleted`}},
		{name: "wrong-claim", pod: myPod("my-pod-my-resource"), claims: []*resourceapi.ResourceClaim{myClaim("1234123")},
			want: &report.PreFilterOutcome{Code: "UnschedulableAndUnresolvable", Plugin: "DynamicResources", Reason: "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod (Pod is not owner)"}},
		{name: "scheduling gates", pod: gated,
			want: &report.PreFilterOutcome{Code: "UnschedulableAndUnresolvable", Plugin: "SchedulingGates", Reason: "waiting for scheduling gates: [example.com/wait]"}},
		{name: "the claim exists: the pod gets its cycle", pod: myPod("my-pod-my-resource"), claims: []*resourceapi.ResourceClaim{myClaim("1234")}},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := options(t)
			o.Source, o.Live = SourceCluster, true
			rep, err := Run(ctx, gpuCluster([]*v1.Pod{tc.pod}, tc.claims...), tc.pod, o)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, rep.PreEnqueue); diff != "" {
				t.Errorf("explain's PreEnqueue (-want +got):\n%s", diff)
			}
			if tc.want == nil && rep.Selected != "gpu-node" {
				t.Errorf("selected %q, want gpu-node", rep.Selected)
			}

			// The scheduler's queue, over the same state loaded the same way.
			c, pending, err := engine.NewOffline(ctx, gpuCluster([]*v1.Pod{tc.pod}, tc.claims...),
				engine.Options{Config: o.Config, Registry: o.Registry, ClaimsAsListed: true}, engine.Observer{})
			if err != nil {
				t.Fatal(err)
			}
			c.Submit(pending...)
			msg, plugin := c.GatedBy(ctx, tc.pod)
			c.Close()
			var queue *report.PreFilterOutcome
			if plugin != "" {
				queue = &report.PreFilterOutcome{Code: "UnschedulableAndUnresolvable", Plugin: plugin, Reason: msg}
			}
			if diff := cmp.Diff(tc.want, queue); diff != "" {
				t.Errorf("the queue's gate (-want +got):\n%s", diff)
			}
		})
	}
}

// A new pod from a file (-f) that uses a ResourceClaimTemplate gets its
// claims made as the resourceclaim controller would, by the function the
// dry-run uses, so it is judged (on a live cluster or a dump) where the
// same pod in the dump would be placed by the dry-run; nothing of it stays
// in the state.
func TestExplainFileMakesTheNewPodsTemplateClaims(t *testing.T) {
	ctx := context.Background()
	pod := myPod("")
	for _, live := range []bool{false, true} {
		name := "snapshot"
		if live {
			name = "live"
		}
		t.Run(name, func(t *testing.T) {
			o := options(t)
			o.Source, o.Live = SourceFile, live
			s, err := NewState(ctx, gpuCluster(nil), o)
			if err != nil {
				t.Fatal(err)
			}
			for round := 1; round <= 2; round++ {
				rep, err := s.Explain(ctx, pod)
				if err != nil {
					t.Fatal(err)
				}
				if rep.PreEnqueue != nil || rep.Selected != "gpu-node" {
					t.Fatalf("round %d: preEnqueue %+v, selected %q; want no gate, gpu-node", round, rep.PreEnqueue, rep.Selected)
				}
				if n := len(s.eng.DRA.Claims()); n != 0 {
					t.Errorf("round %d: %d claims left in the state after the explanation, want 0", round, n)
				}
			}
			if len(pod.Status.ResourceClaimStatuses) != 0 {
				t.Error("the explained pod was modified")
			}

			// dryrun -f: the same pod added to the cluster.
			dr, err := dryrun.Run(ctx, gpuCluster([]*v1.Pod{pod}), dryrun.Options{Config: o.Config, Registry: o.Registry})
			if err != nil {
				t.Fatal(err)
			}
			if len(dr.Placements) != 1 || dr.Placements[0].Node != "gpu-node" {
				t.Errorf("the dry-run: placements %+v, unschedulable %+v; want my-pod on gpu-node", dr.Placements, dr.Unschedulable)
			}
		})
	}
}

// The pending pods ahead of a pod are those the queue would give a cycle
// first: a pod its PreEnqueue plugins hold is not one of them. Live, a pod
// whose template claim the controller has not made yet is held, as a gated
// pod is; from a dump the claim is made as the controller would, and the
// pod counts.
func TestAheadLeavesOutWhatPreEnqueueHolds(t *testing.T) {
	ctx := context.Background()
	newPod := st.MakePod("new").UID("new").Obj()
	for _, tc := range []struct {
		name string
		live bool
		want int
	}{
		{name: "live: the pod without its claim is held", live: true, want: 1},
		{name: "a dump: its claim is made", live: false, want: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pending := []*v1.Pod{
				myPod(""),
				st.MakePod("gated").UID("g").SchedulingGates("example.com/wait").Obj(),
				st.MakePod("plain").UID("p").Obj(),
			}
			o := options(t)
			o.Source, o.Live = SourceFile, tc.live
			s, err := NewState(ctx, gpuCluster(pending), o)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := s.Explain(ctx, newPod)
			if err != nil {
				t.Fatal(err)
			}
			if rep.State != StateAsListed || rep.Ahead != tc.want {
				t.Errorf("state %q, ahead %d; want %q, %d", rep.State, rep.Ahead, StateAsListed, tc.want)
			}
		})
	}
}

// At its turn in a dry-run (--at-turn), the same holds: live, the
// cluster's template claims are as listed, so a pod whose claim the
// controller has not made yet is never attempted and the queue's gate says
// why, while a new pod from a file gets its claims made and is placed;
// from a dump, the missing claim is made and the pod placed.
func TestAtTurnHoldsWhatTheQueueHolds(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		live     bool
		source   string
		inDump   bool // the pod is the cluster's, not a new one
		wantNode string
		wantWhy  string // set when never attempted
	}{
		{name: "live: the cluster's pod without its claim is held", live: true, source: SourceCluster, inDump: true,
			wantWhy: `DynamicResources: pod "default/my-pod": ResourceClaim not created yet`},
		{name: "live: a new pod from a file gets its claim", live: true, source: SourceFile, wantNode: "gpu-node"},
		{name: "a dump: the missing claim is made", source: SourceCluster, inDump: true, wantNode: "gpu-node"},
		{name: "a dump: a new pod from a file gets its claim", source: SourceFile, wantNode: "gpu-node"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := options(t)
			o.Source, o.Live = tc.source, tc.live
			var pods []*v1.Pod
			if tc.inDump {
				pods = []*v1.Pod{myPod("")}
			}
			cl := gpuCluster(pods)
			rep, err := RunAtTurn(ctx, cl, myPod(""), o)
			if tc.wantWhy != "" {
				var never *NeverAttemptedError
				if !errors.As(err, &never) || never.Why != tc.wantWhy {
					t.Fatalf("err = %v, want never attempted because %q", err, tc.wantWhy)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rep.Turn == nil || rep.Turn.Node != tc.wantNode {
				t.Errorf("turn %+v, want placed on %s", rep.Turn, tc.wantNode)
			}
			if len(cl.DRA.ResourceClaims) != 0 {
				t.Errorf("the cluster gained %d claims, want none", len(cl.DRA.ResourceClaims))
			}
		})
	}
}
