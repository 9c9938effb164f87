package podgrouppodscount

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"

	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// The tables transcribe kube v1.37.2's podgroup_pods_count_test.go
// (the CompositePodGroup cases are left out with the gate).

type pgInfo struct{ pg *schedulingv1beta1.PodGroup }

func (i pgInfo) UnscheduledPods() []*v1.Pod { return nil }
func (i pgInfo) Key() schedcore.EntityKey {
	return schedcore.PodGroupKey(i.pg.Namespace, i.pg.Name)
}
func (i pgInfo) PodGroup() *schedulingv1beta1.PodGroup { return i.pg }

func TestScorePlacement(t *testing.T) {
	proposed := []schedcore.ProposedAssignment{
		{PodInfo: schedcore.NewPodInfo(schedtest.MakePod("proposed-pod-1").UID("proposed-pod-1").PodGroupName("root").Obj()), NodeName: "node1"},
		{PodInfo: schedcore.NewPodInfo(schedtest.MakePod("proposed-pod-2").UID("proposed-pod-2").PodGroupName("root").Obj()), NodeName: "node2"},
	}
	tests := []struct {
		name     string
		assigned []string // nodes of the bound members
		assumed  []string // nodes of the assumed members
		want     int64
	}{
		{"existing assigned and assumed pods", []string{"node2", "node3"}, []string{"node1"}, 5},
		{"no assumed pods", []string{"node1"}, nil, 3},
		{"no assigned pods", nil, []string{"node1"}, 3},
		{"no assigned pods, no assumed pods", nil, nil, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			group := schedtest.MakePodGroup("root").Obj()
			cache := schedcore.NewCache(schedcore.Features{GenericWorkload: true, TopologyAwareWorkloadScheduling: true})
			cache.AddPodGroup(group)
			for i, n := range tc.assigned {
				name := fmt.Sprintf("assigned-pod%d", i)
				if err := cache.AddPod(schedtest.MakePod(name).UID(name).Node(n).PodGroupName("root").Obj()); err != nil {
					t.Fatal(err)
				}
			}
			for i, n := range tc.assumed {
				name := fmt.Sprintf("assumed-pod%d", i)
				// A member is queued (known unscheduled) before it is assumed.
				cache.AddPodGroupMember(schedtest.MakePod(name).UID(name).PodGroupName("root").Obj())
				if err := cache.AssumePod(schedtest.MakePod(name).UID(name).Node(n).PodGroupName("root").Obj()); err != nil {
					t.Fatal(err)
				}
			}
			snap := schedcore.NewEmptySnapshot()
			cache.UpdateSnapshot(snap)
			p, err := New(context.Background(), nil, schedcore.NewHandle(snap, 1))
			if err != nil {
				t.Fatal(err)
			}
			got, st := p.(*PodGroupPodsCount).ScorePlacement(context.Background(), nil, pgInfo{group}, &schedcore.PodGroupAssignments{ProposedAssignments: proposed})
			if !st.IsSuccess() {
				t.Fatalf("ScorePlacement: %v", st)
			}
			if got != tc.want {
				t.Errorf("score = %d, want %d", got, tc.want)
			}
		})
	}
	t.Run("a group the snapshot does not know is the lister's error", func(t *testing.T) {
		p, _ := New(context.Background(), nil, schedcore.NewHandle(schedcore.NewEmptySnapshot(), 1))
		_, st := p.(*PodGroupPodsCount).ScorePlacement(context.Background(), nil, pgInfo{schedtest.MakePodGroup("root").Obj()}, &schedcore.PodGroupAssignments{})
		if st.Code() != schedcore.Error {
			t.Errorf("status = %v, want an Error", st)
		}
	})
}

func TestNormalizePlacementScore(t *testing.T) {
	scores := func(s ...int64) []schedcore.PlacementScore {
		out := make([]schedcore.PlacementScore, len(s))
		for i := range s {
			out[i].Score = s[i]
		}
		return out
	}
	tests := []struct {
		name    string
		scores  []schedcore.PlacementScore
		want    []schedcore.PlacementScore
		wantErr string
	}{
		// score * (MaxScore - MinScore) / maxCount, integer division.
		{name: "distinct scores", scores: scores(10, 50, 110), want: scores(9, 45, 100)},
		{name: "equal scores", scores: scores(50, 50), want: scores(100, 100)},
		{name: "single score", scores: scores(50), want: scores(100)},
		{name: "some minimal score that is far from a group of scores located closely", scores: scores(11, 100, 101, 102), want: scores(10, 98, 99, 100)},
		{name: "zero scores", scores: scores(0, 0), wantErr: "no pods from pod group are assigned to any of the candidate placements"},
	}
	pl := &PodGroupPodsCount{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := pl.NormalizePlacementScore(context.Background(), nil, pgInfo{schedtest.MakePodGroup("pg1").Obj()}, tc.scores)
			if tc.wantErr != "" {
				if st.Code() != schedcore.Error || st.Message() != tc.wantErr {
					t.Fatalf("status = %v, want Error %q", st, tc.wantErr)
				}
				return
			}
			if !st.IsSuccess() {
				t.Fatalf("NormalizePlacementScore: %v", st)
			}
			if diff := cmp.Diff(tc.want, tc.scores); diff != "" {
				t.Errorf("scores (-want +got):\n%s", diff)
			}
		})
	}
}
