package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

func groupPod(name, group, node, scheduler string) *v1.Pod {
	p := schedtest.MakePod(name).Namespace("ns").Node(node).Req("cpu", "1").Obj()
	p.Spec.SchedulingGroup = &v1.PodSchedulingGroup{PodGroupName: &group}
	p.Spec.SchedulerName = scheduler
	return p
}

// groupCounts says what a PodGroupManager knows of ns/NAME: the member
// counts and whether it has the PodGroup object, or the lister's error.
func groupCounts(m schedcore.PodGroupManager, name string) string {
	st, err := m.PodGroupStates().Get("ns", name)
	if err != nil {
		return err.Error()
	}
	var unscheduled []string
	for n := range st.UnscheduledPods() {
		unscheduled = append(unscheduled, n)
	}
	sort.Strings(unscheduled)
	_, err = m.PodGroups().Get("ns", name)
	return fmt.Sprintf("all=%d scheduled=%d unscheduled=%s object=%t", st.AllPodsCount(), st.ScheduledPodsCount(), strings.Join(unscheduled, ","), err == nil)
}

// TestOfflineFillsPodGroupStates: with GenericWorkload on, the dump's
// PodGroups and the members the engine's profiles schedule reach the
// cache (Handle.PodGroupManager) and, after UpdateSnapshot, the snapshot;
// arrivals and departures of pending members follow. Gate off: nothing.
func TestOfflineFillsPodGroupStates(t *testing.T) {
	cluster := func() *snapshot.Cluster {
		return &snapshot.Cluster{
			Nodes: []*v1.Node{offlineNode("n1", "4")},
			Pods: []*v1.Pod{
				groupPod("bound", "pg", "n1", v1.DefaultSchedulerName),
				groupPod("m1", "pg", "", v1.DefaultSchedulerName),
				groupPod("m2", "pg", "", v1.DefaultSchedulerName),
				// No profile schedules it: kube's handler never adds it.
				groupPod("other", "pg", "", "someone-else"),
				groupPod("orphan", "missing", "", v1.DefaultSchedulerName),
			},
			Workloads: snapshot.Workloads{PodGroups: []*schedulingv1beta1.PodGroup{
				{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "pg"}},
				{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "empty"}},
			}},
		}
	}
	on := schedcore.DefaultFeatures
	on.GenericWorkload = true
	tests := []struct {
		name     string
		features schedcore.Features
		change   func(c *Offline) error
		want     map[string]string // group → groupCounts, same from cache and snapshot
	}{
		{
			name:     "loaded",
			features: on,
			want: map[string]string{
				"pg":      "all=3 scheduled=1 unscheduled=m1,m2 object=true",
				"empty":   "all=0 scheduled=0 unscheduled= object=true",
				"missing": "all=1 scheduled=0 unscheduled=orphan object=false",
			},
		},
		{
			name:     "a member arrives, one leaves",
			features: on,
			change: func(c *Offline) error {
				c.Delete("ns", "m1")
				c.Delete("ns", "orphan")
				return c.Add(groupPod("m3", "pg", "", v1.DefaultSchedulerName))
			},
			want: map[string]string{
				"pg":      "all=3 scheduled=1 unscheduled=m2,m3 object=true",
				"missing": "pod group state not found for pod group ns/missing",
			},
		},
		{
			name: "gate off",
			want: map[string]string{
				"pg": "pod group state not found for pod group ns/pg",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _, err := NewOffline(context.Background(), cluster(), Options{Features: tt.features}, Observer{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.change != nil {
				if err := tt.change(c); err != nil {
					t.Fatal(err)
				}
			}
			h := c.Profiles.ByName[v1.DefaultSchedulerName].Handle()
			c.Cache.UpdateSnapshot(h.Snapshot())
			for group, want := range tt.want {
				if tt.features.GenericWorkload {
					if got := groupCounts(h.PodGroupManager(), group); got != want {
						t.Errorf("cache %s: got %q, want %q", group, got, want)
					}
				}
				if got := groupCounts(h.Snapshot(), group); got != want {
					t.Errorf("snapshot %s: got %q, want %q", group, got, want)
				}
			}
		})
	}
}
