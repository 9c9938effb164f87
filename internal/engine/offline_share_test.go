package engine

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kubectl-sched/kubectl-sched/internal/snapshot"
	"github.com/kubectl-sched/kubectl-sched/schedcore/schedtest"
)

// TestAddLeavesTheCallersPodAsItWas: Add keeps the caller's maps, slices
// and pointers (the cluster's pod is a copy of the top-level fields), so
// nothing the engine then does to its pod (binding, a nomination, a
// preemption, template claims named in the status, an update, a
// departure) may write into them. Each row takes those paths (the events
// say so) and compares every pod given to Add with a deep copy taken
// before. An update in place of a shared slice (the template claim row's
// stale claim status, rewritten by TemplateClaims) fails it.
func TestAddLeavesTheCallersPodAsItWas(t *testing.T) {
	// rich gives a pod maps, slices and pointers of every kind to share.
	rich := func(w *schedtest.PodWrapper) *v1.Pod {
		p := w.Label("app", "web").Toleration("dedicated", v1.TolerationOpEqual, "web", v1.TaintEffectNoSchedule).
			PreferredNodeAffinityIn(1, v1.LabelHostname, "n1", "gpu-node").Obj()
		p.Annotations = map[string]string{"note": "kept"}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-1", Controller: ptr.To(true)}}
		p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: v1.PodReasonUnschedulable}}
		return p
	}
	oneNode := func() *snapshot.Cluster {
		return &snapshot.Cluster{Nodes: []*v1.Node{offlineNode("n1", "2")}}
	}
	tests := []struct {
		name string
		cl   func() *snapshot.Cluster
		pods []*v1.Pod
		// then runs after the pods were added and Run: more changes, then
		// Run again.
		then func(t *testing.T, c *Offline)
		want []string
		// claimed: the cluster's pod is TemplateClaims' deep copy, its
		// claims named in its status.
		claimed bool
	}{
		{
			name: "bound, then preempted by a nominated pod",
			cl:   oneNode,
			pods: []*v1.Pod{
				rich(schedtest.MakePod("low").Namespace("ns").Node("n1").Priority(0).Req("cpu", "2")),
				rich(schedtest.MakePod("high").Namespace("ns").Priority(100).Req("cpu", "2")),
			},
			want: []string{
				"failed high: 0/1 nodes are available: 1 Insufficient cpu. preemption: found a potential placement for pod on node n1, preempting 1 victims",
				"placed high on n1",
			},
		},
		{
			name: "template claim over a stale claim status, then departed",
			cl:   draCluster,
			pods: func() []*v1.Pod {
				p := gpuPod("a")
				p.Labels = map[string]string{"app": "train"}
				p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To("a-gpu-gone")}}
				return []*v1.Pod{p}
			}(),
			then: func(t *testing.T, c *Offline) {
				a, _ := c.Pod("ml", "a")
				if devs := c.Devices(a); len(devs) != 1 || devs[0].Device != "gpu-0" {
					t.Fatalf("devices of a: %+v, want gpu-0 through a new template claim", devs)
				}
				c.Delete("ml", "a")
			},
			want:    []string{"placed a on gpu-node"},
			claimed: true,
		},
		{
			name: "pending, updated, then bound and departed",
			cl:   oneNode,
			pods: []*v1.Pod{rich(schedtest.MakePod("big").Namespace("ns").Req("cpu", "4"))},
			then: func(t *testing.T, c *Offline) {
				cur, _ := c.Pod("ns", "big")
				upd := cur.DeepCopy()
				upd.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1")}
				if err := c.UpdatePending(upd); err != nil {
					t.Fatal(err)
				}
				if err := c.Run(context.Background()); err != nil {
					t.Fatal(err)
				}
				c.Delete("ns", "big")
			},
			want: []string{
				"failed big: 0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
				"placed big on n1",
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			j := &journal{}
			c, _, err := NewOffline(ctx, tc.cl(), Options{}, j.observer())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			before := make([]*v1.Pod, len(tc.pods))
			for i, p := range tc.pods {
				before[i] = p.DeepCopy()
				if err := c.Add(p); err != nil {
					t.Fatal(err)
				}
				// Shared, not copied: the memory Add saves.
				if cur, _ := c.Pod(p.Namespace, p.Name); !tc.claimed && &cur.Spec.Containers[0] != &p.Spec.Containers[0] {
					t.Errorf("pod %s: the cluster's containers are a copy of the caller's", p.Name)
				}
			}
			if err := c.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if tc.then != nil {
				tc.then(t, c)
			}
			if d := cmp.Diff(tc.want, j.events); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
			for i, p := range tc.pods {
				if d := cmp.Diff(before[i], p); d != "" {
					t.Errorf("pod %s changed through the cluster's copy (-before +after):\n%s", p.Name, d)
				}
			}
		})
	}
}
