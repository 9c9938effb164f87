package engine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore"
	schedruntime "github.com/kubectl-sched/kubectl-sched/schedcore/runtime"
)

// TestDefaultProfileFollowsTheWorkloadGates: without a configuration the
// engine's default profile is kube's under the options' gates. Gates off,
// pods naming PodGroups are plain pods; with GenericWorkload,
// GangScheduling holds members whose PodGroup is missing or whose gang
// has fewer members than minCount (kube's words), and a gang that has
// them is placed (pod by pod until the pod-group cycle exists).
func TestDefaultProfileFollowsTheWorkloadGates(t *testing.T) {
	gang := func(name string, minCount int32) *schedulingv1beta1.PodGroup {
		return &schedulingv1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: schedulingv1beta1.PodGroupSpec{SchedulingPolicy: schedulingv1beta1.PodGroupSchedulingPolicy{Gang: &schedulingv1beta1.GangSchedulingPolicy{MinCount: minCount}}}}
	}
	cluster := func() *snapshot.Cluster {
		return &snapshot.Cluster{
			Nodes: []*v1.Node{offlineNode("n1", "8")},
			Pods: []*v1.Pod{
				groupPod("ok-1", "ok", "", v1.DefaultSchedulerName),
				groupPod("ok-2", "ok", "", v1.DefaultSchedulerName),
				groupPod("short-1", "short", "", v1.DefaultSchedulerName),
				groupPod("orphan", "missing", "", v1.DefaultSchedulerName),
			},
			Workloads: snapshot.Workloads{PodGroups: []*schedulingv1beta1.PodGroup{gang("ok", 2), gang("short", 3)}},
		}
	}
	on := schedcore.DefaultFeatures
	on.GenericWorkload = true
	tas := on
	tas.TopologyAwareWorkloadScheduling = true
	placedAll := map[string]string{"ok-1": "placed", "ok-2": "placed", "short-1": "placed", "orphan": "placed"}
	gated := map[string]string{
		"ok-1": "placed", "ok-2": "placed",
		"short-1": "GangScheduling: waiting for minCount pods from a gang to appear in scheduling queue",
		"orphan":  `GangScheduling: waiting for pods's pod group "missing" to appear in scheduling queue`,
	}
	tests := []struct {
		name        string
		features    schedcore.Features
		wantPlugins map[string]bool
		want        map[string]string
	}{
		{"gates off", schedcore.DefaultFeatures, map[string]bool{"GangScheduling": false, "TopologyPlacementGenerator": false, "PodGroupPodsCount": false}, placedAll},
		{"GenericWorkload", on, map[string]bool{"GangScheduling": true, "TopologyPlacementGenerator": false, "PodGroupPodsCount": false}, gated},
		{"GenericWorkload and TopologyAwareWorkloadScheduling", tas, map[string]bool{"GangScheduling": true, "TopologyPlacementGenerator": true, "PodGroupPodsCount": true}, gated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			got := map[string]string{}
			obs := Observer{
				Placed: func(pod *v1.Pod, _ string, _ int, _ schedruntime.ScheduleResult) { got[pod.Name] = "placed" },
			}
			c, pending, err := NewOffline(ctx, cluster(), Options{Features: tc.features}, obs)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fw := c.Profiles.ByName[v1.DefaultSchedulerName]
			plugins := map[string]bool{}
			for n := range tc.wantPlugins {
				_, plugins[n] = fw.Plugin(n)
			}
			if diff := cmp.Diff(tc.wantPlugins, plugins); diff != "" {
				t.Errorf("default profile's plugins (-want +got):\n%s", diff)
			}
			c.Submit(pending...)
			if err := c.Run(ctx); err != nil {
				t.Fatal(err)
			}
			for _, p := range pending {
				if msg, pl := c.GatedBy(ctx, p); pl != "" {
					got[p.Name] = pl + ": " + msg
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("outcomes (-want +got):\n%s", diff)
			}
		})
	}
}
