package gangscheduling

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// The tables transcribe kube v1.37.2's gangscheduling_test.go, its cases
// without CompositePodGroup ("CPG=false"; the CompositePodGroup cases are
// left out with the gate).

var (
	member = func(name, ns, group string) *v1.Pod {
		return schedtest.MakePod(name).Namespace(ns).UID(name).PodGroupName(group).Obj()
	}
	pg = func(ns, name string) *schedtest.PodGroupWrapper { return schedtest.MakePodGroup(name).Namespace(ns) }
)

func hintOf(t *testing.T, fn schedcore.QueueingHintFn, pod *v1.Pod, oldObj, newObj any) schedcore.QueueingHint {
	t.Helper()
	h, err := fn(logr.Discard(), pod, oldObj, newObj)
	if err != nil {
		t.Fatalf("unexpected error: %v", err)
	}
	return h
}

func TestIsSchedulableAfterPodAdded(t *testing.T) {
	tests := []struct {
		name   string
		pod    *v1.Pod
		newPod *v1.Pod
		want   schedcore.QueueingHint
	}{
		{"add a newPod which matches the pod's scheduling group", member("p", "default", "pg"), member("q", "default", "pg"), schedcore.Queue},
		{"add a newPod with NodeName set which matches the pod's scheduling group", member("p", "default", "pg"), schedtest.MakePod("q").PodGroupName("pg").Node("node1").Obj(), schedcore.Queue},
		{"add a newPod which doesn't match the pod's namespace", member("p", "default", "pg"), member("q", "foo", "pg"), schedcore.QueueSkip},
		{"add a newPod which doesn't match the pod's pod group name", member("p", "default", "pg1"), member("q", "default", "pg2"), schedcore.QueueSkip},
		{"add a newPod which belongs to a different scheduling group (that shares a root CPG)", member("p1", "default", "pg1"), member("p2", "default", "pg2"), schedcore.QueueSkip},
		{"add a newPod in no group", member("p", "default", "pg"), schedtest.MakePod("q").Obj(), schedcore.QueueSkip},
		{"a pod in no group is skipped", schedtest.MakePod("p").Obj(), member("q", "default", "pg"), schedcore.QueueSkip},
	}
	pl := &GangScheduling{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, hintOf(t, pl.isSchedulableAfterPodAdded, tc.pod, nil, tc.newPod)); diff != "" {
				t.Errorf("hint (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsSchedulableAfterPodGroupAdded(t *testing.T) {
	tests := []struct {
		name string
		pod  *v1.Pod
		pg   *schedulingv1beta1.PodGroup
		want schedcore.QueueingHint
	}{
		{"add a pod group which matches the pod's pod group name", member("p", "default", "pg"), pg("default", "pg").MinCount(1).Obj(), schedcore.Queue},
		{"add a pod group which doesn't match the pod's scheduling group name", member("p", "default", "pg1"), pg("default", "pg2").MinCount(1).Obj(), schedcore.QueueSkip},
		{"add a pod group which doesn't match the pod's scheduling group namespace", member("p", "ns1", "pg"), pg("ns2", "pg").MinCount(1).Obj(), schedcore.QueueSkip},
		{"a pod in no group is skipped", schedtest.MakePod("p").Obj(), pg("default", "pg").MinCount(1).Obj(), schedcore.QueueSkip},
	}
	pl := &GangScheduling{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, hintOf(t, pl.isSchedulableAfterPodGroupAdded, tc.pod, nil, tc.pg)); diff != "" {
				t.Errorf("hint (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIsSchedulableAfterPodGroupUpdated(t *testing.T) {
	tests := []struct {
		name     string
		pod      *v1.Pod
		old, new *schedulingv1beta1.PodGroup
		want     schedcore.QueueingHint
	}{
		{"minCount decreased matches target pod", member("p", "ns1", "pg"), pg("ns1", "pg").MinCount(4).Obj(), pg("ns1", "pg").MinCount(3).Obj(), schedcore.Queue},
		{"update Basic policy", member("p", "ns1", "pg"), pg("ns1", "pg").BasicPolicy().Obj(), pg("ns1", "pg").BasicPolicy().Obj(), schedcore.QueueSkip},
		{"minCount increased matches target pod", member("p", "ns1", "pg"), pg("ns1", "pg").MinCount(3).Obj(), pg("ns1", "pg").MinCount(4).Obj(), schedcore.QueueSkip},
		{"minCount unchanged matches target pod", member("p", "ns1", "pg"), pg("ns1", "pg").MinCount(3).Obj(), pg("ns1", "pg").MinCount(3).Obj(), schedcore.QueueSkip},
		{"minCount decreased but pod group name doesn't match target pod", member("p", "ns1", "pg-other"), pg("ns1", "pg").MinCount(4).Obj(), pg("ns1", "pg").MinCount(3).Obj(), schedcore.QueueSkip},
		{"minCount decreased but pod group namespace doesn't match target pod", member("p", "ns-other", "pg"), pg("ns1", "pg").MinCount(4).Obj(), pg("ns1", "pg").MinCount(3).Obj(), schedcore.QueueSkip},
		{"pod without a scheduling group is skipped", schedtest.MakePod("p").Namespace("ns1").Obj(), pg("ns1", "pg").MinCount(4).Obj(), pg("ns1", "pg").MinCount(3).Obj(), schedcore.QueueSkip},
	}
	pl := &GangScheduling{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, hintOf(t, pl.isSchedulableAfterPodGroupUpdated, tc.pod, tc.old, tc.new)); diff != "" {
				t.Errorf("hint (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("a wrong object type is an error with Queue", func(t *testing.T) {
		h, err := pl.isSchedulableAfterPodGroupUpdated(logr.Discard(), member("p", "ns1", "pg"), "x", "y")
		if err == nil || h != schedcore.Queue {
			t.Errorf("got %v, %v; want Queue and an error", h, err)
		}
	})
}

// activator records Activate (the handle's queue).
type activator struct {
	schedcore.SchedulingQueue
	activated []string
}

func (a *activator) Activate(_ logr.Logger, pods map[string]*v1.Pod) {
	for _, p := range pods {
		a.activated = append(a.activated, p.Name)
	}
}

// waiting is a pod waiting at Permit that records who allowed it.
type waiting struct {
	schedcore.WaitingPod
	allowedBy []string
}

func (w *waiting) Allow(plugin string) { w.allowedBy = append(w.allowedBy, plugin) }

// waitingPods is the framework's waiting-pods map as the handle reads it.
type waitingPods struct {
	schedcore.Framework
	m map[types.UID]*waiting
}

func (f *waitingPods) GetWaitingPod(uid types.UID) schedcore.WaitingPod {
	if w, ok := f.m[uid]; ok {
		return w
	}
	return nil
}

func TestGangSchedulingFlow(t *testing.T) {
	gang1 := pg("ns1", "pg1").MinCount(3).Obj()
	gang2 := pg("ns1", "pg2").MinCount(4).Obj()
	basic := pg("ns1", "pg3").BasicPolicy().Obj()
	p1, p2, p3 := member("p1", "ns1", "pg1"), member("p2", "ns1", "pg1"), member("p3", "ns1", "pg1")
	p4, p5 := member("p4", "ns1", "pg2"), member("p5", "ns1", "pg2")
	basicPod := member("basic-pod", "ns1", "pg3")
	nonGang := schedtest.MakePod("non-gang").Namespace("ns1").UID("non-gang").Obj()

	tests := []struct {
		name                string
		pod                 *v1.Pod
		initialPods         []*v1.Pod
		podGroups           []*schedulingv1beta1.PodGroup
		podsWaitingOnPermit []*v1.Pod
		wantPreEnqueue      *schedcore.Status
		wantPermit          *schedcore.Status
		wantTimeout         time.Duration
		wantActivated       []string
		wantAllowed         []string
	}{
		{
			name:      "non-gang pod succeeds immediately",
			pod:       nonGang,
			podGroups: []*schedulingv1beta1.PodGroup{gang1, gang2, basic},
		},
		{
			name:      "basic policy pod succeeds immediately",
			pod:       basicPod,
			podGroups: []*schedulingv1beta1.PodGroup{gang1, gang2, basic},
		},
		{
			name:           "gang pod fails PreEnqueue when pod group is not yet created",
			pod:            p1,
			initialPods:    []*v1.Pod{p2, p3, p4, p5},
			wantPreEnqueue: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, `waiting for pods's pod group "pg1" to appear in scheduling queue`),
		},
		{
			name:           "gang pod fails PreEnqueue when quorum is not met",
			pod:            p1,
			initialPods:    []*v1.Pod{p2, p4, p5},
			podGroups:      []*schedulingv1beta1.PodGroup{gang1, gang2},
			wantPreEnqueue: schedcore.NewStatus(schedcore.UnschedulableAndUnresolvable, "waiting for minCount pods from a gang to appear in scheduling queue"),
		},
		{
			name:                "gang pod passes PreEnqueue, but waits at Permit",
			pod:                 p1,
			initialPods:         []*v1.Pod{p2, p3, p4, p5},
			podGroups:           []*schedulingv1beta1.PodGroup{gang1, gang2},
			podsWaitingOnPermit: []*v1.Pod{p2, p4, p5},
			wantPermit:          schedcore.NewStatus(schedcore.Wait, "waiting for minCount pods from a gang to be scheduled"),
			wantTimeout:         5 * time.Minute,
			wantActivated:       []string{"p3"},
		},
		{
			name:                "final gang pod arrives at Permit and allows all waiting pods from a gang",
			pod:                 p1,
			initialPods:         []*v1.Pod{p2, p3, p4, p5},
			podGroups:           []*schedulingv1beta1.PodGroup{gang1, gang2},
			podsWaitingOnPermit: []*v1.Pod{p2, p3, p4, p5},
			wantAllowed:         []string{"p1", "p2", "p3"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cache := schedcore.NewCache(schedcore.Features{GenericWorkload: true})
			snap := schedcore.NewEmptySnapshot()
			q := &activator{}
			fw := &waitingPods{m: map[types.UID]*waiting{}}
			h := schedcore.NewHandle(snap, 1, schedcore.WithFeatures(schedcore.Features{GenericWorkload: true}), schedcore.WithPodGroupManager(cache))
			h.SetQueue(q)
			h.SetFramework(fw)
			for _, g := range tc.podGroups {
				cache.AddPodGroup(g)
			}
			for _, p := range tc.initialPods {
				cache.AddPodGroupMember(p)
			}
			cache.AddPodGroupMember(tc.pod)
			p, err := New(ctx, nil, h)
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*GangScheduling)

			got := pl.PreEnqueue(ctx, tc.pod)
			if diff := statusDiff(tc.wantPreEnqueue, got); diff != "" {
				t.Fatalf("PreEnqueue (-want +got):\n%s", diff)
			}
			if !got.IsSuccess() {
				return
			}
			cache.UpdateSnapshot(snap)

			// Other members have reached Permit and wait there.
			for _, w := range tc.podsWaitingOnPermit {
				pod := w.DeepCopy()
				pod.Spec.NodeName = "some-node"
				if err := cache.AssumePod(pod); err != nil {
					t.Fatalf("assuming %s: %v", pod.Name, err)
				}
				st, _ := pl.Permit(ctx, schedcore.NewCycleState(), pod, "some-node")
				if st.Code() != schedcore.Wait {
					t.Fatalf("Permit of waiting pod %s = %v, want Wait", pod.Name, st)
				}
				fw.m[pod.UID] = &waiting{}
			}
			q.activated = nil

			pod := tc.pod.DeepCopy()
			pod.Spec.NodeName = "some-node"
			if err := cache.AssumePod(pod); err != nil {
				t.Fatalf("assuming %s: %v", pod.Name, err)
			}
			cache.UpdateSnapshot(snap)
			gotPermit, timeout := pl.Permit(ctx, schedcore.NewCycleState(), pod, "some-node")
			if diff := statusDiff(tc.wantPermit, gotPermit); diff != "" {
				t.Fatalf("Permit (-want +got):\n%s", diff)
			}
			if timeout != tc.wantTimeout {
				t.Errorf("Permit timeout = %v, want %v", timeout, tc.wantTimeout)
			}
			if diff := cmp.Diff(tc.wantActivated, q.activated); diff != "" {
				t.Errorf("activated (-want +got):\n%s", diff)
			}
			var allowed []string
			for uid, w := range fw.m {
				if len(w.allowedBy) > 0 {
					allowed = append(allowed, string(uid))
					if diff := cmp.Diff([]string{Name}, w.allowedBy); diff != "" {
						t.Errorf("%s allowed by (-want +got):\n%s", uid, diff)
					}
				}
			}
			sort.Strings(allowed)
			// The member at Permit itself is allowed by returning Success;
			// only the others are in the waiting map.
			want := []string{}
			for _, n := range tc.wantAllowed {
				if n != tc.pod.Name {
					want = append(want, n)
				}
			}
			if len(tc.wantAllowed) == 0 {
				want = nil
			}
			if diff := cmp.Diff(want, allowed); diff != "" {
				t.Errorf("allowed waiting pods (-want +got):\n%s", diff)
			}
		})
	}
}

func statusDiff(want, got *schedcore.Status) string {
	type view struct{ Code, Message, Plugin string }
	v := func(s *schedcore.Status) view { return view{s.Code().String(), s.Message(), s.Plugin()} }
	return cmp.Diff(v(want), v(got))
}

// pgInfo is a PodGroupInfo over a PodGroup.
type pgInfo struct{ pg *schedulingv1beta1.PodGroup }

func (i pgInfo) UnscheduledPods() []*v1.Pod { return nil }
func (i pgInfo) Key() schedcore.EntityKey {
	return schedcore.PodGroupKey(i.pg.Namespace, i.pg.Name)
}
func (i pgInfo) PodGroup() *schedulingv1beta1.PodGroup { return i.pg }

func TestPlacementFeasible(t *testing.T) {
	S, W, U := schedcore.Success, schedcore.Wait, schedcore.Unschedulable
	tests := []struct {
		name             string
		minCount         int32 // 0: basic
		childrenCount    int
		podStatuses      []schedcore.Code
		want             []schedcore.Code
		initialScheduled int
	}{
		{"All pods succeed, minCount met at end", 2, 2, []schedcore.Code{S, S}, []schedcore.Code{W, S}, 0},
		{"First pod fails, minCount not satisfiable", 3, 3, []schedcore.Code{U}, []schedcore.Code{U}, 0},
		{"Second pod fails, minCount not satisfiable", 2, 2, []schedcore.Code{S, U}, []schedcore.Code{W, U}, 0},
		{"Non-gang pod group with 0 scheduled pods fails", 0, 1, []schedcore.Code{U}, []schedcore.Code{U}, 0},
		{"Non-gang pod group with succeeds once 1 pod is scheduled", 0, 1, []schedcore.Code{S}, []schedcore.Code{S}, 0},
		{"Non-gang pod group with 1 initially scheduled pod succeeds", 0, 1, []schedcore.Code{U}, []schedcore.Code{S}, 1},
		{"More than minCount pods, all succeed", 2, 3, []schedcore.Code{S, S, S}, []schedcore.Code{W, S, S}, 0},
		{"More than minCount pods, first fails", 2, 3, []schedcore.Code{U, S, S}, []schedcore.Code{W, W, S}, 0},
		{"More than minCount pods, minCount not satisfiable", 2, 3, []schedcore.Code{U, U}, []schedcore.Code{W, U}, 0},
		{"1 pod scheduled, 2 unscheduled pods succeed, minCount 3 met", 3, 2, []schedcore.Code{S, S}, []schedcore.Code{W, S}, 1},
		{"minCount already met by scheduled pods", 2, 1, []schedcore.Code{U}, []schedcore.Code{S}, 2},
		{"1 pod scheduled, minCount 3, first unscheduled fails, not enough remaining", 3, 2, []schedcore.Code{U}, []schedcore.Code{U}, 1},
		{"1 pod scheduled, minCount 4, first unscheduled succeeds, not enough remaining", 4, 2, []schedcore.Code{S}, []schedcore.Code{U}, 1},
	}
	pl := &GangScheduling{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := pg("default", "test-pg").BasicPolicy()
			if tc.minCount > 0 {
				g.MinCount(tc.minCount)
			}
			info := pgInfo{g.Obj()}
			state := schedcore.NewCycleState()
			state.SetPodGroupSchedulingCycle(state)
			scheduled := tc.initialScheduled
			for i, code := range tc.podStatuses {
				if code == schedcore.Success {
					scheduled++
				}
				got := pl.PlacementFeasible(context.Background(), state, info, schedcore.PlacementProgress{Remaining: tc.childrenCount - (i + 1), Scheduled: scheduled})
				if got.Code() != tc.want[i] {
					t.Errorf("step %d: status %v, want %v", i, got, tc.want[i])
				}
			}
		})
	}
	t.Run("messages", func(t *testing.T) {
		info := pgInfo{pg("default", "pg").MinCount(3).Obj()}
		got := []*schedcore.Status{
			pl.PlacementFeasible(context.Background(), nil, info, schedcore.PlacementProgress{Remaining: 1, Scheduled: 1}),
			pl.PlacementFeasible(context.Background(), nil, info, schedcore.PlacementProgress{Remaining: 1, Scheduled: 2}),
			pl.PlacementFeasible(context.Background(), nil, info, schedcore.PlacementProgress{Remaining: 0, Scheduled: 3}),
		}
		want := []*schedcore.Status{
			schedcore.NewStatus(schedcore.Unschedulable, "minCount (3) cannot be satisfied: 1 scheduled, 1 remaining"),
			schedcore.NewStatus(schedcore.Wait, "minCount (3) is not yet satisfied: 2 scheduled, 1 remaining"),
			nil,
		}
		for i := range want {
			if diff := statusDiff(want[i], got[i]); diff != "" {
				t.Errorf("%d (-want +got):\n%s", i, diff)
			}
		}
	})
}
